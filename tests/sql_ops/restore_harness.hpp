#pragma once
// The SQL operator restore tests on tests/support's restore harness: a job src -> inj ->
// <ops...> -> sink over rows (t, k, v) of keys a..f, run failure-free, stopped with a
// savepoint and resumed at another parallelism, and with an injected failure (checkpoints
// every 10 ms, exactly one restart), on the fixture's state backend. Each test file describes its job
// (RestoreJob), which runs to compare (RestorePlan) and how a run's sink lines become
// the compared result (sorted rows, or an applied changelog).
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sql_ops_test_support.hpp"

#include "../support/changelog.hpp"
#include "../support/restore_harness.hpp"

namespace clink::test {

inline constexpr const char* kRestoreKeys[] = {"a", "b", "c", "d", "e", "f"};

// (t TIMESTAMP(3), k STRING, v BIGINT): the rows every restore job reads.
SchemaPtr kv_schema();
// One row per key a..f at time t (ms) with value v, times the key's factor (index + 1)
// when `scale_by_key`; keys spread so both subtasks at parallelism 2 hold some.
ColumnBatch spread(std::int64_t v, std::int64_t t, bool scale_by_key = false);
// Per key the rows (t, v) = (1, 1), (12, 2), (15, 4), (21, 8), (29, 16), step i followed
// by `watermarks[i]` (five entries).
std::vector<BatchStep> rising_steps(const std::vector<std::optional<EventTime>>& watermarks, bool scale_by_key = false);
// The watermarks 5, 14, 16, 25 between the steps: each step's rows are on time.
const std::vector<std::optional<EventTime>>& watermarks_between_steps();
// The watermarks -, 5, 12, 16, -: each step's watermark stays behind its rows, so a
// savepoint after step 2 or 3 holds rows waiting for the watermark.
const std::vector<std::optional<EventTime>>& watermarks_one_step_behind();

// src -> inj -> <ops...> -> sink reading `last`, named `name`, at `parallelism`; the sink
// runs at the parallelism of `last` when that op pins one (so a parallelism-1 op's
// changelog reaches one sink subtask in order).
json restore_job_spec(const std::string& name, const std::string& script, const std::vector<json>& ops,
                      const std::string& last, int parallelism);

// The op `id` of `type` reading inj's rows hash-partitioned by k, emitting `out`; `params`
// holds the op's own parameters.
json keyed_op(const std::string& id, const std::string& type, const SchemaPtr& out, json params);

// Sink lines -> the result compared against the expected rows.
using SinkView = std::function<std::vector<std::string>(std::vector<std::string>)>;
// Insert-only results: the rows sorted (keys interleave in no fixed order across subtasks).
std::vector<std::string> sorted_rows(std::vector<std::string> lines);
// Updating results: the changelog applied (a lost or repeated retraction shows).

// A job under test: its spec for a script name and parallelism, and what its script plays.
struct RestoreJob {
  std::function<json(const std::string& script, int parallelism)> spec;
  std::vector<BatchStep> steps;
  SinkView view = sorted_rows;
};

// The job `name`: restore_job_spec's pipeline of `ops`, the sink reading `last`.
RestoreJob pipeline_job(const std::string& name, std::vector<json> ops, const std::string& last,
                        std::vector<BatchStep> steps, SinkView view = sorted_rows);
// The job `name` of the one op `op` between inj and the sink.
RestoreJob single_op_job(const std::string& name, const json& op, std::vector<BatchStep> steps,
                         SinkView view = sorted_rows);

// Which runs must equal the expected rows.
struct RestorePlan {
  std::vector<std::size_t> savepoint_steps = {3};                           // savepoints after these steps
  std::vector<std::pair<int, int>> rescales = {{1, 1}, {1, 2}, {2, 1}};  // savepoint parallelism -> resumed
  std::vector<int> failure_free_parallelisms = {1, 2};
  std::size_t failure_step = 3;  // the injected failure follows two checkpoints past this step
  int failure_parallelism = 2;
};

class SqlRestoreHarness : public RestoreHarness {
 protected:
  // A new script of `steps` registered under this test's name.
  std::shared_ptr<Script> fresh(const std::vector<BatchStep>& steps);

  // Each returns the run's sink lines as they arrived.
  std::vector<std::string> failure_free(const RestoreJob& job, int p);
  // Pauses after step `at`, stops with a savepoint at parallelism p1, resumes at p2.
  std::vector<std::string> with_savepoint(const RestoreJob& job, std::size_t at, int p1, int p2);
  // Pauses after step `at`, waits for two more checkpoints, then fails once.
  std::vector<std::string> with_failure(const RestoreJob& job, std::size_t at, int p);

  void expect_restores(const RestoreJob& job, const RestorePlan& plan, const std::vector<std::string>& expected);

  std::string name_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();

 private:
  // The job's graphs from its spec, held and failed by the script `s`.
  RestorableJob restorable(const RestoreJob& job, const std::shared_ptr<Script>& s) const;
};

}  // namespace clink::test
