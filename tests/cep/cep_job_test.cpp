// CEP in executed jobs: cep::pattern on keyed streams at parallelism 1 and 2, the
// non-keyed form, select / flat_select / process, timed-out and late side outputs.
#include <gtest/gtest.h>

#include "cep_job_support.hpp"
#include "clink/connectors/collect_sink.hpp"

namespace clink::test {

using namespace clink::cep;

namespace {

using Strings = std::vector<std::string>;

Strings sorted_values(const std::shared_ptr<CollectSink<std::string>>& sink) { return sorted_copy(sink->values()); }

// Keys 0..3: a@1 x@2 b@3 per key, with the b of odd keys arriving before their a.
Script keyed_script() {
  Script s(2);
  for (std::int64_t k = 0; k < 4; ++k) {
    if (k % 2) s[0].records.push_back({kev(k, 30 + static_cast<int>(k), "b"), 3});
    s[0].records.push_back({kev(k, 10 + static_cast<int>(k), "a"), 1});
    s[0].records.push_back({kev(k, 20 + static_cast<int>(k), "x"), 2});
    if (!(k % 2)) s[1].records.push_back({kev(k, 30 + static_cast<int>(k), "b"), 3});
  }
  s[0].watermark = 0;
  s[1].watermark = 10;
  return s;
}

Strings run_keyed(int parallelism) {
  StreamExecutionEnvironment env;
  env.set_parallelism(parallelism);
  auto sink = std::make_shared<CollectSink<std::string>>();
  auto src = script_source(env, keyed_script(), std::make_shared<Control>());
  pattern(src.key_by([](const Event& e) { return e.key; }),
          Pattern<Event>::begin("a").where(named("a")).followed_by("b").where(named("b")))
      .process(KeyedRender{})
      .sink_to(sink);
  env.execute();
  return sorted_values(sink);
}

TEST(CepJob, KeyedPatternAtParallelismOneAndTwo) {
  const Strings expected{"k0 a:10 b:30@3", "k1 a:11 b:31@3", "k2 a:12 b:32@3", "k3 a:13 b:33@3"};
  EXPECT_EQ(run_keyed(1), expected);
  EXPECT_EQ(run_keyed(2), expected);
}

TEST(CepJob, NonKeyedPatternSeesOneSequence) {
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  auto sink = std::make_shared<CollectSink<std::string>>();
  auto src = script_source(env, keyed_script(), std::make_shared<Control>());
  // Strict contiguity across the whole stream: in timestamp order the events are
  // a10 a11 a12 a13 (t1) x.. (t2) b.. (t3): "a next a" matches three times.
  pattern(src, Pattern<Event>::begin("first").where(named("a")).next("second").where(named("a")))
      .select([](const Match<Event>& m) { return render_match(m); })
      .sink_to(sink);
  env.execute();
  EXPECT_EQ(sink->values(), (Strings{"first:10 second:11", "first:11 second:12", "first:12 second:13"}));
}

TEST(CepJob, SelectWithTimeoutSideOutput) {
  Script s{{{{kev(1, 1, "a"), 1}, {kev(2, 2, "a"), 2}, {kev(1, 3, "b"), 5}}, 4},
           {{{kev(2, 4, "b"), 30}}, 100}};
  StreamExecutionEnvironment env;
  auto matches = std::make_shared<CollectSink<std::string>>();
  auto timeouts = std::make_shared<CollectSink<std::string>>();
  auto src = script_source(env, s, std::make_shared<Control>());
  const OutputTag<std::string> tag("timed-out");
  auto out = pattern(src.key_by([](const Event& e) { return e.key; }),
                     Pattern<Event>::begin("a").where(named("a")).followed_by("b").where(named("b")).within(10))
                 .select(tag, [](const Match<Event>& m, EventTime t) { return render_match(m) + " timed out at " + std::to_string(t); },
                         [](const Match<Event>& m) { return render_match(m); });
  out.sink_to(matches);
  out.side_output(tag).sink_to(timeouts);
  env.execute();
  EXPECT_EQ(matches->values(), (Strings{"a:1 b:3"}));
  EXPECT_EQ(timeouts->values(), (Strings{"a:2 timed out at 12"}));
}

TEST(CepJob, FlatSelectEmitsManyPerMatch) {
  Script s{{{{ev(1, "a"), 1}, {ev(2, "b"), 2}, {ev(3, "b"), 3}}, 10}};
  StreamExecutionEnvironment env;
  auto sink = std::make_shared<CollectSink<std::string>>();
  auto src = script_source(env, s, std::make_shared<Control>());
  pattern(src, Pattern<Event>::begin("a").where(named("a")).followed_by("b").where(named("b")).times(2))
      .flat_select<std::string>([](const Match<Event>& m, Collector<std::string>& out) {
        for (const auto& e : m.at("b")) out.collect("b" + std::to_string(e.id));
        out.collect("end");
      })
      .sink_to(sink);
  env.execute();
  EXPECT_EQ(sink->values(), (Strings{"b2", "b3", "end"}));
}

TEST(CepJob, LateDataSideOutputAndOutOfOrderInput) {
  Script s{{{{ev(2, "b"), 5}, {ev(1, "a"), 3}}, 6},
           {{{ev(3, "a"), 4}, {ev(4, "a"), 7}, {ev(5, "b"), 8}}, 20}};
  StreamExecutionEnvironment env;
  auto sink = std::make_shared<CollectSink<std::string>>();
  auto late = std::make_shared<CollectSink<Event>>();
  auto src = script_source(env, s, std::make_shared<Control>());
  const OutputTag<Event> late_tag("late");
  auto out = pattern(src, Pattern<Event>::begin("a").where(named("a")).followed_by("b").where(named("b")))
                 .side_output_late_data(late_tag)
                 .select([](const Match<Event>& m) { return render_match(m); });
  out.sink_to(sink);
  out.side_output(late_tag).sink_to(late);
  env.execute();
  EXPECT_EQ(sink->values(), (Strings{"a:1 b:2", "a:4 b:5"}));
  ASSERT_EQ(late->records().size(), 1u);
  EXPECT_EQ(late->records()[0].value.id, 3);
  EXPECT_EQ(late->records()[0].event_time, 4);
}

TEST(CepJob, MalformedPatternFailsAtJobConstruction) {
  StreamExecutionEnvironment env;
  auto src = script_source(env, {}, std::make_shared<Control>());
  EXPECT_THROW(pattern(src, Pattern<Event>::begin("a").not_followed_by("b")), ClinkError);
}

}  // namespace
}  // namespace clink::test
