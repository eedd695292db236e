// SHOW / DESCRIBE / SHOW CREATE in the SQL client's formats, and ANALYZE TABLE.
#include <algorithm>
#include <iterator>
#include <cctype>

#include <fmt/format.h>

#include "clink/sql/common/multiset_type.hpp"
#include "clink/sql/handler/catalog_ddl.hpp"
#include "clink/sql/parser/flink_sql_text.hpp"
#include "clink/sql/spec/connector_table.hpp"

namespace clink::sql {

namespace {

[[noreturn]] void fail(SourcePosition pos, const std::string& message) { throw TranslationError(pos, message); }

std::string q(const std::string& id) { return ast::backquoted_identifier(id); }  // as Flink, every identifier

std::string bool_text(bool b) { return b ? "TRUE" : "FALSE"; }

// A type as SHOW CREATE TABLE prints it: Flink's LogicalType#asSerializableString, which
// spells STRING and BYTES out and TIMESTAMP_LTZ as TIMESTAMP WITH LOCAL TIME ZONE.
std::string serializable_type(const LogicalType& t) {
  std::string s;
  switch (t.kind()) {
    case TypeKind::kVarChar:
    case TypeKind::kVarBinary:
      s = fmt::format("{}({})", t.is(TypeKind::kVarChar) ? "VARCHAR" : "VARBINARY", t.precision());
      break;
    case TypeKind::kTimestampLtz: s = fmt::format("TIMESTAMP({}) WITH LOCAL TIME ZONE", t.precision()); break;
    case TypeKind::kArray: s = "ARRAY<" + serializable_type(t.element_type()) + ">"; break;
    case TypeKind::kMap:
      s = is_multiset(t) ? "MULTISET<" + serializable_type(t.key_type()) + ">"
                         : "MAP<" + serializable_type(t.key_type()) + ", " + serializable_type(t.value_type()) + ">";
      break;
    case TypeKind::kRow: {
      std::vector<std::string> fields;
      for (const auto& f : t.fields()) fields.push_back(q(f.name) + " " + serializable_type(f.type));
      s = fmt::format("ROW<{}>", fmt::join(fields, ", "));
      break;
    }
    default: return t.to_string();
  }
  return t.nullable() ? s : s + " NOT NULL";
}

std::string expression_text(const ast::ExprPtr& e, const std::string& stored) {
  return e ? ast::to_flink_string(*e) : stored;
}

}  // namespace

std::string format_tableau(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  if (rows.empty()) return "Empty set\n";  // no header box, as Flink's SQL client prints it
  // Widths in characters (code points), as the SQL client pads them.
  auto width = [](const std::string& s) {
    std::size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80 ? 1 : 0;
    return n;
  };
  std::vector<std::size_t> w(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) w[i] = width(header[i]);
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], width(r[i]));
  std::string border = "+";
  for (auto x : w) border += std::string(x + 2, '-') + "+";
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s = "|";
    for (std::size_t i = 0; i < cells.size(); ++i) s += " " + std::string(w[i] - width(cells[i]), ' ') + cells[i] + " |";
    return s + "\n";
  };
  std::string out = border + "\n" + line(header) + border + "\n";
  for (const auto& r : rows) out += line(r);
  out += border + "\n";
  out += fmt::format("{} row{} in set\n", rows.size(), rows.size() == 1 ? "" : "s");
  return out;
}

