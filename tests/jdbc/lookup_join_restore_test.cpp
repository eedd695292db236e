// The lookup join's durability (its state: the rows and watermarks in flight): a LEFT
// lookup join of the restore jobs' rows (t, k, v) with a PostgreSQL table keyed by k, run
// failure-free at parallelism 1 and 2, stopped with a savepoint and resumed (1 -> 1,
// 1 -> 2, 2 -> 1) and with an injected failure, in both output modes, on the memory and
// the RocksDB backends; the exactly-once output must equal the failure-free one. Then the
// rows in flight themselves: while another transaction locks the table every lookup
// waits, a savepoint is taken with the rows of three steps in flight, and the job resumed
// from it (after the lock is gone) emits each of them exactly once.
#include <gtest/gtest.h>

#include "../sql_ops/restore_harness.hpp"
#include "../support/print_form.hpp"
#include "clink/runtime/job_graph_spec.hpp"
#include "clink/sql/expression/expr.hpp"
#include "clink/sql/spec/expr_json.hpp"
#include "clink/sql/spec/lookup_join_spec.hpp"
#include "pg_test_env.hpp"

namespace clink::test {
namespace {

using namespace std::chrono_literals;

// The dimension table: labels for keys a..e (f has none).
std::string make_labels() {
  const std::string t = unique_pg_table("lookup_restore");
  pg_exec("CREATE TABLE " + t + " (k TEXT PRIMARY KEY, label TEXT);"
          "INSERT INTO " + t + " VALUES ('a', 'A'), ('b', 'B'), ('c', 'C'), ('d', 'D'), ('e', 'E')");
  return t;
}

SchemaPtr labels_schema() { return sql::make_schema({{"k", LogicalType::string()}, {"label", LogicalType::string()}}); }

SchemaPtr joined_schema() {
  return sql::make_schema({{"t", LogicalType::timestamp(3)}, {"k", LogicalType::string()}, {"v", LogicalType::bigint()},
                           {"k0", LogicalType::string()}, {"label", LogicalType::string()}});
}

// inj's rows LEFT JOIN `table` ON k = table.k, the op reading inj's rows (rebalanced).
json lookup_op(const std::string& table, const std::string& mode) {
  using namespace sql;
  json key = expr_to_json(*expr::column(1, LogicalType::string(), "k"));
  json params = {{"input_schemas", json::array({schema_json(kv_schema())})},
                 {"schema", schema_json(joined_schema())},
                 {"join_type", "left"},
                 {"table", "labels"},
                 {"lookup", "jdbc"},
                 {"options", {{"url", postgres_url()}, {"table-name", table}}},
                 {"dim_schema", schema_json(labels_schema())},
                 {"dim_columns", {0, 1}},
                 {"keys", json::array({{{"column", 0}, {"value", key}}})},
                 {"async", {{"capacity", 100}, {"output_mode", mode}, {"timeout_ms", 60000}}}};
  return {{"id", "lookup"},
          {"type", kSqlLookupJoin},
          {"params", std::move(params)},
          {"inputs", json::array({{{"from", "inj"}, {"partitioning", "rebalance"}}})}};
}

std::vector<std::string> expected_rows() {
  std::vector<std::string> out;
  for (std::string k : {"a", "b", "c", "d", "e", "f"})
    for (auto [t, v] : {std::pair{1, 1}, {12, 2}, {15, 4}, {21, 8}, {29, 16}}) {
      std::string label = k == "f" ? "null, null" : k + ", " + std::string(1, static_cast<char>(k[0] - 'a' + 'A'));
      out.push_back("+I[" + print_timestamp_ms(t) + ", " + k + ", " + std::to_string(v) + ", " + label + "]");
    }
  return sorted(out);
}

class SqlLookupJoinRestore : public SqlRestoreHarness {};
INSTANTIATE_TEST_SUITE_P(Backends, SqlLookupJoinRestore, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

TEST_P(SqlLookupJoinRestore, LeftLookupJoinOrdered) {
  const std::string t = make_labels();
  expect_restores(single_op_job("lookup", lookup_op(t, "ORDERED"), rising_steps(watermarks_between_steps())), {},
                  expected_rows());
}

TEST_P(SqlLookupJoinRestore, LeftLookupJoinUnordered) {
  const std::string t = make_labels();
  expect_restores(single_op_job("lookup", lookup_op(t, "ALLOW_UNORDERED"), rising_steps(watermarks_between_steps())), {},
                  expected_rows());
}

// Rows in flight at the savepoint (their lookups wait for a lock) are in its state and
// come out of the resumed job, at the same parallelism and at another.
TEST_P(SqlLookupJoinRestore, InFlightLookupsSurviveASavepoint) {
  for (auto [p1, p2] : {std::pair{1, 1}, {1, 2}}) {
    const std::string t = make_labels();
    RestoreJob job = single_op_job("lookup", lookup_op(t, "ORDERED"), rising_steps(watermarks_between_steps()));
    auto s = fresh(job.steps);
    auto graph = [&](int p) { return from_spec(job.spec(name_, p), test_registry()); };
    TempDir dir;
    sql::PgConnection locker = pg_connect();
    // The first lookup connects before the lock (preparing the statement reads the table).
    std::filesystem::path savepoint;
    {
      s->pause_at = 1;
      auto handle = execute_async(graph(p1), checkpointing(dir.path, 0));
      while (s->emitted.load() < 1 && !handle.wait_for(1ms)) {
      }
      std::this_thread::sleep_for(300ms);
      locker.exec("BEGIN; LOCK TABLE " + t + " IN ACCESS EXCLUSIVE MODE");
      s->pause_at = 3;
      while (s->emitted.load() < 3 && !handle.wait_for(1ms)) {
      }
      std::this_thread::sleep_for(200ms);  // the rows of steps 1 and 2 reach the op and wait
      ASSERT_EQ(handle.status(), JobStatus::kRunning) << handle.error();
      savepoint = handle.stop_with_savepoint(dir.path / "sp");
    }
    locker.exec("COMMIT");
    const std::size_t before = s->sink->values().size();
    EXPECT_LE(before, 6u) << "only step 0's rows can have been joined before the lock";
    s->pause_at = kNoPause;
    auto o = checkpointing(dir.path, 0);
    o.restore = RestoreSettings{savepoint};
    auto handle = execute_async(graph(p2), o);
    handle.wait_for(std::chrono::minutes(1));
    ASSERT_EQ(handle.status(), JobStatus::kFinished) << handle.error();
    EXPECT_EQ(sorted(s->sink->values()), expected_rows()) << p1 << " -> " << p2;
  }
}

}  // namespace
}  // namespace clink::test
