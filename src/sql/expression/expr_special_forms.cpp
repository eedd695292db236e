// CASE, COALESCE, AND/OR and IN: the forms that decide per row which operands matter.
// Each evaluates an operand only over the rows still undecided (the `active` mask), so
// an operand that would fail (a CAST) is never run for rows that do not reach it.
#include <cstring>

#include <absl/container/flat_hash_set.h>
#include <absl/strings/string_view.h>

#include "bits.hpp"
#include "expr_nodes.hpp"

namespace clink::sql::detail {

namespace {

void and_into(Bitmap& dst, const std::uint64_t* active, std::size_t rows) {
  if (active == nullptr) return;
  for (std::size_t w = 0; w < (rows + 63) / 64; ++w) dst.words[w] &= active[w];
}

bool any(const Bitmap& b) {
  for (auto w : b.words)
    if (w != 0) return true;
  return false;
}

// Bits of rows where a BOOLEAN column is non-NULL and TRUE (want_true) or FALSE.
void truth_bits(const Column& c, bool scalar, bool want_true, std::size_t rows, Bitmap& out) {
  out.reset(rows, false);
  const std::uint8_t* v = c.values<std::uint8_t>();
  if (c.type().is(TypeKind::kNull)) return;
  if (scalar) {
    if (c.is_valid(0) && (v[0] != 0) == want_true) out.reset(rows, true);
    if (rows % 64 != 0 && !out.words.empty() && out.words.back() != 0) out.words.back() &= (std::uint64_t(1) << (rows % 64)) - 1;
    return;
  }
  const std::uint64_t* valid = c.validity();
  bits::pack_bools(v, rows, out.data());
  for (std::size_t w = 0; w < out.words.size(); ++w) out.words[w] = (want_true ? out.words[w] : ~out.words[w]) & valid[w];
  if (!want_true && rows % 64 != 0) out.words.back() &= (std::uint64_t(1) << (rows % 64)) - 1;
}

class CaseNode final : public ExprNode {
 public:
  CaseNode(LogicalType t, std::vector<std::unique_ptr<ExprNode>> args) : ExprNode(t), args_(std::move(args)), out_(t) {}

  const Column& eval(EvalState& s, const std::uint64_t* active) override {
    std::size_t rows = s.rows;
    std::size_t branches = args_.size() / 2;
    bool has_else = args_.size() % 2 == 1;
    remaining_.reset(rows, true);
    and_into(remaining_, active, rows);
    choice_.assign(rows, -1);
    sources_.assign(args_.size(), nullptr);
    for (std::size_t b = 0; b < branches && any(remaining_); ++b) {
      const Column& cond = args_[2 * b]->eval(s, remaining_.data());
      truth_bits(cond, args_[2 * b]->is_scalar(), true, rows, taken_);
      for (std::size_t w = 0; w < taken_.words.size(); ++w) taken_.words[w] &= remaining_.words[w];
      if (!any(taken_)) continue;
      sources_[2 * b + 1] = &args_[2 * b + 1]->eval(s, taken_.data());
      scalar_src_[2 * b + 1] = args_[2 * b + 1]->is_scalar();
      for (std::size_t i = 0; i < rows; ++i)
        if (taken_.get(i)) choice_[i] = static_cast<int>(2 * b + 1);
      for (std::size_t w = 0; w < taken_.words.size(); ++w) remaining_.words[w] &= ~taken_.words[w];
    }
    if (has_else && any(remaining_)) {
      std::size_t e = args_.size() - 1;
      sources_[e] = &args_.back()->eval(s, remaining_.data());
      scalar_src_[e] = args_.back()->is_scalar();
      for (std::size_t i = 0; i < rows; ++i)
        if (remaining_.get(i)) choice_[i] = static_cast<int>(e);
    }
    prepare_for_copy(out_, rows);
    for (std::size_t i = 0; i < rows; ++i) {
      int c = choice_[i];
      if (c < 0) copy_row(nullptr, 0, out_, i);
      else copy_row(sources_[static_cast<std::size_t>(c)], scalar_src_[static_cast<std::size_t>(c)] ? 0 : i, out_, i);
    }
    return out_;
  }

