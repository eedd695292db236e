#include "plan_rewrite.hpp"

#include "clink/sql/function/function_registry.hpp"

namespace clink::sql::rewrite {

void collect_columns(const ExprPtr& e, std::set<std::size_t>& out) {
  if (!e) return;
  if (e->kind == ExprKind::kColumnRef) out.insert(e->column_index);
  for (const auto& a : e->args) collect_columns(a, out);
}

ExprPtr remap_columns(const ExprPtr& e, const std::function<std::size_t(std::size_t)>& map) {
  if (e->kind == ExprKind::kColumnRef) {
    std::size_t to = map(e->column_index);
    if (to == e->column_index) return e;
    auto c = std::make_shared<Expr>(*e);
    c->column_index = to;
    return c;
  }
  if (e->args.empty()) return e;
  auto c = std::make_shared<Expr>(*e);
  bool changed = false;
  for (auto& a : c->args) {
    auto n = remap_columns(a, map);
    changed = changed || n != a;
    a = n;
  }
  return changed ? c : e;
}

ExprPtr substitute(const ExprPtr& e, const std::vector<ExprPtr>& replacement) {
  if (e->kind == ExprKind::kColumnRef) return replacement.at(e->column_index);
  if (e->args.empty()) return e;
  auto c = std::make_shared<Expr>(*e);
  for (auto& a : c->args) a = substitute(a, replacement);
  return c;
}

std::vector<ExprPtr> conjuncts(const ExprPtr& e) {
  if (!e) return {};
  if (e->kind != ExprKind::kAnd) return {e};
  std::vector<ExprPtr> out;
  for (const auto& a : e->args) {
    auto sub = conjuncts(a);
    out.insert(out.end(), sub.begin(), sub.end());
  }
  return out;
}

ExprPtr conjunction(std::vector<ExprPtr> parts) {
  if (parts.empty()) return nullptr;
  if (parts.size() == 1) return parts[0];
  return expr::and_(std::move(parts));
}

bool is_deterministic(const ExprPtr& e) {
  if (e->kind == ExprKind::kCall && e->function && !e->function->deterministic) return false;
  for (const auto& a : e->args)
    if (!is_deterministic(a)) return false;
  return true;
}

}  // namespace clink::sql::rewrite
