// The seed's typed window operators are instantiations of the one engine.
#include <gtest/gtest.h>

#include <type_traits>

#include "clink/windows/window_operators.hpp"
#include "window_test_support.hpp"

namespace clink::test {
namespace {
using V = std::vector<std::string>;
using In = std::pair<std::string, std::int64_t>;
using Out = WindowResult<std::string, std::int64_t>;

static_assert(std::is_same_v<TumblingWindowOperator<std::string, std::int64_t, std::int64_t>,
                             SessionWindowOperator<std::string, std::int64_t, std::int64_t>>);

std::shared_ptr<ProbeLog> run(std::function<std::unique_ptr<StreamOperator>()> make, std::vector<std::pair<In, EventTime>> in) {
  StreamExecutionEnvironment env;
  auto src = scripted<In>(env, [in](ScriptedSource<In>& s) { s.records(in); });
  DataStream<In> keyed_in = src.key_by(PairKeyFn{}).stream();
  auto out = keyed_in.then<Out>("window", "Window", make);
  auto log = probe(out, false);
  env.execute();
  return log;
}

std::int64_t plus(std::int64_t a, const std::int64_t& b) { return a + b; }
std::int64_t merge(std::int64_t a, std::int64_t b) { return a + b; }
std::int64_t zero() { return 0; }

TEST(TypedWindowOperators, Tumbling) {
  auto log = run([] { return make_tumbling_window_operator<std::string, std::int64_t, std::int64_t>(1000, zero, plus); },
                 {{{"a", 1}, 100}, {{"a", 2}, 900}, {{"a", 4}, 1000}});
  EXPECT_EQ(log->get(), (V{"(a,[0,1000),3,ON_TIME#0 first last)@999", "(a,[1000,2000),4,ON_TIME#0 first last)@1999"}));
}

TEST(TypedWindowOperators, SlidingWithAndWithoutMerger) {
  const V want = {"(a,[-500,500),1,ON_TIME#0 first last)@499", "(a,[0,1000),3,ON_TIME#0 first last)@999",
                  "(a,[500,1500),2,ON_TIME#0 first last)@1499"};
  std::vector<std::pair<In, EventTime>> in = {{{"a", 1}, 100}, {{"a", 2}, 900}};
  EXPECT_EQ(run([] { return make_sliding_window_operator<std::string, std::int64_t, std::int64_t>(1000, 500, zero, plus, merge); },
                in)->get(),
            want);
  EXPECT_EQ(run([] { return make_sliding_window_operator<std::string, std::int64_t, std::int64_t>(1000, 500, zero, plus); },
                in)->get(),
            want);
}

TEST(TypedWindowOperators, Session) {
  auto log = run([] { return make_session_window_operator<std::string, std::int64_t, std::int64_t>(500, zero, plus, merge); },
                 {{{"a", 1}, 100}, {{"a", 2}, 900}, {{"a", 4}, 500}});
  EXPECT_EQ(log->get(), (V{"(a,[100,1400),7,ON_TIME#0 first last)@1399"}));
}

TEST(TypedWindowOperators, EvictingTumbling) {
  StreamExecutionEnvironment env;
  auto src = scripted<In>(env, [](ScriptedSource<In>& s) { s.records({{{"a", 1}, 100}, {{"a", 2}, 200}, {{"a", 3}, 300}}); });
  DataStream<In> keyed_in = src.key_by(PairKeyFn{}).stream();
  auto out = keyed_in.then<std::string>("window", "Window", [] {
    return make_evicting_tumbling_window_operator<std::string, std::int64_t, std::string>(
        1000, make_evictor<In>(CountEvictor::of(2)),
        [](const std::string& k, const TimeWindow& w, const std::vector<std::int64_t>& vs, Collector<std::string>& o) {
          std::string s = k + " " + std::to_string(w.start) + ":";
          for (auto v : vs) s += " " + std::to_string(v);
          o.collect(s);
        });
  });
  auto log = probe(out, false);
  env.execute();
  EXPECT_EQ(log->get(), (V{"a 0: 2 3@999"}));
}

}  // namespace
}  // namespace clink::test
