#pragma once
// What a lookup join's condition means to the op (Flink's CommonPhysicalLookupJoin):
//   - lookup keys: `d.col = <expression over the input row>` (a column or any deterministic
//     expression of the input) or `d.col = <literal>` (a constant key), one per fetched
//     column, the value cast to the column's type where the types differ;
//   - a pre-filter (LEFT joins): conjuncts over the input only; a row failing it is not
//     looked up and comes out padded with NULLs;
//   - the filter on fetched rows: conjuncts over the table's columns only (Flink's calc on
//     the temporal table, EXPLAIN's `where=[...]`), applied before joining;
//   - the rest (Flink's joinCondition), over the output row.
#include <string>
#include <vector>

#include "clink/sql/planner/logical_plan.hpp"

namespace clink::sql {

struct LookupKey {
  std::size_t column = 0;  // index into LogicalLookupJoin::columns (the fetched row)
  ExprPtr value;           // over the input row, typed as the column
};

struct LookupJoinAnalysis {
  std::vector<LookupKey> keys;  // ordered by column
  ExprPtr pre_filter;           // over the input row; null: none
  ExprPtr dim_filter;           // over the fetched row; null: none
  ExprPtr residual;             // over the output row; null: none
  // The first `a IS NOT DISTINCT FROM d.b` between the input and the table (Flink rejects it).
  ExprPtr not_distinct;
};

LookupJoinAnalysis analyze_lookup_join(const LogicalLookupJoin& j);

// The fetched row's schema (the table's `columns`, nullable as in the output).
Schema lookup_fetched_schema(const LogicalLookupJoin& j);
// Input columns ++ fetched columns, names made unique as a join's.
Schema lookup_join_schema(const Schema& input, const LogicalLookupJoin& j);

// Flink's EXPLAIN line: LookupJoin(table=[dim], joinType=[InnerJoin], lookup=[id=k],
// where=[...], joinCondition=[...], select=[...], async=[ORDERED, 180000ms, 100]).
std::string describe_lookup_join(const LogicalLookupJoin& j);

}  // namespace clink::sql
