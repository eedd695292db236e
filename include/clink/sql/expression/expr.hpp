#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "clink/sql/common/types.hpp"
#include "clink/sql/common/value.hpp"

namespace clink::sql {

class FunctionRegistry;
struct ResolvedFunction;

// The bound, typed expression tree the binder produces and the compiler consumes. Every
// node carries its result type; implicit casts are explicit kCast nodes (inserted when a
// call is built), so the compiler never guesses.
enum class ExprKind {
  kColumnRef,  // input column `column_index`
  kLiteral,    // `literal` of `type`
  kCall,       // a registry function: `function` (resolved overload) over `args`
  kCast,       // CAST(args[0] AS type); `try_cast` gives NULL instead of failing
  kCase,       // CASE WHEN args[0] THEN args[1] ... [ELSE args[last]] END (odd count: has ELSE)
  kAnd,        // n-ary, SQL three-valued logic, evaluated left to right (short-circuit)
  kOr,
  kCoalesce,   // first non-NULL argument; later arguments are evaluated only where needed
  kInList,     // args[0] [NOT] IN (args[1..]); `negated`
};

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

struct Expr {
  ExprKind kind;
  LogicalType type;
  std::vector<ExprPtr> args;
  std::size_t column_index = 0;                      // kColumnRef
  std::string name;                                  // kColumnRef: field name; kCall: function name
  Value literal;                                     // kLiteral
  std::shared_ptr<const ResolvedFunction> function;  // kCall
  bool try_cast = false;                             // kCast
  bool negated = false;                              // kInList

  bool is_literal() const { return kind == ExprKind::kLiteral; }
  bool is_null_literal() const { return kind == ExprKind::kLiteral && literal.is_null(); }
  // Flink-like text for EXPLAIN and errors: +($0, 1), CAST(a AS INT), AND(>(a, 10), <(b, 5)).
  std::string to_string() const;
};

// Builders. They type-check and throw SqlTypeError with a message naming the problem
// (the binder adds the position).
namespace expr {

ExprPtr column(std::size_t index, LogicalType type, std::string name = {});
ExprPtr literal(Value value, LogicalType type);
ExprPtr null_literal(LogicalType type = LogicalType::null_type());
// Explicit casts: throws when no cast exists between the types.
ExprPtr cast(ExprPtr e, LogicalType to);
ExprPtr try_cast(ExprPtr e, LogicalType to);
// Casts `e` to `to` when its type differs (ignoring nullability); `e` itself otherwise.
ExprPtr cast_if_needed(ExprPtr e, const LogicalType& to);

// A call by name. Special forms first (AND, OR, NOT is a function; COALESCE, IF,
// BETWEEN, NOT BETWEEN, IFNULL), then the registry's overload resolution, which inserts
// implicit casts on the arguments. Throws SqlTypeError for an unknown function or when
// no overload matches, listing the candidates.
ExprPtr call(const FunctionRegistry& registry, std::string_view name, std::vector<ExprPtr> args);
ExprPtr and_(std::vector<ExprPtr> args);
ExprPtr or_(std::vector<ExprPtr> args);
ExprPtr coalesce(std::vector<ExprPtr> args);
// CASE WHEN c1 THEN v1 ... ELSE e END; `otherwise` may be null (ELSE NULL).
ExprPtr case_when(std::vector<std::pair<ExprPtr, ExprPtr>> branches, ExprPtr otherwise);
ExprPtr in_list(ExprPtr value, std::vector<ExprPtr> list, bool negated = false);

}  // namespace expr

}  // namespace clink::sql
