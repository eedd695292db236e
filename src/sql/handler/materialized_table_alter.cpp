// ALTER MATERIALIZED TABLE t ADD | MODIFY | DROP ...: Flink 2.3's schema changes of a
// materialized table, with the rules and messages of its SqlAlterMaterializedTable*Schema
// converters (checked on Flink 2.3 over a materialized table put in its catalog):
//   - the persisted columns (physical, stored metadata) are the query's: ADD and MODIFY may
//     name one only when the query produces it, and DROP refuses every column the query
//     produces, so computed and virtual metadata columns are what ADD and DROP move;
//   - MODIFY keeps a column's kind and may change a physical column's type only as an
//     implicit cast does (never to NOT NULL from nullable);
//   - watermarks and the primary key are added, modified and dropped as on a table (a key
//     column must be NOT NULL).
// The change is applied to the backing table by ALTER TABLE's mechanism (CatalogDdl).
// Then, as Flink's lifecycle: a FULL table's next refresh writes the new schema; an
// activated CONTINUOUS table's maintenance job is restarted on it (Flink suspends the job
// and starts a new one without its state); a suspended one gets it when resumed.
#include <algorithm>

#include <fmt/format.h>

#include "clink/sql/binder/binder.hpp"
#include "clink/sql/common/sql_error.hpp"
#include "clink/sql/handler/catalog_ddl.hpp"
#include "clink/sql/handler/materialized_table.hpp"
#include "clink/sql/parser/parser.hpp"

