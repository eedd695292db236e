#pragma once
// Pieces shared by the subquery rewrites (binder_subquery_expr.cpp, binder_subquery_lateral.cpp).
#include "binder_internal.hpp"
#include "clink/sql/planner/logical_plan.hpp"

namespace clink::sql {

// Flink's (Calcite's) value generator, for correlating conditions that are not equalities
// (`inner.v > outer.v`): the distinct values of the outer columns they read become a table
// (a CTE named $outer_values, with those columns' qualifier, while this lives) that joins
// the subquery's FROM; the conditions filter it, and the outer columns become grouping /
// join keys like the equalities' sides (appended to `keys` and corr.outer_keys).
class OuterValues {
 public:
  // `distinct`: the binder's DISTINCT over a Bound.
  OuterValues(std::vector<std::map<std::string, Bound>>& ctes, const std::function<Bound(const Bound&)>& distinct,
              SubqueryCorrelation& corr, const Scope& outer, const LogicalPtr& outer_plan,
              std::vector<ast::TableRefPtr>& from, std::vector<ast::ExprPtr>& conds, std::vector<ast::ExprPtr>& keys,
              SourcePosition pos);
  ~OuterValues();
  OuterValues(const OuterValues&) = delete;
  OuterValues& operator=(const OuterValues&) = delete;

 private:
  std::vector<std::map<std::string, Bound>>& ctes_;
};

// The value of column `column` of `grouped` (a projection over a grouping aggregate) for a
// group that has no rows: the expression with COUNT 0 and the other aggregates NULL.
// Null when `grouped` is not of that shape.
ExprPtr empty_group_value(const LogicalNode& grouped, std::size_t column);
// `value` where the outer row joined a group, `empty` where it did not (`missing`: the
// group's marker column IS NULL); just `value` when `empty` is NULL or unknown.
ExprPtr value_or_empty(ExprPtr value, const ExprPtr& empty, ExprPtr missing);

}  // namespace clink::sql