namespace {

// SQL LIKE: '%' any run, '_' one character (a UTF-8 code point).
bool like(std::string_view s, std::string_view p) {
  auto step = [](std::string_view t, std::size_t i) {  // past the code point at i
    ++i;
    while (i < t.size() && (static_cast<unsigned char>(t[i]) & 0xC0) == 0x80) ++i;
    return i;
  };
  std::size_t si = 0, pi = 0, star_p = std::string_view::npos, star_s = 0;
  while (si < s.size()) {
    if (pi < p.size() && p[pi] == '%') {
      star_p = ++pi;
      star_s = si;
    } else if (pi < p.size() && p[pi] == '_') {
      si = step(s, si);
      pi = step(p, pi);
    } else if (pi < p.size() && p[pi] == s[si]) {
      ++si;
      ++pi;
    } else if (star_p != std::string_view::npos) {
      pi = star_p;
      si = star_s = step(s, star_s);
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '%') ++pi;
  return pi == p.size();
}

}  // namespace

std::vector<std::string> show_filter(const ast::Show& stmt, std::vector<std::string> names, SourcePosition pos) {
  const auto& db = stmt.object;
  if (!db.empty() && (db.size() > 2 || db.back() != kDefaultDatabase || (db.size() == 2 && db[0] != kDefaultCatalog)))
    fail(pos, fmt::format("Database '{}'.'{}' doesn't exist.", db.size() == 2 ? db[0] : kDefaultCatalog, db.back()));
  if (stmt.like)
    names.erase(std::remove_if(names.begin(), names.end(),
                               [&](const std::string& n) { return like(n, *stmt.like) == stmt.not_like; }),
                names.end());
  return names;
}

std::string CatalogDdl::show(const ast::Show& stmt, SourcePosition pos) const {
  using W = ast::Show::What;
  auto list = [&](const char* header, const std::vector<std::string>& names) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& n : show_filter(stmt, names, pos)) rows.push_back({n});
    return format_tableau({header}, rows);
  };
  switch (stmt.what) {
    case W::Tables: {
      // Flink lists views among the tables.
      auto names = catalog_.table_names();
      auto views = catalog_.view_names();
      names.insert(names.end(), views.begin(), views.end());
      std::sort(names.begin(), names.end());
      return list("table name", names);
    }
    case W::Views: return list("view name", catalog_.view_names());
    case W::Functions:
    case W::UserFunctions: {
      std::vector<std::string> names = catalog_.function_names();
      if (stmt.what == W::Functions) {
        auto s = registry_.scalar_names();
        auto a = registry_.aggregate_names();
        // Operators (+, =, IS NULL ...) and the planner's internal variants ($SUM,
        // $OVER_STDDEV ...) are not listed, only named functions.
        auto named = [](const std::string& n) {
          return std::all_of(n.begin(), n.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
        };
        std::copy_if(s.begin(), s.end(), std::back_inserter(names), named);
        std::copy_if(a.begin(), a.end(), std::back_inserter(names), named);
        std::vector<std::string> aggs = {"AVG", "COUNT", "MAX", "MIN", "SUM"};
        for (const auto& x : aggs)
          if (std::find(names.begin(), names.end(), x) == names.end()) names.push_back(x);
      }
      std::sort(names.begin(), names.end());
      names.erase(std::unique(names.begin(), names.end()), names.end());
      return list("function name", names);
    }
    // One catalog and one database, named as Flink names its defaults.
    case W::Catalogs: return list("catalog name", {std::string(kDefaultCatalog)});
    case W::Databases: return list("database name", {std::string(kDefaultDatabase)});
    case W::CurrentCatalog: return list("current catalog name", {std::string(kDefaultCatalog)});
    case W::CurrentDatabase: return list("current database name", {std::string(kDefaultDatabase)});
    case W::Jars: return "Empty set\n";  // ADD JAR is refused: the list stays empty
    case W::Models: return list("model name", catalog_.model_names());
    case W::MaterializedTables:
    case W::CreateMaterializedTable:
      fail(pos, "materialized tables are shown by the statement runner");  // StatementRunner::execute
    case W::CreateModel: return show_create_model(stmt, pos);
    case W::Jobs:
      fail(pos, "SHOW JOBS lists the jobs of a SQL client: run it in `clink sql` (with --coordinator for a cluster's)");
    case W::CreateTable:
    case W::CreateView:
    case W::Columns: {
      std::string name = stmt.object.empty() ? "" : stmt.object.back();
      if (stmt.what == W::Columns) {
        ast::Describe d;
        d.table = stmt.object;
        return describe(d, pos);
      }
      if (const TableDef* t = catalog_.table(name)) {
        if (stmt.what == W::CreateView)
          fail(pos, fmt::format("SHOW CREATE VIEW {}: `{}` is a table, not a view (use SHOW CREATE TABLE)", name, name));
        return show_create_table(*t);
      }
      if (const ViewDef* v = catalog_.view(name)) {
        if (stmt.what == W::CreateTable)
          fail(pos, fmt::format("SHOW CREATE TABLE {}: `{}` is a view, not a table (use SHOW CREATE VIEW)", name, name));
        return show_create_view(*v);
      }
      fail(pos, fmt::format("table or view `{}` does not exist", name));
    }
  }
  return "";
}

