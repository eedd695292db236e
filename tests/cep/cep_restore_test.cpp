// CEP state is durable: a job restores from a savepoint (also at another parallelism:
// 1 -> 2, 2 -> 1) or after an injected failure, with partial matches in the NFA and
// shared buffer, records buffered ahead of the watermark, and partials that time out
// after the restore, and its output equals the failure-free run exactly. Memory and
// RocksDB backends.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "cep_job_support.hpp"
#include "clink/connectors/exactly_once_collect_sink.hpp"
#include "clink/runtime/executor.hpp"

#include "../support/restore_harness.hpp"

namespace clink::test {

using namespace clink::cep;

namespace {

namespace fs = std::filesystem;
using Strings = std::vector<std::string>;

// Six keys; per key k (ids k*100 + n): a@1 x@2 b@3 | b@5 a@4 (out of order) | c@8 b@6 are
// buffered ahead of W5 at the interruption | a@3 late, c@9 | a@20 then W100 (timeouts).
Script restore_script() {
  Script s(5);
  for (std::int64_t k = 0; k < 6; ++k) {
    auto id = [k](int n) { return static_cast<int>(k * 100 + n); };
    s[0].records.insert(s[0].records.end(), {{kev(k, id(1), "a"), 1}, {kev(k, id(2), "x"), 2}, {kev(k, id(3), "b"), 3}});
    s[1].records.insert(s[1].records.end(), {{kev(k, id(5), "b"), 5}, {kev(k, id(4), "a"), 4}});
    s[2].records.insert(s[2].records.end(), {{kev(k, id(8), "c"), 8}, {kev(k, id(6), "b"), 6}});
    s[3].records.insert(s[3].records.end(), {{kev(k, id(7), "a"), 3}, {kev(k, id(9), "c"), 9}});
    s[4].records.push_back({kev(k, id(20), "a"), 20});
  }
  s[0].watermark = 1;
  s[1].watermark = 4;
  s[2].watermark = 5;
  s[3].watermark = 9;
  s[4].watermark = 100;
  return s;
}

Pattern<Event> restore_pattern() {
  return Pattern<Event>::begin("a").where(named("a")).followed_by("b").where(named("b")).one_or_more()
      .followed_by("c").where(named("c")).within(50);
}

// source (script) -> injector -> keyed pattern -> matches and timeouts, exactly once.
struct Job {
  std::shared_ptr<ExactlyOnceCollectSink<std::string>> matches = std::make_shared<ExactlyOnceCollectSink<std::string>>();
  std::shared_ptr<ExactlyOnceCollectSink<std::string>> timeouts = std::make_shared<ExactlyOnceCollectSink<std::string>>();
  std::shared_ptr<Control> control = std::make_shared<Control>();
  std::shared_ptr<ArmedFailure> failure = std::make_shared<ArmedFailure>();

  RestorableJob restorable() const {
    return {[this](int parallelism) {
              StreamExecutionEnvironment env;
              env.set_parallelism(parallelism);
              auto fail = failure;
              auto src = script_source(env, restore_script(), control)
                             .map([fail](Event e) { return fail->pass(std::move(e)); }, "Injector")
                             .set_parallelism(1)
                             .uid("injector");
              auto out = pattern(src.key_by([](const Event& e) { return e.key; }), restore_pattern()).process(KeyedRender{});
              out.uid("cep");
              out.sink_to(matches, "Matches");
              out.side_output(timeout_tag()).sink_to(timeouts, "Timeouts");
              return env.graph();
            },
            control, failure};
  }
  Strings output() const {
    Strings v = matches->values();
    for (auto& t : timeouts->values()) v.push_back(t);
    return sorted_copy(v);
  }
};

class CepRestore : public RestoreHarness {
 protected:
  Strings failure_free(int parallelism) {
    Job job;
    run_failure_free(job.restorable(), parallelism);
    return job.output();
  }
  Strings with_savepoint(std::size_t at, int p1, int p2) {
    Job job;
    run_with_savepoint(job.restorable(), at, p1, p2);
    return job.output();
  }
  Strings with_failure(std::size_t at, int parallelism) {
    Job job;
    run_with_failure(job.restorable(), at, parallelism);
    return job.output();
  }
};
INSTANTIATE_TEST_SUITE_P(Backends, CepRestore, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

// Per key (k*100 + n): a1 x2 b3 a4 b5 b6 c8 c9 in timestamp order (a7@3 is late);
// relaxed b+ takes every b after its a; the first c ends each run. a20 times out at 70.
Strings expected_output() {
  Strings v;
  for (int k = 0; k < 6; ++k) {
    auto id = [k](int n) { return std::to_string(k * 100 + n); };
    const std::string key = "k" + std::to_string(k) + " ";
    v.push_back(key + "a:" + id(1) + " b:" + id(3) + " c:" + id(8) + "@8");
    v.push_back(key + "a:" + id(1) + " b:" + id(3) + "," + id(5) + " c:" + id(8) + "@8");
    v.push_back(key + "a:" + id(1) + " b:" + id(3) + "," + id(5) + "," + id(6) + " c:" + id(8) + "@8");
    v.push_back(key + "a:" + id(4) + " b:" + id(5) + " c:" + id(8) + "@8");
    v.push_back(key + "a:" + id(4) + " b:" + id(5) + "," + id(6) + " c:" + id(8) + "@8");
    v.push_back("timeout " + key + "a:" + id(20) + "@70");
    // The relaxed loops that skipped c8 (their ignore branches) still wait for a "b".
    v.push_back("timeout " + key + "a:" + id(1) + " b:" + id(3) + "," + id(5) + "," + id(6) + "@51");
    v.push_back("timeout " + key + "a:" + id(4) + " b:" + id(5) + "," + id(6) + "@54");
  }
  return sorted_copy(v);
}

TEST_P(CepRestore, FailureFreeRunIsExact) {
  EXPECT_EQ(failure_free(1), expected_output());
  EXPECT_EQ(failure_free(2), expected_output());
}

TEST_P(CepRestore, SavepointSameParallelism) { EXPECT_EQ(with_savepoint(3, 1, 1), expected_output()); }
TEST_P(CepRestore, SavepointRescaleOneToTwo) { EXPECT_EQ(with_savepoint(3, 1, 2), expected_output()); }
TEST_P(CepRestore, SavepointRescaleTwoToOne) { EXPECT_EQ(with_savepoint(3, 2, 1), expected_output()); }
TEST_P(CepRestore, SavepointAfterTheFirstWatermark) { EXPECT_EQ(with_savepoint(2, 2, 2), expected_output()); }
TEST_P(CepRestore, InjectedFailureRestoresFromTheLatestCheckpoint) {
  EXPECT_EQ(with_failure(3, 2), expected_output());
}

}  // namespace
}  // namespace clink::test
