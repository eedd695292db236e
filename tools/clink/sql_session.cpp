#include "sql_session.hpp"

#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include "clink/core/error.hpp"
#include "clink/runtime/job_graph_spec.hpp"
#include "clink/sql/common/sql_error.hpp"
#include "clink/sql/parser/parser.hpp"
#include "clink/sql/physical/physical_plan.hpp"
#include "clink/sql/planner/explain.hpp"
#include "commands.hpp"
#include "result_table.hpp"

namespace clink::cli {

std::atomic<bool>& stop_requested() {
  static std::atomic<bool> flag{false};
  return flag;
}

namespace {

class TableauPresenter final : public ResultPresenter {
 public:
  explicit TableauPresenter(std::FILE* out) : out_(out) {}
  void start(const std::vector<ResultColumn>& columns) override {
    printer_ = std::make_unique<TableauPrinter>(columns, out_);
    printer_->header();
  }
  void rows(const std::vector<ResultRow>& rows) override {
    if (!rows.empty()) printer_->rows(rows);
  }
  void finish(bool) override { printer_->footer(); }

 private:
  std::FILE* out_;
  std::unique_ptr<TableauPrinter> printer_;
};

}  // namespace

std::unique_ptr<ResultPresenter> make_tableau_presenter(std::FILE* out) {
  return std::make_unique<TableauPresenter>(out);
}

// Runs `f` when it goes out of scope.
template <class F>
struct OnExit {
  F f;
  ~OnExit() { f(); }
};

static std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string describe_error(const std::exception& e, const sql::SourcePosition& pos) {
  if (dynamic_cast<const sql::SqlError*>(&e) != nullptr || !pos.known()) return e.what();
  return fmt::format("line {}, column {}: {}", pos.line, pos.column, e.what());
}

SqlSession::SqlSession(SqlJobSettings settings, const std::string& catalog_dir, std::FILE* out)
    : settings_(std::move(settings)), out_(out), runner_(catalog_) {
  if (!catalog_dir.empty()) {
    std::filesystem::create_directories(catalog_dir);
    catalog_.load_from_dir(catalog_dir);
    catalog_.set_persistence_dir(catalog_dir);
  }
  runner_.set_analyzer([this](const sql::TableDef& t, const std::vector<std::string>& cols) { return analyze(t, cols); });
  // A materialized table's maintenance job and refreshes run here, in the foreground
  // like an INSERT's job; a full refresh's swap follows its job's end.
  runner_.set_job_runner([this](const nlohmann::json& spec, const sql::ast::Statement& st) {
    if (settings_.submit)
      throw ClinkError("with --coordinator, a materialized table's job runs on the coordinator, which keeps the "
                       "table (its statements are sent to the coordinator's SQL)");
    if (!run_job(spec, st)) throw ClinkError("the materialized table's job was stopped");
  });
  presenter_ = [out] { return make_tableau_presenter(out); };
}

JobGraph SqlSession::build(nlohmann::json& spec) const {
  if (settings_.parallelism > 0) spec["config"]["parallelism"] = settings_.parallelism;
  for (const auto& s : settings_.sets) apply_override(spec, s);
  if (settings_.rewrite_spec) settings_.rewrite_spec(spec);
  return from_spec(spec, cli_registry());
}

bool SqlSession::wait_job(JobHandle& handle, const JobGraph& graph, const std::function<void()>& tick) {
  bool stopped = false;
  while (!handle.wait_for(std::chrono::milliseconds(100))) {
    tick();
    if (!stop_requested().load()) continue;
    if (settings_.job_ended) settings_.job_ended();
    stopped = true;
    if (!settings_.savepoint_on_stop.empty()) {
      auto path = handle.stop_with_savepoint(storage_path(settings_.savepoint_on_stop));
      std::fflush(out_);
      std::fprintf(stderr, "savepoint written to %s\n", path.c_str());
    } else {
      handle.cancel();
      handle.wait_for(std::chrono::seconds(30));
    }
    break;
  }
  tick();
  if (settings_.job_ended) settings_.job_ended();
  if (settings_.metrics) print_metrics(graph, handle.metrics());
  if (!stopped) handle.wait();  // throws JobFailedError when the job failed
  return !stopped;
}

JobHandle SqlSession::launch(const JobGraph& graph, const nlohmann::json& spec, const sql::ast::Statement& statement) {
  if (!settings_.launch) return execute_async(graph, settings_.execution);
  cluster::JobTexts texts{spec.dump(), statement.text, {}};
  try {
    texts.plan = sql::explain_plans(runner_.plan(statement));
  } catch (const std::exception&) {
    // The job was planned once already; a plan that cannot be shown is no reason to fail it.
  }
  return settings_.launch(graph, settings_.execution, std::move(texts));
}

bool SqlSession::run_job(nlohmann::json spec, const sql::ast::Statement& statement) {
  if (settings_.submit) {
    for (const auto& s : settings_.sets) apply_override(spec, s);
    settings_.submit(spec);
    return true;
  }
  JobGraph graph = build(spec);
  const std::int64_t start_ms = now_ms();
  JobHandle handle = launch(graph, spec, statement);
  OnExit record{[&] { record_job(graph, handle, start_ms); }};  // for SHOW JOBS, also when it failed
  bool completed = wait_job(handle, graph, [] {});
  std::fflush(stdout);
  return completed;
}

bool SqlSession::run_select(nlohmann::json spec, const sql::ast::Statement& statement) {
  if (settings_.submit)
    throw ClinkError("a SELECT's rows cannot be shown from a job submitted to a coordinator: "
                     "write them to a table with INSERT INTO");
  RoutedSelect select(spec, fmt::format("cli_select_{}", ++streams_));
  JobGraph graph = build(spec);
  auto presenter = presenter_();
  presenter->start(select.columns);
  const std::int64_t start_ms = now_ms();
  JobHandle handle = launch(graph, spec, statement);
  OnExit record{[&] { record_job(graph, handle, start_ms); }};  // for SHOW JOBS, also when it failed
  bool completed = false;
  try {
    completed = wait_job(handle, graph, [&] { presenter->rows(select.stream->take(0)); });
  } catch (...) {
    presenter->finish(false);
    throw;
  }
  presenter->finish(!completed);
  return completed;
}

bool SqlSession::execute(const sql::ast::Statement& st) {
  // The SQL client's job statements: answered here (the planner has no jobs).
  std::string client_text;
  if (const auto* show = st.as<sql::ast::Show>(); show && show->what == sql::ast::Show::What::Jobs) client_text = show_jobs();
  else if (const auto* stop = st.as<sql::ast::StopJob>()) client_text = stop_job(*stop);
  if (st.as<sql::ast::StopJob>() || !client_text.empty()) {
    std::fputs(client_text.c_str(), out_);
    std::fflush(out_);
    return true;
  }
  if (settings_.forward_sql && st.as<sql::ast::MaterializedTable>()) {
    settings_.forward_sql(coordinator_script(runner_, st));
    return true;
  }
  sql::StatementResult r = runner_.execute(st);
  switch (r.kind) {
    case sql::StatementResult::Kind::kOk: return true;
    case sql::StatementResult::Kind::kText:
      std::fputs(r.text.c_str(), out_);
      if (!r.text.empty() && r.text.back() != '\n') std::fputc('\n', out_);
      std::fflush(out_);
      return true;
    case sql::StatementResult::Kind::kJob:
      if (st.as<sql::ast::QueryStatement>()) return run_select(std::move(r.spec), st);
      return run_job(std::move(r.spec), st);
  }
  return true;
}

std::string SqlSession::explain(const sql::ast::Statement& st, bool with_spec) {
  if (!st.as<sql::ast::Insert>() && !st.as<sql::ast::StatementSet>() && !st.as<sql::ast::QueryStatement>()) {
    if (st.as<sql::ast::Explain>()) return runner_.execute(st).text;
    runner_.execute(st);  // DDL and SET shape the plans of later statements
    return "";
  }
  auto sinks = runner_.plan(st);
  std::string out = "== Optimized Plan ==\n" + sql::explain_plans(sinks);
  if (!out.empty() && out.back() != '\n') out += '\n';
  if (with_spec) {
    sql::PhysicalPlanner planner(runner_.catalog(), runner_.session());
    out += "\n== JobGraphSpec ==\n" + planner.compile(sinks, "explain").dump(2) + "\n";
  }
  return out;
}

// ANALYZE TABLE: one bounded job computing the row count and, per column, the number of
// distinct values, NULLs, minimum and maximum.
sql::TableStatistics SqlSession::analyze(const sql::TableDef& table, const std::vector<std::string>& columns) {
  std::string select = "SELECT COUNT(*)";
  for (const auto& c : columns)
    select += fmt::format(", COUNT(DISTINCT `{0}`), COUNT(*) - COUNT(`{0}`), CAST(MIN(`{0}`) AS STRING), CAST(MAX(`{0}`) AS STRING)", c);
  select += fmt::format(" FROM `{}`", table.name);
  sql::ast::Script script = sql::parse(select);
  sql::StatementRunner inner(catalog_);
  auto quote = [](std::string text) {
    for (std::size_t i = text.find('\''); i != std::string::npos; i = text.find('\'', i + 2)) text.insert(i, 1, '\'');
    return "'" + text + "'";
  };
  for (const auto& [k, v] : runner_.session())
    inner.execute(sql::parse(fmt::format("SET {} = {}", quote(k), quote(v))).statements.at(0));
  sql::StatementResult r = inner.execute(script.statements.at(0));
  RoutedSelect routed(r.spec, fmt::format("cli_analyze_{}", ++streams_));
  JobGraph graph = from_spec(r.spec, cli_registry());
  clink::execute(graph);  // no checkpoints or restore: a statistics job of its own
  MaterializedTable result(routed.columns);
  result.apply(routed.stream->take(0));
  if (result.rows().size() != 1) throw ClinkError(fmt::format("ANALYZE TABLE {}: expected one result row", table.name));
  const auto& row = result.rows()[0];
  sql::TableStatistics stats;
  stats.analyzed = true;
  stats.row_count = std::stoll(row[0].value_or("0"));
  for (std::size_t i = 0; i < columns.size(); ++i) {
    sql::ColumnStatistics cs;
    cs.ndv = std::stoll(row[1 + 4 * i].value_or("0"));
    cs.null_count = std::stoll(row[2 + 4 * i].value_or("0"));
    cs.min = row[3 + 4 * i];
    cs.max = row[4 + 4 * i];
    stats.columns[columns[i]] = cs;
  }
  return stats;
}

}  // namespace clink::cli
