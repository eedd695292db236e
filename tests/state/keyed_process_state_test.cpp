// Keyed process functions of the DataStream API reach keyed state: from open() and
// from the context, scoped to the record's (or timer's) key, one backend per subtask.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../support/scripted_source.hpp"
#include "clink/api/data_stream.hpp"
#include "clink/connectors/collect_sink.hpp"
#include "clink/state/keyed_state.hpp"

namespace clink::test {
namespace {

using ::testing::UnorderedElementsAre;

using Out = std::tuple<std::string, std::int64_t, std::vector<std::int64_t>, std::int64_t>;  // key, count, times, timer

// Counts per key (state obtained in open), remembers the event times (state obtained
// through the context) and reports both when the key's timer fires, then clears.
struct CountingFn final : KeyedProcessFunction<std::string, std::string, Out> {
  ValueState<std::int64_t>* count = nullptr;
  void open(RuntimeContext& rc) override {
    count = &keyed_state_store(rc).get_state(ValueStateDescriptor<std::int64_t>{"count"});
  }
  void process_element(const std::string&, Context& ctx, Collector<Out>&) override {
    auto c = count->value().value_or(0);
    count->update(c + 1);
    ctx.state().get_list_state(ListStateDescriptor<std::int64_t>{"times"}).add(ctx.timestamp());
    if (c == 0) ctx.timer_service().register_event_time_timer(ctx.timestamp() + 100);
  }
  void on_timer(std::int64_t ts, OnTimerContext& ctx, Collector<Out>& out) override {
    auto& times = ctx.state().get_list_state(ListStateDescriptor<std::int64_t>{"times"});
    out.collect({ctx.current_key(), count->value().value_or(-1), times.get(), ts});
    count->clear();
    times.clear();
  }
};

TEST(KeyedProcessState, FunctionsReadAndWriteStateOfTheCurrentKey) {
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  auto sink = std::make_shared<CollectSink<Out>>();
  scripted<std::string>(env, [](ScriptedSource<std::string>& s) {
    s.records({{"a", 1}, {"b", 2}, {"a", 3}, {"c", 4}, {"a", 5}, {"b", 6}})
        .watermark(Watermark::at(110))  // fires a@101, b@102, c@104
        .records({{"a", 200}, {"a", 201}})
        .watermark(Watermark::at(1000));  // a@300: the counter started over after clear
  }).key_by([](const std::string& s) { return s; })
      .process(CountingFn{})
      .sink_to(sink);
  env.execute();
  EXPECT_THAT(sink->values(),
              UnorderedElementsAre(Out{"a", 3, {1, 3, 5}, 101}, Out{"b", 2, {2, 6}, 102}, Out{"c", 1, {4}, 104},
                                   Out{"a", 2, {200, 201}, 300}));
}

TEST(KeyedProcessState, NonKeyedFunctionsHaveNoKeyedState) {
  StreamExecutionEnvironment env;
  struct Fn final : ProcessFunction<std::int64_t, std::int64_t> {
    void open(RuntimeContext& rc) override { keyed_state_store(rc); }
    void process_element(const std::int64_t& v, Context&, Collector<std::int64_t>& out) override { out.collect(v); }
  };
  env.from_collection<std::int64_t>({1, 2}).process(Fn{}).sink_to(std::make_shared<CollectSink<std::int64_t>>());
  EXPECT_THROW(env.execute(), ClinkError);
}

}  // namespace
}  // namespace clink::test
