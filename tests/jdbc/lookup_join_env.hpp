#pragma once
// Lookup join jobs against the test PostgreSQL server, in this process: a Flink SQL script
// planned by the real planner, whose probe table (`orders`, declared with the datagen
// connector) is played instead by the SQL operator tests' scripted source, one step (a
// batch of rows) at a time, so a test changes the dimension table between lookups. The
// joined rows go to a `collect` table the test reads while the job runs.
#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "../sql_ops/sql_ops_test_support.hpp"
#include "clink/connectors/sql/sql_sinks.hpp"
#include "clink/runtime/executor.hpp"
#include "clink/runtime/job_graph_spec.hpp"
#include "clink/sql/catalog/catalog.hpp"
#include "clink/sql/handler/statement_runner.hpp"
#include "pg_test_env.hpp"

namespace clink::test {

// The probe rows: (id BIGINT, k INT), as `orders` declares them.
inline SchemaPtr orders_schema() {
  return sql::make_schema({{"id", LogicalType::bigint()}, {"k", LogicalType::int_type()}});
}
// One step: rows (id, k); k < 0 is a NULL key.
inline BatchStep orders_step(const std::vector<std::pair<std::int64_t, int>>& rows) {
  std::vector<Row> out;
  for (auto [id, k] : rows) out.push_back(Row{{Value(id), k < 0 ? Value() : Value(static_cast<std::int32_t>(k))}});
  return {batch(orders_schema(), out), std::nullopt};
}

inline std::string orders_ddl() {
  return "CREATE TABLE orders (id BIGINT, k INT, proc_time AS PROCTIME()) WITH ('connector' = 'datagen');\n";
}

// A running (or finished) lookup join job.
class LookupJob {
 public:
  // Plans `sql` (${URL}: the server's JDBC URL; its INSERT goes into a collect table named
  // `collect`), the orders source playing `steps`; held before step `pause_at`.
  LookupJob(std::string name, std::string sql, std::vector<BatchStep> steps, std::size_t pause_at,
            const sql::SessionConfig& settings = {})
      : name_(std::move(name)) {
    sql = std::regex_replace(sql, std::regex("\\$\\{URL\\}"), postgres_url());
    sql = std::regex_replace(sql, std::regex("\\$\\{COLLECT\\}"), name_);
    script_ = std::make_shared<Script>();
    script_->schema = orders_schema();
    script_->steps = std::move(steps);
    script_->pause_at = pause_at;
    put_script(name_, script_);
    sql::SqlCollectResults::drop(name_);
    sql::StatementRunner runner(catalog_);
    for (const auto& [k, v] : settings) runner.run("SET '" + k + "' = '" + v + "'");
    auto results = runner.run(sql);
    spec_ = results.back().spec;
    for (auto& op : spec_.at("ops"))
      if (op.at("type") == "sql_datagen_source") {
        op["type"] = "sql_test_source";
        op["params"] = {{"script", name_}, {"schema", op["params"]["schema"]}};
      }
    handle_.emplace(execute_async(from_spec(spec_, test_registry())));
  }
  ~LookupJob() {
    if (handle_ && !handle_->wait_for(std::chrono::milliseconds(0))) handle_->cancel();
    sql::SqlCollectResults::drop(name_);
  }

  const nlohmann::json& spec() const { return spec_; }
  // Lets the source go on up to (not including) step `step`.
  void release(std::size_t step) { script_->pause_at = step; }
  // The collected rows in arrival order, once there are at least `n` (or after 20 s).
  std::vector<std::string> rows(std::size_t n) const {
    auto results = sql::SqlCollectResults::get(name_);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (results->changelog().size() < n && std::chrono::steady_clock::now() < deadline &&
           handle_->status() == JobStatus::kRunning)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return results->changelog();
  }
  // The collected rows now.
  std::vector<std::string> rows_now() const { return sql::SqlCollectResults::get(name_)->changelog(); }
  // Runs the rest of the script and waits for the job's end.
  JobHandle& finish() {
    release(static_cast<std::size_t>(-1));
    handle_->wait_for(std::chrono::seconds(60));
    return *handle_;
  }
  JobHandle& handle() { return *handle_; }

 private:
  std::string name_;
  sql::Catalog catalog_;
  nlohmann::json spec_;
  std::shared_ptr<Script> script_;
  std::optional<JobHandle> handle_;
};

// Runs the whole script and returns the collected rows (sorted), expecting success.
inline std::vector<std::string> run_lookup_job(const std::string& name, const std::string& sql,
                                               std::vector<BatchStep> steps, const sql::SessionConfig& settings = {}) {
  LookupJob job(name, sql, std::move(steps), static_cast<std::size_t>(-1), settings);
  JobHandle& h = job.finish();
  EXPECT_EQ(h.status(), JobStatus::kFinished) << h.error();
  return sorted(job.rows_now());
}

// The lookup join's connection to the server (for pg_terminate_backend): its backend's pid.
inline std::string lookup_backend_pid(const std::string& table) {
  return pg_query_value("SELECT COALESCE(MAX(pid), 0) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND query "
                        "LIKE '%FROM \"" + table + "\"%ANY%'");
}

}  // namespace clink::test
