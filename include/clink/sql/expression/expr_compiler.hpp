#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/expression/expr.hpp"
#include "clink/sql/function/function_registry.hpp"

namespace clink::sql {

namespace detail {
class ExprNode;
}

// A bound expression compiled once into a tree of vectorised kernels. Evaluation walks
// the tree once per batch (one virtual call per node per batch); each kernel is a tight
// loop over whole columns. Constant sub-expressions are folded at compile time. Not
// thread-safe: one instance per operator subtask (the nodes own reusable output columns).
class CompiledExpr {
 public:
  CompiledExpr(const ExprPtr& expr, const SessionContext& session = {});
  ~CompiledExpr();
  CompiledExpr(CompiledExpr&&) noexcept;
  CompiledExpr& operator=(CompiledExpr&&) noexcept;

  const LogicalType& type() const { return type_; }
  // Evaluates over every row of `batch`. The column (batch.size() rows) stays valid until
  // the next evaluate() call.
  const Column& evaluate(const ColumnBatch& batch);
  // Moves the result out (the node allocates afresh next time): for projections.
  Column evaluate_owned(const ColumnBatch& batch);

 private:
  LogicalType type_;
  SessionContext session_;
  std::unique_ptr<detail::ExprNode> root_;
  Column broadcast_;  // a constant expression materialised for the current batch
};

// A BOOLEAN expression used as a filter: TRUE keeps a row, FALSE and NULL drop it.
class CompiledPredicate {
 public:
  CompiledPredicate(const ExprPtr& expr, const SessionContext& session = {});

  // The kept rows, ascending, into `selection`; returns their count.
  std::size_t select(const ColumnBatch& batch, std::vector<std::uint32_t>& selection);
  // The kept rows as a bitmask, 64 rows per word.
  void select_mask(const ColumnBatch& batch, std::vector<std::uint64_t>& mask);
  // A batch of the kept rows (kinds and event times follow their rows).
  ColumnBatch filter(const ColumnBatch& batch);

 private:
  CompiledExpr expr_;
  std::vector<std::uint64_t> mask_;
};

// SELECT e1 AS n1, e2 AS n2 ...: a batch in the output schema per input batch, carrying
// the input's row kinds and event times.
class CompiledProjection {
 public:
  CompiledProjection(const std::vector<ExprPtr>& exprs, const std::vector<std::string>& names,
                     const SessionContext& session = {});

  const SchemaPtr& output_schema() const { return schema_; }
  ColumnBatch project(const ColumnBatch& batch);

 private:
  SchemaPtr schema_;
  std::vector<CompiledExpr> exprs_;
};

}  // namespace clink::sql