namespace clink::sql {

namespace {

TranslationError refused(SourcePosition pos, const std::string& why) {
  return TranslationError(pos, "Failed to execute ALTER MATERIALIZED TABLE statement.\n" + why);
}

bool persisted(const ast::ColumnDef& c) {
  return c.kind == ast::ColumnDef::Kind::Physical || (c.kind == ast::ColumnDef::Kind::Metadata && !c.is_virtual);
}

const char* kind_name(ast::ColumnDef::Kind k) {
  switch (k) {
    case ast::ColumnDef::Kind::Physical: return "physical";
    case ast::ColumnDef::Kind::Computed: return "computed";
    case ast::ColumnDef::Kind::Metadata: return "metadata";
  }
  return "";
}

const char* kind_name(CatalogColumn::Kind k) {
  switch (k) {
    case CatalogColumn::Kind::kPhysical: return "physical";
    case CatalogColumn::Kind::kComputed: return "computed";
    case CatalogColumn::Kind::kMetadata: return "metadata";
  }
  return "";
}

bool same_kind(ast::ColumnDef::Kind a, CatalogColumn::Kind b) { return std::string_view(kind_name(a)) == kind_name(b); }

// Flink's LogicalTypeCasts.supportsImplicitCast as its MODIFY applies it: never from
// nullable to NOT NULL; within one type root any length or precision; else the implicit
// cast table.
bool implicitly_castable(const LogicalType& from, const LogicalType& to) {
  if (from.nullable() && !to.nullable()) return false;
  return from.kind() == to.kind() || supports_implicit_cast(from, to);
}

bool contains(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

std::string backticked(const std::vector<std::string>& names, const char* quote = "`") {
  std::vector<std::string> out;
  for (const auto& n : names) out.push_back(quote + n + quote);
  return fmt::format("{}", fmt::join(out, ", "));
}

// The computed column of `t` that reads one of `dropped` (each bound alone against the
// columns that stay), as Flink names it; none when the remaining columns do not validate
// by themselves (another check reports that).
std::optional<std::string> computed_reader(const CatalogDdl& ddl, const TableDef& t, const std::vector<std::string>& dropped) {
  TableDef base = t;
  base.columns.clear();
  base.watermark.reset();
  base.primary_key.clear();
  base.primary_key_name.clear();
  base.partitioned_by.clear();
  for (const auto& c : t.columns)
    if (c.kind != CatalogColumn::Kind::kComputed && !contains(dropped, c.name)) base.columns.push_back(c);
  if (base.columns.empty()) return std::nullopt;
  for (const auto& c : t.columns) {
    if (c.kind != CatalogColumn::Kind::kComputed || contains(dropped, c.name)) continue;
    TableDef trial = base;
    trial.columns.push_back(c);
    try {
      ddl.validate_table(trial, {});
    } catch (const SqlError&) {
      return c.name;
    }
  }
  return std::nullopt;
}

}  // namespace

void MaterializedTables::alter_schema(MaterializedTableDef def, const ast::MaterializedTable& m, const ast::Statement& st,
                                      const MaterializedJobs& jobs) {
  using K = ast::AlterAction::Kind;
  ast::AlterAction a = *m.schema_change;
  const SourcePosition at = a.pos.known() ? a.pos : st.pos;
  const TableDef* backing = catalog_.table(def.name);
  if (!backing) throw TranslationError(st.pos, fmt::format("Materialized table `{}` has no backing table", def.name));
  const TableDef before = *backing;
  ast::Script stored = parse(def.query_sql);
  const auto* stored_query = stored.statements.size() == 1 ? stored.statements[0].as<ast::QueryStatement>() : nullptr;
  if (!stored_query) throw TranslationError(st.pos, "the stored query of a materialized table is not a query: " + def.query_sql);
  Binder binder(catalog_, registry_, session_);
  const Schema query = binder.bind_select(*stored_query->query)->schema;
  CatalogDdl ddl(catalog_, registry_, session_);

  switch (a.kind) {
    case K::Add:
    case K::Modify: {
      const bool add = a.kind == K::Add;
      auto& el = a.elements;
      for (const auto& c : el.columns) {
        const SourcePosition cp = c.pos.known() ? c.pos : at;
        if (persisted(c) && !query.index_of(c.name))
          throw refused(cp, fmt::format("Invalid schema change. All persisted (physical and metadata) columns in the "
                                        "schema part need to be present in the query part.\nHowever, {} column `{}` "
                                        "could not be found in the query.",
                                        c.kind == ast::ColumnDef::Kind::Physical ? "physical" : "metadata persisted", c.name));
        const CatalogColumn* old = before.column(c.name);
        if (add && old) throw refused(cp, fmt::format("Column `{}` already exists in the materialized table.", c.name));
        if (add) continue;
        if (!old) throw refused(cp, fmt::format("Column `{}` does not exist in the table.", c.name));
        if (!same_kind(c.kind, old->kind))
          throw refused(cp, fmt::format("Changing of {} column '{}' to {} column is not supported.", kind_name(old->kind),
                                        c.name, kind_name(c.kind)));
        if (c.kind == ast::ColumnDef::Kind::Computed) continue;
        const LogicalType to = to_logical_type(c.type);
        if (!implicitly_castable(old->type, to))
          throw refused(cp, fmt::format("Column '{}' with type {} can not be changed to type {}.", c.name,
                                        old->type.to_string(), to.to_string()));
      }
      if (!el.watermarks.empty()) {
        const SourcePosition wp = el.watermarks[0].pos.known() ? el.watermarks[0].pos : at;
        if (add && before.watermark)
          throw refused(wp, fmt::format("The current materialized table has already defined the watermark strategy `{}` "
                                        "AS {}. You might want to drop it before adding a new one.",
                                        before.watermark->rowtime_column, before.watermark->expr_sql));
        if (!add && !before.watermark)
          throw refused(wp, "The current materialized table does not define any watermark. You might want to add a new one.");
      }
      if (el.primary_key) {
        auto& pk = *el.primary_key;
        const SourcePosition kp = pk.pos.known() ? pk.pos : at;
        if (add && !before.primary_key.empty())
          throw refused(kp, fmt::format("The current materialized table has already defined the primary key constraint "
                                        "[{}]. You might want to drop it before adding a new one.",
                                        backticked(before.primary_key)));
        if (!add && before.primary_key.empty())
          throw refused(kp, "The current materialized table does not define any primary key constraint. You might want "
                            "to add a new one.");
        if (pk.constraint_name.empty()) pk.constraint_name = fmt::format("PK_{}", fmt::join(pk.columns, "_"));
        for (const auto& k : pk.columns) {
          // The key column's type after this statement's own MODIFY of it, if any.
          const CatalogColumn* col = before.column(k);
          if (!col) throw refused(kp, fmt::format("Invalid primary key '{}'. Column '{}' does not exist.", pk.constraint_name, k));
          bool nullable = col->type.nullable();
          for (const auto& c : el.columns)
            if (c.name == k && c.kind != ast::ColumnDef::Kind::Computed) nullable = to_logical_type(c.type).nullable();
          if (nullable)
            throw refused(kp, fmt::format("Invalid primary key '{}'. Column '{}' is nullable.", pk.constraint_name, k));
        }
      }
      break;
    }
    case K::DropColumns: {
      for (const auto& col : a.columns)
        if (!before.column(col)) throw refused(at, fmt::format("The column `{}` does not exist in the base table.", col));
      for (const auto& col : a.columns)
        if (before.watermark && before.watermark->rowtime_column == col)
          throw refused(at, fmt::format("The column `{}` is referenced by watermark expression.", col));
      for (const auto& col : a.columns)
        if (auto reader = computed_reader(ddl, before, {col}))
          throw refused(at, fmt::format("The column `{}` is referenced by computed column `{}`.", col, *reader));
      std::vector<std::string> used;
      for (const auto& col : a.columns)
        if (query.index_of(col)) used.push_back(col);
      if (!used.empty()) throw refused(at, fmt::format("Column(s) ({}) are used in query.", backticked(used, "'")));
      for (const auto& col : a.columns)
        if (const auto* c = before.column(col); c->kind == CatalogColumn::Kind::kMetadata && !c->is_virtual)
          throw refused(at, fmt::format("The column {} is persisted column. Dropping of persisted columns is not supported.", col));
      break;
    }
    case K::DropPrimaryKey:
      if (before.primary_key.empty()) throw refused(at, "The current materialized table does not define any primary key.");
      if (!a.new_name.empty() && a.new_name != before.primary_key_name)
        throw refused(at, fmt::format("The current materialized table does not define a primary key constraint named "
                                      "'{}'. Available constraint name: ['{}'].",
                                      a.new_name, before.primary_key_name));
      break;
    case K::DropWatermark:
      if (!before.watermark) throw refused(at, "The current materialized table does not define any watermark strategy.");
      break;
    default:
      throw TranslationError(at, "ALTER MATERIALIZED TABLE takes ADD, MODIFY or DROP here");
  }

  ast::AlterTable change;
  change.name = m.name;
  change.actions.push_back(a);
  try {
    ddl.alter_table(change, at);
  } catch (const SqlError& e) {
    throw refused(e.position().known() ? e.position() : at, e.detail());
  }
  if (a.kind == K::DropPrimaryKey) {  // Flink keeps the key columns' NOT NULL (ALTER TABLE's drop loosens them)
    TableDef after = *catalog_.table(def.name);
    for (auto& c : after.columns)
      if (const auto* old = before.column(c.name); old && contains(before.primary_key, c.name)) c.type = old->type;
    catalog_.replace_table(def.name, std::move(after));
  }
  def.primary_key = catalog_.table(def.name)->primary_key;  // the snapshot sink upserts by it
  save(def);
  restart_continuous(def, st, jobs);
}

}  // namespace clink::sql