 private:
  std::vector<std::unique_ptr<ExprNode>> args_;
  Column out_;
  Bitmap remaining_, taken_;
  std::vector<int> choice_;
  std::vector<const Column*> sources_;
  std::vector<bool> scalar_src_ = std::vector<bool>(args_.size());
};

class CoalesceNode final : public ExprNode {
 public:
  CoalesceNode(LogicalType t, std::vector<std::unique_ptr<ExprNode>> args) : ExprNode(t), args_(std::move(args)), out_(t) {}

  const Column& eval(EvalState& s, const std::uint64_t* active) override {
    std::size_t rows = s.rows;
    remaining_.reset(rows, true);
    and_into(remaining_, active, rows);
    choice_.assign(rows, -1);
    sources_.assign(args_.size(), nullptr);
    scalar_.assign(args_.size(), false);
    for (std::size_t k = 0; k < args_.size() && any(remaining_); ++k) {
      const Column& c = args_[k]->eval(s, remaining_.data());
      sources_[k] = &c;
      scalar_[k] = args_[k]->is_scalar();
      for (std::size_t i = 0; i < rows; ++i) {
        if (remaining_.get(i) && c.is_valid(scalar_[k] ? 0 : i)) {
          choice_[i] = static_cast<int>(k);
          remaining_.words[i >> 6] &= ~(std::uint64_t(1) << (i & 63));
        }
      }
    }
    prepare_for_copy(out_, rows);
    for (std::size_t i = 0; i < rows; ++i) {
      int c = choice_[i];
      if (c < 0) copy_row(nullptr, 0, out_, i);
      else copy_row(sources_[static_cast<std::size_t>(c)], scalar_[static_cast<std::size_t>(c)] ? 0 : i, out_, i);
    }
    return out_;
  }

 private:
  std::vector<std::unique_ptr<ExprNode>> args_;
  Column out_;
  Bitmap remaining_;
  std::vector<int> choice_;
  std::vector<const Column*> sources_;
  std::vector<bool> scalar_;
};

// AND / OR with SQL's three-valued logic. AND: FALSE if any operand is FALSE, else NULL
// if any is NULL, else TRUE (OR dually). An operand runs only on rows not yet decided.
class LogicNode final : public ExprNode {
 public:
  LogicNode(LogicalType t, bool is_and, std::vector<std::unique_ptr<ExprNode>> args)
      : ExprNode(t), is_and_(is_and), args_(std::move(args)), out_(LogicalType::boolean()) {}

  const Column& eval(EvalState& s, const std::uint64_t* active) override {
    std::size_t rows = s.rows, words = (rows + 63) / 64;
    undecided_.reset(rows, true);
    and_into(undecided_, active, rows);
    decided_.reset(rows, false);  // rows with a dominant operand (FALSE for AND)
    saw_null_.reset(rows, false);
    for (std::size_t k = 0; k < args_.size(); ++k) {
      const Column& c = args_[k]->eval(s, k == 0 ? active : undecided_.data());
      bool scalar = args_[k]->is_scalar();
      truth_bits(c, scalar, !is_and_, rows, dominant_);
      for (std::size_t w = 0; w < words; ++w) {
        std::uint64_t valid;
        if (c.type().is(TypeKind::kNull)) valid = 0;
        else if (scalar) valid = c.is_valid(0) ? ~std::uint64_t(0) : 0;
        else valid = c.validity()[w];
        decided_.words[w] |= dominant_.words[w];
        saw_null_.words[w] |= ~valid;
        undecided_.words[w] &= ~dominant_.words[w];
      }
    }
    out_.clear();
    out_.resize_fixed(rows);
    auto* v = out_.values<std::uint8_t>();
    auto* valid = out_.validity();
    for (std::size_t w = 0; w < words; ++w) valid[w] = decided_.words[w] | ~saw_null_.words[w];
    if (is_and_) {
      for (std::size_t w = 0; w < words; ++w) dominant_.words[w] = ~decided_.words[w];
      bits::unpack_bits(dominant_.data(), rows, v);
    } else {
      bits::unpack_bits(decided_.data(), rows, v);
    }
    return out_;
  }