void CatalogDdl::use(const ast::Use& stmt, SourcePosition pos) const {
  const auto& n = stmt.name;
  if (stmt.catalog) {
    if (n.size() != 1 || n[0] != kDefaultCatalog)
      fail(pos, fmt::format("A catalog with name [{}] does not exist. (clink has one catalog, {})", fmt::join(n, "."),
                            kDefaultCatalog));
    return;
  }
  // USE db or USE catalog.db
  if (n.size() == 2 && n[0] != kDefaultCatalog)
    fail(pos, fmt::format("A catalog with name [{}] does not exist. (clink has one catalog, {})", n[0], kDefaultCatalog));
  if (n.size() > 2 || n.back() != kDefaultDatabase)
    fail(pos, fmt::format("A database with name [{}] does not exist in the catalog: [{}]. (clink has one database, {})",
                          n.back(), kDefaultCatalog, kDefaultDatabase));
}

std::vector<std::string> show_create_schema_lines(const TableDef& t) {
  std::vector<std::string> lines;
  for (const auto& c : t.columns) {
    std::string s = "  " + q(c.name) + " ";
    switch (c.kind) {
      case CatalogColumn::Kind::kPhysical: s += serializable_type(c.type); break;
      case CatalogColumn::Kind::kComputed: s += "AS " + expression_text(c.expr, c.expr_sql); break;
      case CatalogColumn::Kind::kMetadata:
        s += serializable_type(c.type) + " METADATA";
        if (c.metadata_key) s += " FROM '" + *c.metadata_key + "'";
        if (c.is_virtual) s += " VIRTUAL";
        break;
    }
    if (!c.comment.empty()) s += " COMMENT " + ast::quote_string(c.comment);
    lines.push_back(s);
  }
  if (t.watermark)
    lines.push_back(fmt::format("  WATERMARK FOR {} AS {}", q(t.watermark->rowtime_column),
                                expression_text(t.watermark->expr, t.watermark->expr_sql)));
  if (!t.primary_key.empty()) {
    std::vector<std::string> cols;
    for (const auto& k : t.primary_key) cols.push_back(q(k));
    lines.push_back(fmt::format("  CONSTRAINT {} PRIMARY KEY ({}) NOT ENFORCED", q(t.primary_key_name), fmt::join(cols, ", ")));
  }
  return lines;
}

std::string CatalogDdl::show_create_table(const TableDef& t) const {
  const std::vector<std::string> lines = show_create_schema_lines(t);
  std::string out = fmt::format("CREATE {}TABLE `default_catalog`.`default_database`.{} (\n", t.temporary ? "TEMPORARY " : "", q(t.name));
  out += fmt::format("{}\n)", fmt::join(lines, ",\n"));
  if (!t.comment.empty()) out += "\nCOMMENT " + ast::quote_string(t.comment);
  if (!t.partitioned_by.empty()) {
    std::vector<std::string> cols;
    for (const auto& p : t.partitioned_by) cols.push_back(q(p));
    out += fmt::format("\nPARTITIONED BY ({})", fmt::join(cols, ", "));
  }
  std::vector<std::string> opts;  // in key order, as Flink prints them
  for (const auto& [k, v] : t.options) opts.push_back(fmt::format("  {} = {}", ast::quote_string(k), ast::quote_string(v)));
  std::sort(opts.begin(), opts.end());
  out += fmt::format("\nWITH (\n{}\n)\n", fmt::join(opts, ",\n"));
  return out;
}

