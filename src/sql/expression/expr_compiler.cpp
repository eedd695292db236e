#include "clink/sql/expression/expr_compiler.hpp"

#include <cstring>

#include <fmt/format.h>

#include "bits.hpp"
#include "clink/sql/function/cast.hpp"
#include "expr_nodes.hpp"

namespace clink::sql {

namespace detail {

namespace {

class ColumnRefNode final : public ExprNode {
 public:
  ColumnRefNode(LogicalType t, std::size_t index) : ExprNode(std::move(t)), index_(index) {}
  const Column& eval(EvalState& s, const std::uint64_t*) override {
    if (s.batch == nullptr || index_ >= s.batch->num_columns())
      throw ClinkError(fmt::format("expression reads column ${} of a batch with {} columns", index_,
                                   s.batch ? s.batch->num_columns() : 0));
    return s.batch->column(index_);
  }

 private:
  std::size_t index_;
};

class LiteralNode final : public ExprNode {
 public:
  LiteralNode(LogicalType t, const Value& v) : ExprNode(t), column_(t) { column_.append_value(v); }
  bool is_scalar() const override { return true; }
  const Column& eval(EvalState&, const std::uint64_t*) override { return column_; }

 private:
  Column column_;
};

// A function call (and CAST, which is a call of a cast kernel).
class CallNode final : public ExprNode {
 public:
  CallNode(LogicalType t, std::shared_ptr<const ResolvedFunction> f, std::vector<std::unique_ptr<ExprNode>> args,
           std::shared_ptr<const void> state)
      : ExprNode(t), f_(std::move(f)), args_(std::move(args)), state_(std::move(state)), out_(t),
        broadcast_(args_.size()), kernel_args_(args_.size()) {
    fixed_out_ = physical_layout(t.kind()) == PhysicalLayout::kFixed || physical_layout(t.kind()) == PhysicalLayout::kNull;
  }

  const Column& eval(EvalState& s, const std::uint64_t* active) override {
    std::size_t rows = s.rows;
    bool propagate = f_->null_policy == NullPolicy::kPropagate;
    if (propagate) args_valid_.reset(rows, true);
    for (std::size_t k = 0; k < args_.size(); ++k) {
      const Column* c = &args_[k]->eval(s, active);
      bool scalar = args_[k]->is_scalar();
      if (propagate) {
        auto* v = args_valid_.data();
        if (scalar) {
          if (c->is_null(0)) std::fill(args_valid_.words.begin(), args_valid_.words.end(), 0);
        } else {
          const auto* cv = c->validity();
          for (std::size_t w = 0; w < args_valid_.words.size(); ++w) v[w] &= cv[w];
        }
      }
      if (scalar && !f_->accepts_scalars) {
        if (broadcast_[k].size() < rows || broadcast_[k].type().kind() != c->type().kind()) {
          // Fixed-width values to a whole batch at once; strings and nested values to the
          // rows asked for only: a 5 MB literal copied 1024 times took 5 GB.
          const bool fixed = physical_layout(c->type().kind()) == PhysicalLayout::kFixed;
          broadcast_[k] = Column::constant(c->type(), c->value_at(0), fixed ? std::max<std::size_t>(rows, 1024) : rows);
        }
        c = &broadcast_[k];
        scalar = false;
      }
      kernel_args_[k] = KernelArg{c, scalar};
    }
    if (fixed_out_) {
      out_.clear();
      out_.resize_fixed(rows);
      if (propagate && rows != 0) std::memcpy(out_.validity(), args_valid_.data(), args_valid_.words.size() * 8);
    } else {
      out_.clear();
    }
    KernelContext ctx{rows, active, propagate ? args_valid_.data() : nullptr, s.session, state_.get()};
    f_->kernel(ctx, kernel_args_, out_);
    if (out_.size() != rows)
      throw ClinkError(fmt::format("internal error: function {} produced {} rows for {}", f_->name, out_.size(), rows));
    return out_;
  }

