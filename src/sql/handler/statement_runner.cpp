#include "clink/sql/handler/statement_runner.hpp"

#include "catalog_ddl_wasm.hpp"
#include "clink/sql/function/wasm_udf.hpp"
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>

#include "clink/sql/optimizer/optimizer.hpp"
#include "clink/sql/parser/parser.hpp"
#include "clink/sql/physical/physical_plan.hpp"
#include "clink/sql/planner/explain.hpp"
#include "clink/sql/planner/plan_properties.hpp"

namespace clink::sql {

namespace {

// SET 'table.optimizer.distinct-agg.split.enabled' (default false) and '.bucket-num'
// (default 1024, as Flink): the buckets when splitting is on, else 0.
int distinct_agg_split_buckets(const SessionConfig& session, SourcePosition pos) {
  auto enabled = session.find("table.optimizer.distinct-agg.split.enabled");
  if (enabled == session.end()) return 0;
  std::string flag = enabled->second;
  std::transform(flag.begin(), flag.end(), flag.begin(), [](unsigned char c) { return std::tolower(c); });
  if (flag == "false") return 0;
  if (flag != "true")
    throw TranslationError(pos, fmt::format("'table.optimizer.distinct-agg.split.enabled' is not a boolean: '{}'",
                                            enabled->second));
  auto buckets = session.find("table.optimizer.distinct-agg.split.bucket-num");
  if (buckets == session.end()) return 1024;
  const std::string& text = buckets->second;
  char* end = nullptr;
  const long n = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || n <= 0 || n > std::numeric_limits<int>::max())
    throw TranslationError(pos, fmt::format("'table.optimizer.distinct-agg.split.bucket-num' must be a positive "
                                            "integer, got '{}'",
                                            text));
  return static_cast<int>(n);
}

}  // namespace

StatementRunner::StatementRunner(Catalog& catalog, const FunctionRegistry& registry)
    : catalog_(catalog), registry_(registry), ddl_(catalog_, registry_, session_), materialized_(catalog_, registry_, session_) {}

std::vector<StatementResult> StatementRunner::run(std::string_view script) {
  ast::Script parsed = parse(script);
  std::vector<StatementResult> out;
  for (std::size_t i = 0; i < parsed.statements.size(); ++i) {
    StatementResult r = execute(parsed.statements[i]);
    r.statement = i;
    out.push_back(std::move(r));
  }
  return out;
}

LogicalPtr StatementRunner::plan_query_sink(const ast::Query& query, SourcePosition pos) {
  Binder binder(catalog_, registry_, session_);
  LogicalPtr q = binder.bind_select(query);
  auto sink = std::make_shared<LogicalSink>();
  sink->table.name = fmt::format("select_{}", selects_ + 1);
  sink->table.options = {{"connector", "collect"}};
  for (const auto& f : q->schema.fields()) sink->table.columns.push_back({f.name, CatalogColumn::Kind::kPhysical, f.type});
  sink->schema = q->schema;
  sink->inputs = {q};
  sink->pos = pos;
  return sink;
}

std::vector<LogicalPtr> StatementRunner::plan(const ast::Statement& st) {
  std::vector<LogicalPtr> sinks;
  Binder binder(catalog_, registry_, session_);
  if (const auto* ins = st.as<ast::Insert>()) {
    sinks.push_back(binder.bind_insert(*ins));
  } else if (const auto* set = st.as<ast::StatementSet>()) {
    if (set->inserts.empty()) throw TranslationError(st.pos, "a statement set needs at least one INSERT");
    for (const auto& i : set->inserts) sinks.push_back(binder.bind_insert(i));
  } else if (const auto* q = st.as<ast::QueryStatement>()) {
    sinks.push_back(plan_query_sink(*q->query, st.pos));
  } else {
    throw TranslationError(st.pos, "only INSERT, statement sets and queries have a plan");
  }
  OptimizerOptions options;
  if (auto tz = session_.find("table.local-time-zone"); tz != session_.end())
    options.session.time_zone = TimeZone::of(tz->second);
  options.distinct_agg_split_buckets = distinct_agg_split_buckets(session_, st.pos);
  for (auto& s : sinks) s = optimize(s, options);
  return reuse_scans(sinks);
}

std::string StatementRunner::job_name(const ast::Statement& st) const {
  if (const auto* ins = st.as<ast::Insert>()) return "insert-into_" + ins->table.back();
  if (const auto* set = st.as<ast::StatementSet>()) {
    std::string n = "insert-into";
    for (std::size_t i = 0; i < set->inserts.size(); ++i) n += (i ? "," : "_") + set->inserts[i].table.back();
    return n;
  }
  return fmt::format("select_{}", selects_ + 1);
}

std::string StatementRunner::explain(const ast::Statement& st) {
  const auto& e = std::get<ast::Explain>(st.node);
  const ast::Statement& inner = *e.statement;
  bool json_plan = false;
  for (const auto& d : e.details) {
    if (d == "JSON_EXECUTION_PLAN") json_plan = true;
    else if (d != "ESTIMATED_COST" && d != "CHANGELOG_MODE" && d != "PLAN_ADVICE")
      throw TranslationError(st.pos, fmt::format("unsupported EXPLAIN detail {}", d));
  }
  auto sinks = plan(inner);
  PlanProperties props;  // EXPLAIN and the job graph read one derivation
  std::string out = "== Optimized Plan ==\n" + explain_plans(sinks, &props);
  if (json_plan) {
    PhysicalPlanner planner(catalog_, session_);
    out += "\n== Job Graph ==\n" + planner.compile(sinks, job_name(inner), &props).dump(2) + "\n";
  }
  return out;
}

