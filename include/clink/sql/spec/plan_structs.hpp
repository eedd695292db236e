#pragma once
// The plan structs and schema rules the planner and the SQL operators share: what a
// planner node hands an operator through the spec (aggregate calls, sort keys,
// MATCH_RECOGNIZE's pattern, navigations and definitions), and the schemas and key rules
// both sides must derive alike. Operators include this, never the planner's headers.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "clink/sql/common/types.hpp"
#include "clink/sql/expression/expr.hpp"

namespace clink::sql {

struct AggregateCall {
  std::string function;             // upper case: COUNT, SUM, AVG, MIN, MAX, ...
  std::vector<std::size_t> args;    // input columns (pre-computed by a projection)
  bool distinct = false;
  std::optional<std::size_t> filter;  // a BOOLEAN input column (FILTER (WHERE ...))
  LogicalType type;
  std::string name;                 // output column name
  bool retractable = true;          // the function can retract (GROUP BY over updating input)
  bool mergeable = true;            // the function can merge accumulators (SESSION windows)
};

struct SortKey {
  std::size_t column = 0;
  bool descending = false;
  bool nulls_first = true;  // Flink: NULLS FIRST for ASC, NULLS LAST for DESC by default
};

// UNNEST's columns for a collection type, as Flink's UnnestRowsFunction: an ARRAY's element
// (f0), an ARRAY of ROW's fields, a MAP's key and value (f0, f1); then ORDINALITY (INT NOT
// NULL) when asked. Nullable when `left_outer`. Empty for a type UNNEST cannot expand.
std::vector<RowField> unnest_fields(const LogicalType& collection, bool with_ordinality, bool left_outer);

// MATCH_RECOGNIZE. DEFINE conditions and MEASURES are expressions over an "extended
// row" (match_extended_schema): the input columns of the current row (DEFINE; MEASURES
// with ALL ROWS PER MATCH) or of the match's last row (ONE ROW PER MATCH), then MATCH_ROWTIME, MATCH_PROCTIME, CLASSIFIER, then per
// navigation the input columns of the row it selects (NULLs when there is none), then
// one column per aggregate over a variable's rows (AVG(A.price)).
struct MatchNav {
  enum class Kind { kLast, kFirst, kPrev };
  Kind kind = Kind::kLast;
  std::string variable;  // empty: every row of the match
  int offset = 0;
  // ALL ROWS PER MATCH: over the whole match (FINAL), else over the rows up to the current
  // one (RUNNING, the default). ONE ROW PER MATCH evaluates at the last row: both agree.
  bool final = false;
  friend bool operator==(const MatchNav&, const MatchNav&) = default;
};
struct MatchStep {
  std::string variable;
  int min = 1, max = 1;  // max -1: unbounded
  bool reluctant = false;
  std::string quantifier;  // as written
};
// An aggregate over the rows of a variable (empty: every row of the match); in a DEFINE
// of that variable the current row counts too. `args` are over one input row; the call's
// args index them.
struct MatchAggregate {
  std::string variable;
  bool final = false;  // as MatchNav::final
  std::vector<ExprPtr> args;
  AggregateCall call;
};
struct MatchDefinition {
  std::string variable;
  ExprPtr condition;
  std::vector<MatchNav> navs;
  std::vector<MatchAggregate> aggregates;
  std::string text;  // for EXPLAIN
};
Schema match_extended_schema(const Schema& input, std::size_t navs, const LogicalType& rowtime_type,
                             const std::vector<LogicalType>& aggregate_types = {});

// Whether equal values of the two types have equal key bytes (column_key.hpp), so that
// they route to one subtask and meet in one state key: the same kind, and for DECIMAL the
// same scale (the unscaled integer is encoded).
bool join_key_types_compatible(const LogicalType& a, const LogicalType& b);

}  // namespace clink::sql