  Column take_result(EvalState& s, const std::uint64_t* active) override {
    eval(s, active);
    Column r = std::move(out_);
    out_ = Column(type_);
    return r;
  }

 private:
  std::shared_ptr<const ResolvedFunction> f_;
  std::vector<std::unique_ptr<ExprNode>> args_;
  std::shared_ptr<const void> state_;
  Column out_;
  std::vector<Column> broadcast_;
  std::vector<KernelArg> kernel_args_;
  Bitmap args_valid_;
  bool fixed_out_ = true;
};

std::unique_ptr<ExprNode> fold_if_constant(std::unique_ptr<ExprNode> node, const std::vector<bool>& scalar_args,
                                           bool deterministic, const SessionContext& session) {
  if (!deterministic) return node;
  for (bool s : scalar_args)
    if (!s) return node;
  EvalState s{nullptr, 1, &session};
  try {
    const Column& c = node->eval(s, nullptr);
    return std::make_unique<LiteralNode>(node->type(), c.value_at(0));
  } catch (const ClinkError&) {
    return node;  // fails only if a row reaches it at runtime (CASE may guard it)
  }
}

}  // namespace

std::unique_ptr<ExprNode> compile_node(const ExprPtr& e, const SessionContext& session) {
  std::vector<std::unique_ptr<ExprNode>> args;
  std::vector<bool> scalar;
  for (const auto& a : e->args) {
    args.push_back(compile_node(a, session));
    scalar.push_back(args.back()->is_scalar());
  }
  switch (e->kind) {
    case ExprKind::kColumnRef: return std::make_unique<ColumnRefNode>(e->type, e->column_index);
    case ExprKind::kLiteral: return std::make_unique<LiteralNode>(e->type, e->literal);
    case ExprKind::kCall: {
      std::shared_ptr<const void> state = e->function->state;
      if (e->function->prepare) {
        std::vector<LogicalType> types;
        std::vector<std::optional<Value>> constants;
        for (std::size_t k = 0; k < args.size(); ++k) {
          types.push_back(e->args[k]->type);
          if (args[k]->is_scalar()) {
            EvalState s{nullptr, 1, &session};
            constants.push_back(args[k]->eval(s, nullptr).value_at(0));
          } else {
            constants.push_back(std::nullopt);
          }
        }
        state = e->function->prepare(types, constants);
      }
      auto node = std::make_unique<CallNode>(e->type, e->function, std::move(args), std::move(state));
      return fold_if_constant(std::move(node), scalar, e->function->deterministic, session);
    }
    case ExprKind::kCast: {
      auto f = std::make_shared<ResolvedFunction>();
      f->name = e->try_cast ? "TRY_CAST" : "CAST";
      f->arg_types = {e->args[0]->type};
      f->return_type = e->type;
      f->kernel = make_cast_kernel(e->args[0]->type, e->type, e->try_cast);
      auto node = std::make_unique<CallNode>(e->type, std::move(f), std::move(args), nullptr);
      return fold_if_constant(std::move(node), scalar, true, session);
    }
    case ExprKind::kCase: return make_case_node(*e, std::move(args));
    case ExprKind::kAnd:
    case ExprKind::kOr: return make_logic_node(*e, std::move(args));
    case ExprKind::kCoalesce: return make_coalesce_node(*e, std::move(args));
    case ExprKind::kInList: return make_in_list_node(*e, std::move(args));
  }
  throw ClinkError("internal error: unknown expression kind");
}

}  // namespace detail

CompiledExpr::CompiledExpr(const ExprPtr& expr, const SessionContext& session)
    : type_(expr->type), session_(session), root_(detail::compile_node(expr, session_)) {}
CompiledExpr::~CompiledExpr() = default;
CompiledExpr::CompiledExpr(CompiledExpr&&) noexcept = default;
CompiledExpr& CompiledExpr::operator=(CompiledExpr&&) noexcept = default;

const Column& CompiledExpr::evaluate(const ColumnBatch& batch) {
  detail::EvalState s{&batch, batch.size(), &session_};
  const Column& c = root_->eval(s, nullptr);
  if (root_->is_scalar() && batch.size() != 1) {
    // A constant expression: materialise it for the batch (rare: SELECT 1 FROM t).
    if (broadcast_.size() != batch.size()) broadcast_ = Column::constant(c.type(), c.value_at(0), batch.size());
    return broadcast_;
  }
  return c;
}

Column CompiledExpr::evaluate_owned(const ColumnBatch& batch) {
  detail::EvalState s{&batch, batch.size(), &session_};
  if (root_->is_scalar()) return Column::constant(type_, root_->eval(s, nullptr).value_at(0), batch.size());
  Column c = root_->take_result(s, nullptr);
  if (c.size() > batch.size()) {  // a column reference into a larger buffer: trim
    Column t(c.type());
    t.append_range(c, 0, batch.size());
    return t;
  }
  return c;
}

CompiledPredicate::CompiledPredicate(const ExprPtr& expr, const SessionContext& session) : expr_(expr, session) {
  if (!expr->type.is(TypeKind::kBoolean) && !expr->type.is(TypeKind::kNull))
    throw SqlTypeError(fmt::format("a filter condition must be BOOLEAN, got {} for {}", expr->type.to_string(),
                                   expr->to_string()));
}

void CompiledPredicate::select_mask(const ColumnBatch& batch, std::vector<std::uint64_t>& mask) {
  std::size_t n = batch.size();
  mask.assign((n + 63) / 64, 0);
  const Column& c = expr_.evaluate(batch);
  if (c.type().is(TypeKind::kNull)) return;
  const std::uint8_t* v = c.values<std::uint8_t>();
  const std::uint64_t* valid = c.validity();
  bits::pack_bools(v, n, mask.data());
  for (std::size_t w = 0; w < mask.size(); ++w) mask[w] &= valid[w];
}

std::size_t CompiledPredicate::select(const ColumnBatch& batch, std::vector<std::uint32_t>& selection) {
  select_mask(batch, mask_);
  selection.resize(batch.size());
  std::size_t k = 0;
  for (std::size_t w = 0; w < mask_.size(); ++w) {
    std::uint64_t bits = mask_[w];
    while (bits != 0) {
      selection[k++] = static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits)));
      bits &= bits - 1;
    }
  }
  selection.resize(k);
  return k;
}