std::string CatalogDdl::show_create_view(const ViewDef& v) const {
  // Flink's layout; the query as written (Flink prints its expanded, fully qualified form).
  std::vector<std::string> cols;
  for (const auto& f : v.schema.fields()) cols.push_back("  " + q(f.name));
  return fmt::format("CREATE {}VIEW `default_catalog`.`default_database`.{} (\n{}\n)\nAS {}\n", v.temporary ? "TEMPORARY " : "",
                     q(v.name), fmt::join(cols, ",\n"), v.query_sql);
}

std::string CatalogDdl::describe(const ast::Describe& stmt, SourcePosition pos) const {
  std::string name = stmt.table.empty() ? "" : stmt.table.back();
  std::vector<std::vector<std::string>> rows;
  if (const ViewDef* v = catalog_.view(name)) {
    for (const auto& f : v->schema.fields())
      rows.push_back({f.name, f.type.with_nullable(true).to_string(), bool_text(f.type.nullable()), "", "", ""});
    return format_tableau({"name", "type", "null", "key", "extras", "watermark"}, rows);
  }
  const TableDef* t = catalog_.table(name);
  if (!t) fail(pos, fmt::format("table or view `{}` does not exist", name));
  std::string pk;
  if (!t->primary_key.empty()) pk = fmt::format("PRI({})", fmt::join(t->primary_key, ", "));
  for (const auto& c : t->columns) {
    std::string type = c.type.with_nullable(true).to_string();
    bool rowtime = t->watermark && t->watermark->rowtime_column == c.name;
    if (rowtime) type += " *ROWTIME*";
    std::string key = std::find(t->primary_key.begin(), t->primary_key.end(), c.name) != t->primary_key.end() ? pk : "";
    std::string extras;
    if (c.kind == CatalogColumn::Kind::kComputed) extras = "AS " + expression_text(c.expr, c.expr_sql);
    if (c.kind == CatalogColumn::Kind::kMetadata) {
      extras = "METADATA";
      if (c.metadata_key) extras += " FROM '" + *c.metadata_key + "'";
      if (c.is_virtual) extras += " VIRTUAL";
    }
    rows.push_back({c.name, type, bool_text(c.type.nullable()), key, extras, rowtime ? expression_text(t->watermark->expr, t->watermark->expr_sql) : ""});
  }
  return format_tableau({"name", "type", "null", "key", "extras", "watermark"}, rows);
}

void CatalogDdl::analyze(const ast::AnalyzeTable& stmt, SourcePosition pos) {
  std::string name = stmt.table.empty() ? "" : stmt.table.back();
  const TableDef* t = catalog_.table(name);
  if (!t) {
    if (catalog_.view(name)) fail(pos, fmt::format("ANALYZE TABLE {}: `{}` is a view, not a table", name, name));
    fail(pos, fmt::format("table `{}` does not exist", name));
  }
  if (!stmt.partition.empty()) fail(pos, "ANALYZE TABLE ... PARTITION is not supported");
  std::vector<std::string> columns = stmt.columns;
  if (stmt.for_all_columns)
    for (const auto& c : t->columns) columns.push_back(c.name);
  for (const auto& c : columns)
    if (!t->column(c)) fail(pos, fmt::format("ANALYZE TABLE {}: column `{}` does not exist", name, c));
  std::string connector = t->connector();
  if (!sql_source_bounded(connector, t->options))
    fail(pos, fmt::format("ANALYZE TABLE {}: the {} source is unbounded (ANALYZE runs bounded sources: {})", name,
                          connector.empty() ? "unnamed" : connector, sql_bounded_sources_text()));
  if (!analyzer_)
    fail(pos, fmt::format("ANALYZE TABLE {}: no job runner is available here to read the source; declare "
                          "'statistics.row-count' (and 'statistics.columns.<col>.ndv') in the table options",
                          name));
  TableStatistics stats = analyzer_(*t, columns);
  stats.analyzed = true;
  TableDef updated = *t;
  updated.analyzed_statistics = std::move(stats);
  catalog_.replace_table(name, std::move(updated));
}

}  // namespace clink::sql
