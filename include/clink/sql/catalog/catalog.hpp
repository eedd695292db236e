#pragma once
// The SQL catalog: tables, views and SQL functions by name, with their statistics, and
// their persistence to a catalog directory (one JSON file per object).
//
// A TableDef is a declaration over an external source/sink: physical, computed and
// metadata columns with their LogicalTypes, the watermark (rowtime column + the
// watermark expression, Flink's WATERMARK FOR), the primary key and the WITH options in
// the order written. The seed's own option spellings (event_time_column,
// watermark_lag_ms, ...) are folded into the same model when the table is created (see
// catalog_ddl.cpp), so the planner reads one representation.
//
// Names are case-sensitive, as Flink's identifiers are.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "clink/sql/common/types.hpp"
#include "clink/sql/parser/ast.hpp"

namespace clink::sql {

struct CatalogColumn {
  enum class Kind { kPhysical, kComputed, kMetadata };
  std::string name;
  Kind kind = Kind::kPhysical;
  LogicalType type;                          // computed: derived from the expression
  std::string expr_sql;                      // computed: the expression as SQL text
  ast::ExprPtr expr;                         // computed: parsed from expr_sql
  std::optional<std::string> metadata_key;   // METADATA FROM 'key'
  bool is_virtual = false;                   // METADATA ... VIRTUAL
  std::string comment;
};

struct WatermarkSpec {
  std::string rowtime_column;
  std::string expr_sql;  // e.g. "`ts` - INTERVAL '5' SECOND"
  ast::ExprPtr expr;
};

struct ColumnStatistics {
  std::optional<std::int64_t> ndv;
  std::optional<std::int64_t> null_count;
  std::optional<std::string> min;  // printed values
  std::optional<std::string> max;
  friend bool operator==(const ColumnStatistics&, const ColumnStatistics&) = default;
};

// Row count and per-column statistics, from ANALYZE TABLE or declared in the options:
//   'statistics.row-count' = '1000'
//   'statistics.columns.<col>.ndv' = '10', '...null-count', '...min', '...max'
struct TableStatistics {
  std::optional<std::int64_t> row_count;
  std::map<std::string, ColumnStatistics> columns;
  bool analyzed = false;  // from ANALYZE (else declared)
};

using OptionList = std::vector<std::pair<std::string, std::string>>;

struct TableDef {
  std::string name;
  bool temporary = false;
  std::vector<CatalogColumn> columns;
  std::optional<WatermarkSpec> watermark;
  std::vector<std::string> primary_key;
  std::string primary_key_name;  // the constraint name (generated when not written)
  std::vector<std::string> partitioned_by;
  std::string comment;
  OptionList options;  // WITH (...) in the order written
  TableStatistics analyzed_statistics;  // ANALYZE results (declared ones live in options)

  std::optional<std::string> option(std::string_view key) const;
  void set_option(const std::string& key, const std::string& value);  // replaces in place or appends
  bool reset_option(std::string_view key);
  std::string connector() const { return option("connector").value_or(""); }

  const CatalogColumn* column(std::string_view name) const;
  std::optional<std::size_t> column_index(std::string_view name) const;
  // Every column (physical, computed, metadata) in declaration order.
  Schema schema() const;
  // The columns a source reads (physical, then non-virtual metadata ones are not read).
  Schema physical_schema() const;
  // ANALYZE statistics when present, else the declared ones.
  TableStatistics statistics() const;