ColumnBatch CompiledPredicate::filter(const ColumnBatch& batch) {
  select_mask(batch, mask_);
  return batch.filter(mask_.data());
}

CompiledProjection::CompiledProjection(const std::vector<ExprPtr>& exprs, const std::vector<std::string>& names,
                                       const SessionContext& session) {
  if (exprs.size() != names.size())
    throw ClinkError(fmt::format("projection of {} expressions with {} names", exprs.size(), names.size()));
  std::vector<RowField> fields;
  for (std::size_t i = 0; i < exprs.size(); ++i) {
    fields.push_back({names[i], exprs[i]->type});
    exprs_.emplace_back(exprs[i], session);
  }
  schema_ = make_schema(std::move(fields));
}

ColumnBatch CompiledProjection::project(const ColumnBatch& batch) {
  ColumnBatch out(schema_);
  for (std::size_t i = 0; i < exprs_.size(); ++i) {
    Column c = exprs_[i].evaluate_owned(batch);
    if (!c.type().same_ignoring_nullability(schema_->type(i))) {
      Column typed(schema_->type(i));
      typed.append_range(c, 0, c.size());
      c = std::move(typed);
    }
    out.columns()[i] = std::move(c);
  }
  out.row_kinds() = batch.row_kinds();
  out.event_times() = batch.event_times();
  return out;
}

}  // namespace clink::sql
