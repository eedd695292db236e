#pragma once
// DDL against a Catalog: CREATE TABLE [IF NOT EXISTS] [LIKE], CREATE [TEMPORARY] VIEW,
// CREATE FUNCTION ... LANGUAGE SQL, DROP (kind-checked), ALTER TABLE (atomic, dependent
// views re-bound, rolled back when one breaks), SHOW, DESCRIBE, ANALYZE TABLE.
//
// The seed's option spellings fold into Flink's model here: 'event_time_column' +
// 'watermark_lag_ms' become the watermark `col - INTERVAL 'lag' SECOND` (as WATERMARK FOR
// would), 'idle_timeout_ms' is read like 'scan.watermark.idle-timeout'; the options stay
// in the option list as written.
#include <functional>
#include <map>
#include <string>

#include "clink/sql/binder/binder.hpp"
#include "clink/sql/catalog/catalog.hpp"
#include "clink/sql/function/function_registry.hpp"
#include "clink/sql/parser/ast.hpp"

namespace clink::sql {

// Flink's default catalog and database: clink's only ones.
inline constexpr const char* kDefaultCatalog = "default_catalog";
inline constexpr const char* kDefaultDatabase = "default_database";


// Runs a bounded source to compute statistics (ANALYZE TABLE); supplied by whoever can
// execute jobs (the CLI). Throws when the table cannot be analysed.
using TableAnalyzer = std::function<TableStatistics(const TableDef& table, const std::vector<std::string>& columns)>;

class CatalogDdl {
 public:
  CatalogDdl(Catalog& catalog, const FunctionRegistry& registry, const SessionConfig& session)
      : catalog_(catalog), registry_(registry), session_(session) {}

  void set_analyzer(TableAnalyzer analyzer) { analyzer_ = std::move(analyzer); }

  // Each throws TranslationError (with the statement's position) on failure.
  void create_table(const ast::CreateTable& stmt, SourcePosition pos);
  void create_view(const ast::CreateView& stmt, SourcePosition pos);
  void create_function(const ast::CreateFunction& stmt, SourcePosition pos);
  // CREATE / DROP / SHOW [CREATE] MODEL(S) (model_ddl.cpp).
  void create_model(const ast::CreateModel& stmt, SourcePosition pos);
  void drop_models(const ast::Drop& stmt, SourcePosition pos);
  std::string show_create_model(const ast::Show& stmt, SourcePosition pos) const;
  void drop(const ast::Drop& stmt, SourcePosition pos);
  void alter_table(const ast::AlterTable& stmt, SourcePosition pos);
  void analyze(const ast::AnalyzeTable& stmt, SourcePosition pos);

  // USE CATALOG / USE: the default catalog and database are the only ones; others are refused by name.
  void use(const ast::Use& stmt, SourcePosition pos) const;

  // Text results in the SQL client's tableau format.
  std::string show(const ast::Show& stmt, SourcePosition pos) const;
  std::string describe(const ast::Describe& stmt, SourcePosition pos) const;
  std::string show_create_table(const TableDef& table) const;
  std::string show_create_view(const ViewDef& view) const;

  // Where the parts of a CREATE TABLE were written (errors point there).
  struct TablePositions {
    std::map<std::string, SourcePosition> columns;
    SourcePosition watermark;
    SourcePosition primary_key;
  };
  // Checks a TableDef (types of computed columns and the watermark, key columns) and
  // fills in the derived types; throws TranslationError at the offending part (else `pos`).
  void validate_table(TableDef& def, SourcePosition pos, const TablePositions& where = {}) const;

 private:
  void create_class_function(const ast::CreateFunction& stmt, const std::string& name, SourcePosition pos);
  // reuse_bound_views: see Binder::bind_view_query.
  ViewDef bind_view_def(const std::string& name, ast::QueryPtr query, const std::vector<std::string>& aliases,
                        SourcePosition pos, bool reuse_bound_views) const;
  // Re-binds every view depending on `name` (transitively); returns the first failure.
  std::optional<std::string> rebind_dependents(const std::string& name);

  Catalog& catalog_;
  const FunctionRegistry& registry_;
  const SessionConfig& session_;
  TableAnalyzer analyzer_;
};

// An expression as SQL text for the catalog (without the printer's outer parentheses).
std::string expression_sql(const ast::Expr& e);

// The schema part of SHOW CREATE TABLE: a line per column ("  `c` TYPE", "  `c` AS expr",
// metadata), the watermark and the primary key constraint, each indented, without commas.
std::vector<std::string> show_create_schema_lines(const TableDef& table);

// The SQL client's tableau box: right-aligned cells, then "N row(s) in set".
std::string format_tableau(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

// The names a SHOW listing keeps: those its [NOT] LIKE pattern (SQL's % and _,
// case-sensitive as Flink's) lets through, after checking its FROM / IN database is the
// one clink has (a TranslationError at `pos` otherwise).
std::vector<std::string> show_filter(const ast::Show& stmt, std::vector<std::string> names, SourcePosition pos);

}  // namespace clink::sql
