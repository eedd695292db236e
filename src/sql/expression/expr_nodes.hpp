// The compiled expression tree behind CompiledExpr. Private to src/sql.
#pragma once
#include <memory>
#include <vector>

#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/expression/expr.hpp"
#include "clink/sql/function/function_registry.hpp"

namespace clink::sql::detail {

struct EvalState {
  const ColumnBatch* batch;
  std::size_t rows;
  const SessionContext* session;
};

// A bitmap of `rows` bits, reused across batches.
struct Bitmap {
  std::vector<std::uint64_t> words;
  void reset(std::size_t rows, bool value) {
    words.assign((rows + 63) / 64, value ? ~std::uint64_t(0) : 0);
  }
  bool get(std::size_t i) const { return (words[i >> 6] >> (i & 63)) & 1; }
  std::uint64_t* data() { return words.data(); }
  const std::uint64_t* data() const { return words.data(); }
};

class ExprNode {
 public:
  explicit ExprNode(LogicalType type) : type_(std::move(type)) {}
  virtual ~ExprNode() = default;
  const LogicalType& type() const { return type_; }
  // A constant: eval returns a one-row column holding the value of every row.
  virtual bool is_scalar() const { return false; }
  // Evaluates for state.rows rows; only rows set in `active` (null: all) matter and may
  // fail. Returns a column of at least state.rows rows (one row when is_scalar()).
  virtual const Column& eval(EvalState& state, const std::uint64_t* active) = 0;
  // Moves the last result out when the node owns it; else copies.
  virtual Column take_result(EvalState& state, const std::uint64_t* active) { return eval(state, active); }

 protected:
  LogicalType type_;
};

std::unique_ptr<ExprNode> compile_node(const ExprPtr& e, const SessionContext& session);

// Special forms (expr_special_forms.cpp).
std::unique_ptr<ExprNode> make_case_node(const Expr& e, std::vector<std::unique_ptr<ExprNode>> args);
std::unique_ptr<ExprNode> make_coalesce_node(const Expr& e, std::vector<std::unique_ptr<ExprNode>> args);
std::unique_ptr<ExprNode> make_logic_node(const Expr& e, std::vector<std::unique_ptr<ExprNode>> args);
std::unique_ptr<ExprNode> make_in_list_node(const Expr& e, std::vector<std::unique_ptr<ExprNode>> args);

}  // namespace clink::sql::detail
