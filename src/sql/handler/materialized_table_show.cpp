// SHOW MATERIALIZED TABLES and SHOW CREATE MATERIALIZED TABLE, as Flink 2.3's SQL client
// prints them (flink-sql-client's materialized_table.q): the definition's clauses in
// Flink's order, the query as it was written.
#include <algorithm>

#include <fmt/format.h>

#include "clink/sql/handler/catalog_ddl.hpp"
#include "clink/sql/handler/materialized_table.hpp"
#include "clink/sql/parser/flink_sql_text.hpp"

namespace clink::sql {

namespace {

// Flink's SHOW CREATE quotes every identifier.
std::string q(const std::string& id) { return ast::backquoted_identifier(id); }

// FRESHNESS = INTERVAL '<n>' <unit>, in the largest unit that divides it.
std::string freshness_text(std::int64_t ms) {
  struct Unit {
    std::int64_t ms;
    const char* name;
  };
  for (Unit u : {Unit{86'400'000, "DAY"}, Unit{3'600'000, "HOUR"}, Unit{60'000, "MINUTE"}, Unit{1000, "SECOND"}})
    if (ms % u.ms == 0) return fmt::format("INTERVAL '{}' {}", ms / u.ms, u.name);
  return fmt::format("INTERVAL '{}' SECOND", ms / 1000.0);
}

}  // namespace

std::string MaterializedTables::show(const ast::Show& stmt, SourcePosition pos) const {
  if (stmt.what == ast::Show::What::MaterializedTables) {
    std::vector<std::string> names;
    for (const auto& d : all()) names.push_back(d.name);
    std::vector<std::vector<std::string>> rows;
    for (const auto& n : show_filter(stmt, names, pos)) rows.push_back({n});
    return format_tableau({"materialized table"}, rows);
  }
  const std::string& name = stmt.object.back();
  auto def = find(name);
  if (!def) {
    if (catalog_.has(name))
      throw TranslationError(pos, fmt::format("{} `{}` is not a materialized table (use SHOW CREATE {})",
                                              to_string(*catalog_.kind_of(name)), name,
                                              catalog_.view(name) ? "VIEW" : "TABLE"));
    throw TranslationError(pos, fmt::format("Materialized table `{}` does not exist", name));
  }
  std::string out = fmt::format("CREATE MATERIALIZED TABLE `{}`.`{}`.{}", kDefaultCatalog, kDefaultDatabase, q(name));
  const TableDef* backing = catalog_.table(name);
  const bool derived_only =  // the columns are the query's: only a key is declared (as CREATE takes it)
      !backing || (!backing->watermark && std::all_of(backing->columns.begin(), backing->columns.end(), [](const auto& c) {
        return c.kind == CatalogColumn::Kind::kPhysical;
      }));
  if (!derived_only) {  // ALTER ... ADD gave it computed or metadata columns or a watermark: the schema, as Flink prints it
    out += fmt::format(" (\n{}\n)", fmt::join(show_create_schema_lines(*backing), ",\n"));
  } else if (!def->primary_key.empty()) {
    std::vector<std::string> cols;
    for (const auto& k : def->primary_key) cols.push_back(q(k));
    const std::string constraint = backing && !backing->primary_key_name.empty() ? backing->primary_key_name : "PK_" + name;
    out += fmt::format(" (\n  CONSTRAINT {} PRIMARY KEY ({}) NOT ENFORCED\n)", q(constraint), fmt::join(cols, ", "));
  }
  if (backing && !backing->comment.empty()) out += "\nCOMMENT " + ast::quote_string(backing->comment);
  if (!def->partitioned_by.empty()) {
    std::vector<std::string> cols;
    for (const auto& p : def->partitioned_by) cols.push_back(q(p));
    out += fmt::format("\nPARTITIONED BY ({})", fmt::join(cols, ", "));
  }
  std::vector<std::string> opts;
  if (backing)
    for (const auto& [k, v] : backing->options)
      opts.push_back(fmt::format("  {} = {}", ast::quote_string(k), ast::quote_string(v)));
  for (const auto& [field, pattern] : def->date_formatters)
    opts.push_back(fmt::format("  {} = {}", ast::quote_string("partition.fields." + field + ".date-formatter"),
                               ast::quote_string(pattern)));
  if (!opts.empty()) out += fmt::format("\nWITH (\n{}\n)", fmt::join(opts, ",\n"));
  out += fmt::format("\nFRESHNESS = {}\nREFRESH_MODE = {}\nAS {}\n", freshness_text(def->freshness_ms), def->refresh_mode,
                     def->query_sql);
  return out;
}

}  // namespace clink::sql