 private:
  bool is_and_;
  std::vector<std::unique_ptr<ExprNode>> args_;
  Column out_;
  Bitmap undecided_, decided_, saw_null_, dominant_;
};

bool cell_equals(const Column& a, std::size_t i, const Column& b, std::size_t j) {
  switch (a.layout()) {
    case PhysicalLayout::kFixed:
      switch (a.type().kind()) {
        case TypeKind::kFloat: return a.values<float>()[i] == b.values<float>()[j];
        case TypeKind::kDouble: return a.values<double>()[i] == b.values<double>()[j];
        default: {
          auto w = static_cast<std::size_t>(fixed_width(a.type().kind()));
          return std::memcmp(a.values_buffer().data() + i * w, b.values_buffer().data() + j * w, w) == 0;
        }
      }
    case PhysicalLayout::kVarLen: return a.string_at(i) == b.string_at(j);
    case PhysicalLayout::kNull: return false;
    default: return a.value_at(i) == b.value_at(j);
  }
}

// value IN (list): TRUE if equal to an item; else NULL if the value or an item is NULL.
// A constant string list is looked up in a hash set.
class InListNode final : public ExprNode {
 public:
  InListNode(LogicalType t, bool negated, std::vector<std::unique_ptr<ExprNode>> args)
      : ExprNode(t), negated_(negated), args_(std::move(args)), out_(LogicalType::boolean()) {
    bool all_const = true;
    for (std::size_t k = 1; k < args_.size(); ++k) all_const = all_const && args_[k]->is_scalar();
    if (all_const && args_[0]->type().is_string_like()) {
      EvalState s{nullptr, 1, nullptr};
      for (std::size_t k = 1; k < args_.size(); ++k) {
        const Column& c = args_[k]->eval(s, nullptr);
        if (c.is_null(0)) list_has_null_ = true;
        else string_set_.insert(std::string(c.string_at(0)));
      }
      use_set_ = true;
    }
  }

  const Column& eval(EvalState& s, const std::uint64_t* active) override {
    std::size_t rows = s.rows;
    const Column& value = args_[0]->eval(s, active);
    bool value_scalar = args_[0]->is_scalar();
    out_.clear();
    out_.resize_fixed(rows);
    auto* o = out_.values<std::uint8_t>();
    if (use_set_) {
      for (std::size_t i = 0; i < rows; ++i) {
        std::size_t r = value_scalar ? 0 : i;
        if (value.is_null(r)) {
          out_.set_valid(i, false);
          continue;
        }
        std::string_view v = value.string_at(r);
        bool found = string_set_.contains(absl::string_view(v.data(), v.size()));
        out_.set_valid(i, found || !list_has_null_);
        o[i] = static_cast<std::uint8_t>(found != negated_);
      }
      return out_;
    }
    items_.clear();
    for (std::size_t k = 1; k < args_.size(); ++k) items_.push_back({&args_[k]->eval(s, active), args_[k]->is_scalar()});
    for (std::size_t i = 0; i < rows; ++i) {
      std::size_t r = value_scalar ? 0 : i;
      if (value.is_null(r)) {
        out_.set_valid(i, false);
        continue;
      }
      bool found = false, saw_null = false;
      for (const auto& [c, scalar] : items_) {
        std::size_t j = scalar ? 0 : i;
        if (c->is_null(j)) saw_null = true;
        else if (cell_equals(value, r, *c, j)) {
          found = true;
          break;
        }
      }
      out_.set_valid(i, found || !saw_null);
      o[i] = static_cast<std::uint8_t>(found != negated_);
    }
    return out_;
  }

 private:
  bool negated_;
  std::vector<std::unique_ptr<ExprNode>> args_;
  Column out_;
  bool use_set_ = false;
  bool list_has_null_ = false;
  absl::flat_hash_set<std::string> string_set_;
  std::vector<std::pair<const Column*, bool>> items_;
};

}  // namespace

std::unique_ptr<ExprNode> make_case_node(const Expr& e, std::vector<std::unique_ptr<ExprNode>> args) {
  return std::make_unique<CaseNode>(e.type, std::move(args));
}
std::unique_ptr<ExprNode> make_coalesce_node(const Expr& e, std::vector<std::unique_ptr<ExprNode>> args) {
  return std::make_unique<CoalesceNode>(e.type, std::move(args));
}
std::unique_ptr<ExprNode> make_logic_node(const Expr& e, std::vector<std::unique_ptr<ExprNode>> args) {
  return std::make_unique<LogicNode>(e.type, e.kind == ExprKind::kAnd, std::move(args));
}
std::unique_ptr<ExprNode> make_in_list_node(const Expr& e, std::vector<std::unique_ptr<ExprNode>> args) {
  return std::make_unique<InListNode>(e.type, e.negated, std::move(args));
}

}  // namespace clink::sql::detail
