#pragma once
// Binder: AST + Catalog -> LogicalPlan. Resolves tables (catalog tables, views, CTEs,
// derived tables, window TVFs), columns and functions, types every expression through
// expr.hpp's builders (FunctionRegistry overload resolution, implicit casts) and lowers
// SQL shapes onto logical nodes. Every error is a TranslationError carrying the AST
// node's line and column; anything outside the supported subset is rejected, never
// silently accepted.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "clink/sql/catalog/catalog.hpp"
#include "clink/sql/common/session_config.hpp"
#include "clink/sql/function/function_registry.hpp"
#include "clink/sql/parser/ast.hpp"
#include "clink/sql/planner/logical_plan.hpp"

namespace clink::sql {

class Binder {
 public:
  Binder(const Catalog& catalog, const FunctionRegistry& registry, const SessionConfig& session = {});
  ~Binder();

  // INSERT INTO t [(cols)] <query>: rooted in a LogicalSink; the query's columns are
  // checked against the sink's (count, implicit casts as Flink's) and cast.
  LogicalPtr bind_insert(const ast::Insert& insert);
  // A query without a sink.
  LogicalPtr bind_select(const ast::Query& query);
  // A view's defining query (CREATE VIEW). With `reuse_bound_views` the views it reads are
  // their current ViewDef::bound plans, not expanded again. `depth` receives the views the
  // new view's expansion nests, itself included.
  LogicalPtr bind_view_query(const ast::Query& query, bool reuse_bound_views, std::size_t& depth);
  // A scalar expression over `scope` (named columns of one row, qualifier-free): computed
  // columns, watermark expressions, SQL function bodies. Aggregates are rejected.
  ExprPtr bind_scalar(const ast::Expr& expr, const Schema& scope);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The LogicalType a parser-level TypeName denotes (TranslationError at its position when
// clink has no such type, e.g. MULTISET, RAW).
LogicalType to_logical_type(const TypeName& type);

}  // namespace clink::sql
