// With --coordinator, a materialized table is the coordinator's: its catalog store keeps
// the definition and its scheduler refreshes it (docs/materialized-tables.md). The client
// plans over its own catalog, so a materialized-table statement is sent to the
// coordinator's SQL (POST /api/v1/jobs/sql) together with what its query reads from this
// client's catalog, as CREATE ... IF NOT EXISTS (an object the coordinator has already
// keeps the coordinator's definition).
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "clink/sql/catalog/catalog.hpp"
#include "clink/sql/function/function_registry.hpp"
#include "clink/sql/handler/catalog_ddl.hpp"
#include "sql_session.hpp"

namespace clink::cli {

namespace {

// "CREATE TABLE x ..." -> "CREATE TABLE IF NOT EXISTS x ..." (kind: "TABLE" / "VIEW").
std::string if_not_exists(std::string ddl, const std::string& kind) {
  const std::string head = "CREATE " + kind + " ";
  if (ddl.rfind(head, 0) == 0) ddl.insert(head.size(), "IF NOT EXISTS ");
  return ddl;
}

}  // namespace

std::string coordinator_script(sql::StatementRunner& runner, const sql::ast::Statement& statement) {
  const auto* mt = statement.as<sql::ast::MaterializedTable>();
  std::string script;
  if (mt && mt->query) {
    const sql::Catalog& catalog = runner.catalog();
    sql::CatalogDdl ddl(runner.catalog(), sql::FunctionRegistry::process(), runner.session());
    std::set<std::string> seen;
    // Depth first, a view after the tables and views it reads.
    std::function<void(const sql::ast::Query&, int)> add = [&](const sql::ast::Query& q, int depth) {
      for (const auto& name : sql::referenced_tables(q)) {
        if (!seen.insert(name).second) continue;
        if (const auto* t = catalog.table(name)) {
          script += if_not_exists(ddl.show_create_table(*t), "TABLE") + ";\n";
        } else if (const auto* v = catalog.view(name); v && v->query && depth < 32) {
          add(*v->query, depth + 1);
          script += if_not_exists(ddl.show_create_view(*v), "VIEW") + ";\n";
        }
      }
    };
    add(*mt->query, 0);
  }
  return script + statement.text + ";\n";
}

}  // namespace clink::cli
