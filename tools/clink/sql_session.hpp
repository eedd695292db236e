#pragma once
// A SQL session of the CLI: the catalog (optionally persisted with --catalog-dir), the
// planner's StatementRunner, and the executor for the jobs statements become.
//   DDL / SET / RESET           applied; SHOW / DESCRIBE / EXPLAIN print their text
//   INSERT / statement set      one job each, run to completion (or until stopped)
//   SELECT                      one job whose rows a ResultPresenter shows as they come
// `clink run script.sql`, `clink explain script.sql` and `clink sql` share it.
#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "clink/cluster/rest/dispatcher.hpp"
#include "clink/runtime/executor.hpp"
#include "clink/sql/catalog/catalog.hpp"
#include "clink/sql/handler/statement_runner.hpp"
#include "clink/sql/parser/ast.hpp"
#include "result_stream.hpp"

namespace clink::cli {

// How jobs run: the `clink run` flags.
struct SqlJobSettings {
  ExecutionOptions execution;
  int parallelism = 0;             // -p (0: the planner's default)
  std::vector<std::string> sets;   // --set overrides applied to each job's spec
  bool metrics = false;
  std::string savepoint_on_stop;   // on a stop request: savepoint into this directory
  // Applied to each job's spec before it is built (the bench swaps sinks and sizes).
  std::function<void(nlohmann::json&)> rewrite_spec;
  // Runs each job (default: execute_async, in this process; `clink run` registers them
  // with its RunServices, the bench can run them on a cluster's workers). The texts
  // are the job's spec, statement and optimised plan.
  std::function<JobHandle(const JobGraph&, const ExecutionOptions&, cluster::JobTexts)> launch;
  // When set, an INSERT's job is handed to it (a coordinator's submission) instead of
  // running here; a SELECT is an error (its rows have nowhere to go).
  std::function<void(nlohmann::json&)> submit;
  // With a coordinator: materialized-table statements are handed to it as a script for
  // its SQL (POST /api/v1/jobs/sql: coordinator_script), since the coordinator keeps and
  // refreshes them.
  std::function<void(const std::string& script)> forward_sql;
  // `clink sql --coordinator HOST:PORT`: SHOW JOBS and STOP JOB ask this REST API.
  std::string coordinator;
  // Called when a job ended or is being stopped, before anything about it is printed
  // (`clink run` clears its progress line).
  std::function<void()> job_ended;
};

// Shows a SELECT's rows while its job runs. `poll` is called with each batch of rows
// (possibly empty, every ~100 ms); `finish` once the job ended or was stopped.
class ResultPresenter {
 public:
  virtual ~ResultPresenter() = default;
  virtual void start(const std::vector<ResultColumn>& columns) = 0;
  virtual void rows(const std::vector<ResultRow>& rows) = 0;
  virtual void finish(bool stopped) = 0;
};
using PresenterFactory = std::function<std::unique_ptr<ResultPresenter>()>;

// Set by SIGINT/SIGTERM handlers: stops the running job (and, in `clink run`, the script).
std::atomic<bool>& stop_requested();

class SqlSession {
 public:
  SqlSession(SqlJobSettings settings, const std::string& catalog_dir, std::FILE* out);

  void set_presenter(PresenterFactory factory) { presenter_ = std::move(factory); }
  // Executes one statement; throws SqlError (with its position) or ClinkError. Returns
  // false when a stop request ended its job early.
  bool execute(const sql::ast::Statement& statement);
  // The optimised plan (and with `with_spec` the JobGraphSpec) of an INSERT, statement
  // set or query; other statements are executed (DDL) and yield "".
  std::string explain(const sql::ast::Statement& statement, bool with_spec);

  sql::StatementRunner& runner() { return runner_; }
  // INSERTs are submitted to a coordinator rather than run here.
  bool detached() const { return static_cast<bool>(settings_.submit); }

 private:
  bool run_job(nlohmann::json spec, const sql::ast::Statement& statement);
  bool run_select(nlohmann::json spec, const sql::ast::Statement& statement);
  JobHandle launch(const JobGraph& graph, const nlohmann::json& spec, const sql::ast::Statement& statement);
  bool wait_job(JobHandle& handle, const JobGraph& graph, const std::function<void()>& tick);
  JobGraph build(nlohmann::json& spec) const;
  sql::TableStatistics analyze(const sql::TableDef& table, const std::vector<std::string>& columns);
  // SHOW JOBS / STOP JOB (sql_jobs.cpp): the coordinator's jobs, else this session's.
  std::string show_jobs() const;
  std::string stop_job(const sql::ast::StopJob& statement);
  void record_job(const JobGraph& graph, const JobHandle& handle, std::int64_t start_ms);
  struct SessionJob {
    std::string id, name, status;
    std::int64_t start_ms = 0;
  };
  std::vector<SessionJob> jobs_;  // embedded: the jobs this session ran, oldest first

  SqlJobSettings settings_;
  std::FILE* out_;
  sql::Catalog catalog_;
  sql::StatementRunner runner_;
  PresenterFactory presenter_;
  int streams_ = 0;
};

// A materialized-table statement as a script for a coordinator's SQL: CREATE TABLE / VIEW
// IF NOT EXISTS of what its query reads from the runner's catalog, then the statement
// (materialized_forward.cpp).
std::string coordinator_script(sql::StatementRunner& runner, const sql::ast::Statement& statement);

// A presenter printing Flink's tableau changelog (`clink run`, and `clink sql` when its
// output is not a terminal).
std::unique_ptr<ResultPresenter> make_tableau_presenter(std::FILE* out);

// "file:L:C: message" for an error of a statement: SqlErrors carry their own position;
// other errors (a job failing) get the statement's.
std::string describe_error(const std::exception& e, const sql::SourcePosition& statement_pos);

}  // namespace clink::cli