StatementResult StatementRunner::execute(const ast::Statement& st) {
  register_catalog_wasm_functions(catalog_);  // a loaded catalog directory's, once per process
  StatementResult r;
  auto text = [&](std::string t) {
    r.kind = StatementResult::Kind::kText;
    r.text = std::move(t);
    return r;
  };
  if (const auto* s = st.as<ast::CreateTable>()) ddl_.create_table(*s, st.pos);
  else if (const auto* s = st.as<ast::CreateView>()) ddl_.create_view(*s, st.pos);
  else if (const auto* s = st.as<ast::CreateFunction>()) ddl_.create_function(*s, st.pos);
  else if (const auto* s = st.as<ast::CreateModel>()) ddl_.create_model(*s, st.pos);
  else if (const auto* s = st.as<ast::Drop>()) {
    // Flink: a materialized table is dropped as one (its definition goes with it).
    if (s->kind == ast::Drop::Kind::Table)
      for (const auto& n : s->names)
        if (materialized_.find(n.back()))
          throw TranslationError(st.pos, fmt::format("Table `{}` is a materialized table: use DROP MATERIALIZED TABLE",
                                                     n.back()));
    ddl_.drop(*s, st.pos);
  } else if (const auto* s = st.as<ast::MaterializedTable>()) {
    MaterializedJobs jobs = jobs_;
    if (!jobs.run && on_job_) jobs.run = [this](const nlohmann::json& spec, const ast::Statement& s2) { on_job_(spec, s2); };
    if (!jobs.run)
      throw TranslationError(st.pos, "materialized tables are maintained by the process that runs their jobs and "
                                     "refreshes (`clink run`, `clink sql`, a coordinator); this session does not run jobs");
    materialized_.execute(*s, st, jobs);
  }
  else if (const auto* s = st.as<ast::AlterTable>()) {
    if (materialized_.find(s->name.back()))  // Flink's message: its schema is changed as a materialized table's
      throw TranslationError(st.pos, "ALTER TABLE for a materialized table is not allowed");
    ddl_.alter_table(*s, st.pos);
  }
  else if (const auto* s = st.as<ast::AnalyzeTable>()) ddl_.analyze(*s, st.pos);
  else if (const auto* s = st.as<ast::Show>()) {
    using W = ast::Show::What;
    if (s->what == W::MaterializedTables || s->what == W::CreateMaterializedTable) return text(materialized_.show(*s, st.pos));
    if (s->what == W::CreateTable && materialized_.find(s->object.back()))  // as Flink 2.2+
      throw TranslationError(st.pos, fmt::format("SHOW CREATE TABLE is not supported for materialized table `{}`: use "
                                                 "SHOW CREATE MATERIALIZED TABLE",
                                                 s->object.back()));
    return text(ddl_.show(*s, st.pos));
  }
  else if (const auto* s = st.as<ast::Use>()) ddl_.use(*s, st.pos);
  else if (st.as<ast::StopJob>())
    throw TranslationError(st.pos, "STOP JOB stops a job of a SQL client's cluster: run it in `clink sql --coordinator HOST:PORT`");
  else if (const auto* s = st.as<ast::Jar>()) {
    if (s->add)
      throw TranslationError(st.pos, fmt::format("ADD JAR '{}': clink runs no Java code, so jars (user-defined functions, "
                                                 "connectors, formats) cannot be added; its connectors and functions "
                                                 "are built in (SHOW FUNCTIONS lists the functions)",
                                                 s->path));
    throw TranslationError(st.pos, fmt::format("REMOVE JAR '{}': jar or artifact resource [{}] not found (SHOW JARS: "
                                               "clink adds no jars)",
                                               s->path, s->path));
  }
  else if (const auto* s = st.as<ast::Describe>()) return text(ddl_.describe(*s, st.pos));
  else if (st.as<ast::Explain>()) return text(explain(st));
  else if (const auto* s = st.as<ast::Set>()) {
    if (!s->key) {
      std::vector<std::vector<std::string>> rows;
      for (const auto& [k, v] : session_) rows.push_back({k, v});
      return text(format_tableau({"key", "value"}, rows));
    }
    if (!s->value) throw TranslationError(st.pos, fmt::format("SET '{}' needs a value", *s->key));
    if (*s->key == "execution.runtime-mode") {
      std::string mode = *s->value;
      std::transform(mode.begin(), mode.end(), mode.begin(), [](unsigned char c) { return std::tolower(c); });
      if (mode != "streaming" && mode != "batch")
        throw TranslationError(st.pos, fmt::format("SET 'execution.runtime-mode' = '{}': the mode is 'streaming' or "
                                                   "'batch' (Flink's 'automatic' is not supported: choose one)",
                                                   *s->value));
    }
    session_[*s->key] = *s->value;
  } else if (const auto* s = st.as<ast::Reset>()) {
    if (s->key) session_.erase(*s->key);
    else session_.clear();
  } else {
    auto sinks = plan(st);
    PhysicalPlanner planner(catalog_, session_);
    r.kind = StatementResult::Kind::kJob;
    r.spec = planner.compile(sinks, job_name(st));
    // The wasm functions the job calls ship in its spec (a worker needs no module file).
    if (nlohmann::json udfs = wasm_udfs_for_spec(r.spec); !udfs.empty()) r.spec["udfs"] = std::move(udfs);
    if (st.as<ast::QueryStatement>()) ++selects_;
    if (on_job_) on_job_(r.spec, st);
  }
  return r;
}

}  // namespace clink::sql
