#include "coordinator_sql.hpp"

#include <set>

#include "clink/sql/handler/statement_runner.hpp"
#include "clink/sql/parser/parser.hpp"
#include "clink/sql/planner/explain.hpp"
#include "sql_session.hpp"

namespace clink::cli {

namespace {

// Store names: "<kind>/<object name>".
constexpr const char* kTable = "table/";
constexpr const char* kView = "view/";
constexpr const char* kFunction = "function/";

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
  for (const auto& name : store_.names())
    if (!now.count(name)) store_.remove(name);
}

}  // namespace clink::cli