  // Late-data options on the source table, threaded to window aggregates.
  std::int64_t allowed_lateness_ms() const;
  bool late_records_to_dlq() const;
};

struct LogicalNode;

struct ViewDef {
  std::string name;
  bool temporary = false;
  std::string query_sql;                   // canonical SQL of the defining query
  ast::QueryPtr query;
  std::vector<std::string> column_aliases; // CREATE VIEW v (a, b) AS ...
  Schema schema;                           // the output columns (aliases applied)
  std::string comment;
  // The query as bound when the view was defined, so that a view defined over this one
  // binds against it instead of expanding this view's whole chain again (a chain of n
  // views was quadratic to define). Valid while the catalog's generation() is
  // `bound_generation`; queries always expand `query`. Null when read from a file.
  std::shared_ptr<const LogicalNode> bound;
  std::uint64_t bound_generation = 0;
  std::size_t depth = 0;  // the views its expansion nests, itself included (with `bound`)
};

struct SqlFunctionParam {
  std::string name;
  LogicalType type;
};

// CREATE FUNCTION f(x T, ...) RETURNS T AS '<expr>' LANGUAGE SQL: inlined at each call.
// CREATE FUNCTION f AS '<class>' [LANGUAGE JAVA]: `class_name` names a C++ implementation
// (function_classes.hpp); a call resolves to it with the call's argument types.
struct FunctionDef {
  std::string name;
  bool temporary = false;
  std::vector<SqlFunctionParam> params;
  LogicalType return_type;
  std::string body_sql;
  ast::ExprPtr body;
  std::string language = "SQL";
  std::string class_name;  // language JAVA: the class the function was created AS
};

// CREATE MODEL m INPUT (...) OUTPUT (...) WITH (...): a declaration ML_PREDICT calls (its
// provider and options: clink/sql/spec/model_provider.hpp). Models have a namespace of
// their own, as in Flink; persisted as models/<name>.json (catalog_models.cpp).
struct ModelDef {
  std::string name;
  bool temporary = false;
  std::vector<SqlFunctionParam> input, output;
  std::string comment;
  OptionList options;  // WITH (...) in the order written
  std::optional<std::string> option(std::string_view key) const;
};

enum class ObjectKind { kTable, kView, kFunction };
std::string to_string(ObjectKind kind);  // "table", "view", "function"

class Catalog {
 public:
  Catalog() = default;

  // Turns on persistence: every change is written to `dir` (tables/, views/,
  // functions/, one <name>.json each) and load_from_dir() reads them back.
  void set_persistence_dir(std::string dir);
  const std::string& persistence_dir() const { return dir_; }
  void load_from_dir(const std::string& dir);

  bool has(std::string_view name) const { return kind_of(name).has_value(); }
  std::optional<ObjectKind> kind_of(std::string_view name) const;
  // Changes with every change to a table, function or model (what a view's binding
  // depends on besides other views): see ViewDef::bound.
  std::uint64_t generation() const { return generation_; }
  const TableDef* table(std::string_view name) const;
  const ViewDef* view(std::string_view name) const;
  const FunctionDef* function(std::string_view name) const;  // case-insensitive

  // Throws ClinkError when the name is taken (tables and views share one namespace).
  void add_table(TableDef def);
  void add_view(ViewDef def);
  void add_function(FunctionDef def, bool replace = false);
  void replace_table(const std::string& old_name, TableDef def);  // ALTER (rename included)
  void replace_view(ViewDef def);
  void remove(ObjectKind kind, std::string_view name);

  std::vector<std::string> table_names() const;  // sorted
  std::vector<std::string> view_names() const;
  std::vector<std::string> function_names() const;

  // Views whose query references `name` (directly), sorted.
  std::vector<std::string> views_referencing(std::string_view name) const;

  // Models (catalog_models.cpp). add_model throws ClinkError when the name is taken.
  const ModelDef* model(std::string_view name) const;
  void add_model(ModelDef def);
  void remove_model(std::string_view name);
  std::vector<std::string> model_names() const;  // sorted
  static nlohmann::json to_json(const ModelDef& def);
  static ModelDef model_from_json(const nlohmann::json& j);

  // JSON forms (the persisted files).
  static nlohmann::json to_json(const TableDef& def);
  static TableDef table_from_json(const nlohmann::json& j);
  static nlohmann::json to_json(const ViewDef& def);
  static ViewDef view_from_json(const nlohmann::json& j);
  static nlohmann::json to_json(const FunctionDef& def);
  static FunctionDef function_from_json(const nlohmann::json& j);

 private:
  void persist(ObjectKind kind, const std::string& name) const;
  void unpersist(ObjectKind kind, const std::string& name) const;

  std::map<std::string, TableDef, std::less<>> tables_;
  std::map<std::string, ViewDef, std::less<>> views_;
  std::map<std::string, FunctionDef, std::less<>> functions_;  // key: upper-case name
  void load_models(const std::string& dir);
  std::map<std::string, ModelDef, std::less<>> models_;
  std::string dir_;
  std::uint64_t generation_ = 1;
};

// The table names a query references (FROM, joins, TVFs, subqueries, CTE bodies;
// CTE names themselves excluded).
std::vector<std::string> referenced_tables(const ast::Query& query);

}  // namespace clink::sql
