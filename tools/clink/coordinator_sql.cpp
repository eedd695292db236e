#include "coordinator_sql.hpp"

#include <set>

#include <fmt/format.h>

#include "clink/core/log.hpp"
#include "clink/sql/handler/statement_runner.hpp"
#include "clink/sql/parser/parser.hpp"
#include "clink/sql/planner/explain.hpp"
#include "refresh_scheduler.hpp"
#include "sql_session.hpp"

namespace clink::cli {

namespace {

// Store names: "<kind>/<object name>".
constexpr const char* kTable = "table/";
constexpr const char* kView = "view/";
constexpr const char* kFunction = "function/";
constexpr const char* kMaterialized = "materialized/";

}  // namespace

CoordinatorSql::CoordinatorSql(cluster::Dispatcher& dispatcher, cluster::CatalogStore& store)
    : dispatcher_(dispatcher), store_(store) {
  // Tables first: views and functions may refer to them.
  for (const char* kind : {kTable, kFunction, kView})
    for (const auto& name : store_.names()) {
      if (name.rfind(kind, 0) != 0) continue;
      auto blob = store_.get(name);
      if (!blob) continue;
      auto j = nlohmann::json::parse(*blob);
      if (kind == kTable) catalog_.add_table(sql::Catalog::table_from_json(j));
      else if (kind == kView) catalog_.add_view(sql::Catalog::view_from_json(j));
      else catalog_.add_function(sql::Catalog::function_from_json(j), /*replace=*/true);
    }
  for (const auto& name : store_.names()) {
    if (name.rfind(kMaterialized, 0) != 0) continue;
    if (auto blob = store_.get(name)) {
      auto def = sql::MaterializedTableDef::from_json(nlohmann::json::parse(*blob));
      (*materialized_)[def.name] = std::move(def);
    }
  }
}

CoordinatorSql::~CoordinatorSql() { stop_refreshing(); }

void CoordinatorSql::prepare(sql::StatementRunner& runner, std::function<cluster::SubmitOptions()> options) {
  runner.materialized().share_definitions(materialized_);
  auto texts = [](const sql::ast::Statement& st) { return cluster::JobTexts{{}, st.text, {}}; };
  sql::MaterializedJobs jobs;
  // A refresh: submitted and awaited; the swap follows its end. Marked, so that a new
  // leader does not resume it (its scheduler refreshes again).
  jobs.run = [this, options, texts](const nlohmann::json& spec, const sql::ast::Statement& st) {
    if (stopping_.load()) throw ClinkError("the coordinator is stopping");
    cluster::SubmitOptions o = options();
    o.raw[kRefreshJobOption] = spec.value("name", "");
    const std::string id = dispatcher_.submit(spec, o, {}, texts(st));
    auto job = dispatcher_.job(id);
    job->handle.wait();  // throws when the job failed
    if (job->status() != JobStatus::kFinished)
      throw ClinkError(fmt::format("the refresh job {} ended {}", id, job_status_name(job->status())));
  };
  jobs.start = [this, options, texts](const nlohmann::json& spec, const sql::ast::Statement& st) {
    return dispatcher_.submit(spec, options(), {}, texts(st));
  };
  jobs.cancel = [this](const std::string& id) {
    try {
      if (!dispatcher_.job(id)->terminal()) dispatcher_.cancel(id);
    } catch (const cluster::NotFoundError&) {  // ended before this leader (nothing to stop)
    }
  };
  runner.set_materialized_jobs(std::move(jobs));
}

void CoordinatorSql::start_refreshing() {
  scheduler_ = std::make_unique<RefreshScheduler>([this](std::int64_t now_ms) {
    std::lock_guard lock(mu_);
    sql::StatementRunner runner(catalog_);
    prepare(runner, [this] { return cluster::parse_submit_options(nlohmann::json::object(), dispatcher_.configuration()); });
    bool ran = false;
    const std::int64_t next = runner.materialized().refresh_due(
        now_ms, runner.materialized_jobs().run, [&ran](const std::string& name, const std::exception* failure) {
          ran = true;
          if (failure)
            log::warn("refresh of materialized table {} failed: {}; it runs again at its next scheduled time", name,
                      failure->what());
          else
            log::info("refreshed materialized table {}", name);
        });
    if (ran && !stopping_.load()) save();  // a stopping leader leaves the schedule to its successor
    return next;
  });
}

void CoordinatorSql::stop_refreshing() {
  stopping_.store(true);
  if (scheduler_) scheduler_->request_stop();
}

std::vector<std::string> CoordinatorSql::run(const std::string& script, const nlohmann::json& options) {
  std::lock_guard lock(mu_);
  std::vector<std::string> ids;
  const auto submit = cluster::parse_submit_options(options, dispatcher_.configuration());
  sql::ast::Script parsed;
  try {
    parsed = sql::parse(script);  // the whole script parses before anything runs
  } catch (const std::exception& e) {
    throw cluster::BadRequestError(e.what());  // a parse error names its line and column
  }
  // SETs belong to this script; the catalog to every script.
  sql::StatementRunner runner(catalog_);
  prepare(runner, [submit] { return submit; });
  for (const auto& st : parsed.statements) {
    try {
      sql::StatementResult r = runner.execute(st);
      if (r.kind != sql::StatementResult::Kind::kJob) continue;
      if (st.as<sql::ast::QueryStatement>())
        throw cluster::BadRequestError("a SELECT's rows need a client that shows them: run it with `clink sql` or "
                                       "`clink run` (the coordinator runs INSERTs and statement sets)");
      // The statement and its optimised plan go with the job (GET /jobs/:id/sql, the web
      // UI), as `clink run` registers its SQL jobs (SqlSession::launch).
      ids.push_back(dispatcher_.submit(r.spec, submit, {}, cluster::JobTexts{{}, st.text, sql::explain_plans(runner.plan(st))}));
    } catch (const cluster::BadRequestError& e) {
      save();
      throw cluster::BadRequestError(describe_error(e, st.pos));
    } catch (const std::exception& e) {
      save();
      throw cluster::BadRequestError(describe_error(e, st.pos));
    }
  }
  save();
  return ids;
}

void CoordinatorSql::save() {
  std::set<std::string> now;
  auto put = [&](const std::string& name, const nlohmann::json& def) {
    now.insert(name);
    std::string blob = def.dump();
    if (store_.get(name) != blob) store_.put(name, blob);
  };
  for (const auto& n : catalog_.table_names()) put(kTable + n, sql::Catalog::to_json(*catalog_.table(n)));
  for (const auto& n : catalog_.view_names()) put(kView + n, sql::Catalog::to_json(*catalog_.view(n)));
  for (const auto& n : catalog_.function_names()) put(kFunction + n, sql::Catalog::to_json(*catalog_.function(n)));
  for (const auto& [n, def] : *materialized_) put(kMaterialized + n, def.to_json());
  for (const auto& name : store_.names())
    if (!now.count(name)) store_.remove(name);
}

}  // namespace clink::cli
