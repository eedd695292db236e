#pragma once
// StatementRunner: executes a parsed script statement by statement against a Catalog.
//   DDL (CREATE / DROP / ALTER / ANALYZE)  applied to the catalog
//   SET / RESET                            recorded in the session configuration
//   SHOW / DESCRIBE / EXPLAIN              produce text
//   INSERT, statement sets, SELECT         bind -> optimise -> compile to a JobGraphSpec,
//                                          handed to the job callback (the CLI and the
//                                          SQL test runner execute it); a SELECT writes
//                                          to a `collect` sink named "select_<n>"
// The first failing statement throws (ParseError / TranslationError with its position).
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "clink/sql/binder/binder.hpp"
#include "clink/sql/catalog/catalog.hpp"
#include "clink/sql/function/function_registry.hpp"
#include "clink/sql/handler/catalog_ddl.hpp"
#include "clink/sql/handler/materialized_table.hpp"
#include "clink/sql/parser/ast.hpp"

namespace clink::sql {

struct StatementResult {
  enum class Kind { kOk, kText, kJob };
  Kind kind = Kind::kOk;
  std::string text;       // kText: SHOW / DESCRIBE / EXPLAIN / SET output
  nlohmann::json spec;    // kJob: the JobGraphSpec
  std::size_t statement = 0;  // index in the script
};

class StatementRunner {
 public:
  using JobCallback = std::function<void(const nlohmann::json& spec, const ast::Statement& statement)>;

  explicit StatementRunner(Catalog& catalog, const FunctionRegistry& registry = FunctionRegistry::process());

  void on_job(JobCallback callback) { on_job_ = std::move(callback); }
  // Runs a materialized table's jobs to completion (its maintenance job, a refresh);
  // when unset, on_job runs them (the SQL test runner's runs each job to its end).
  void set_job_runner(MaterializedJobRunner runner) { jobs_.run = std::move(runner); }
  // All of how they run (a coordinator starts maintenance jobs and cancels them).
  void set_materialized_jobs(MaterializedJobs jobs) { jobs_ = std::move(jobs); }
  const MaterializedJobs& materialized_jobs() const { return jobs_; }
  MaterializedTables& materialized() { return materialized_; }
  void set_analyzer(TableAnalyzer analyzer) { ddl_.set_analyzer(std::move(analyzer)); }

  // Parses and executes every statement in order.
  std::vector<StatementResult> run(std::string_view script);
  StatementResult execute(const ast::Statement& statement);

  // The optimised plans of an INSERT, a statement set or a query (rooted in sinks).
  std::vector<LogicalPtr> plan(const ast::Statement& statement);
  std::string explain(const ast::Statement& statement);

  const SessionConfig& session() const { return session_; }
  Catalog& catalog() { return catalog_; }

 private:
  LogicalPtr plan_query_sink(const ast::Query& query, SourcePosition pos);
  std::string job_name(const ast::Statement& statement) const;

  Catalog& catalog_;
  const FunctionRegistry& registry_;
  SessionConfig session_;
  CatalogDdl ddl_;
  JobCallback on_job_;
  MaterializedJobs jobs_;
  MaterializedTables materialized_;
  int selects_ = 0;
};

}  // namespace clink::sql
