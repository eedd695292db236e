#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "clink/operators/builtin_streams.hpp"
#include "test_support.hpp"

namespace clink::test {
namespace {

TEST(WatermarkAssigner, FormulaIsMaxSeenMinusBoundMinusOne) {
  EXPECT_EQ(bounded_out_of_orderness_watermark(kMinEventTime, 5), kMinEventTime);
  EXPECT_EQ(bounded_out_of_orderness_watermark(100, 0), 99);
  EXPECT_EQ(bounded_out_of_orderness_watermark(100, 30), 69);
  EXPECT_EQ(bounded_out_of_orderness_watermark(-100, 30), -131);
  EXPECT_EQ(bounded_out_of_orderness_watermark(kMinEventTime + 3, 10), kMinEventTime);  // saturates
}

TEST(WatermarkAssigner, EmitsAfterEachBatchOnlyWhenItAdvances) {
  StreamExecutionEnvironment env;
  auto src = scripted_source<std::int64_t>(env, {
                                                    ScriptStep<std::int64_t>{{{1, 10}, {2, 5}}},
                                                    ScriptStep<std::int64_t>{{{3, 8}}},
                                                    ScriptStep<std::int64_t>{{{4, 20}, {5, 19}}},
                                                });
  auto log = probe(assign_watermarks(src, 2));
  env.execute();
  EXPECT_EQ(log->get(), (std::vector<std::string>{"1@10", "2@5", "W7", "3@8", "4@20", "5@19", "W17", "WMAX"}));
}

TEST(WatermarkAssigner, SwallowsUpstreamWatermarksButForwardsTheFinalOne) {
  StreamExecutionEnvironment env;
  auto src = scripted_source<Event>(env, {
                                             ScriptStep<Event>{{{{"a", 1}, 1000}}, 5000},
                                             ScriptStep<Event>{{}, 6000},
                                             ScriptStep<Event>{{{{"b", 2}, 1500}}},
                                         });
  auto log = probe(assign_watermarks(src, 0));
  env.execute();
  EXPECT_EQ(log->get(), (std::vector<std::string>{"(a,1)@1000", "W999", "(b,2)@1500", "W1499", "WMAX"}));
}

TEST(WatermarkAssigner, NegativeTimestamps) {
  StreamExecutionEnvironment env;
  auto src = scripted_source<std::int64_t>(env, {ScriptStep<std::int64_t>{{{1, -15000}}},
                                                 ScriptStep<std::int64_t>{{{2, -20000}}},
                                                 ScriptStep<std::int64_t>{{{3, -1}}}});
  auto log = probe(assign_watermarks(src, 1000));
  env.execute();
  EXPECT_EQ(log->get(), (std::vector<std::string>{"1@-15000", "W-16001", "2@-20000", "3@-1", "W-1002", "WMAX"}));
}

TEST(WatermarkAssigner, RecordWithoutEventTimeFailsNamingTheOperator) {
  StreamExecutionEnvironment env;
  auto src = env.from_collection(std::vector<std::int64_t>{1, 2, 3});
  probe(assign_watermarks(src, 0, "my-assigner"));
  try {
    env.execute();
    FAIL() << "expected the job to fail";
  } catch (const JobFailedError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("my-assigner"), std::string::npos) << msg;
    EXPECT_NE(msg.find("record has no event time"), std::string::npos) << msg;
    EXPECT_NE(msg.find("event_time_"), std::string::npos) << msg;
  }
}

TEST(WatermarkAssigner, RecordsItsFactoryAndParams) {
  StreamExecutionEnvironment env;
  auto a = assign_watermarks(env.from_collection(std::vector<Event>{}), 250);
  EXPECT_EQ(a.node().factory, "watermark_assigner");
  EXPECT_EQ(a.node().params, (nlohmann::json{{"out_of_orderness_ms", 250}}));
  EXPECT_EQ(a.node().out_type, "event");
}

}  // namespace
}  // namespace clink::test
