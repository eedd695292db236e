// Join keys that are expressions (Flink's JoinPushExpressionsRule): an equality between a
// left-only and a right-only expression that are not both plain columns of one key
// encoding (`CAST(o.customer AS BIGINT) = c.id`, `UPPER(a.name) = b.name`) would otherwise
// be a residual condition and the join would run unkeyed at parallelism 1. The expression
// is computed as an extra column by a projection below the join, the conjunct compares
// the two columns (a key), and a projection above the join drops the extra columns.
#include <algorithm>
#include <set>

#include "../planner/plan_rewrite.hpp"
#include "clink/sql/optimizer/optimizer.hpp"
#include "clink/sql/planner/join_analysis.hpp"

namespace clink::sql {

namespace {

using rewrite::collect_columns;
using rewrite::conjunction;
using rewrite::conjuncts;
using rewrite::is_deterministic;
using rewrite::remap_columns;

bool within(const ExprPtr& e, std::size_t from, std::size_t to) {
  std::set<std::size_t> cols;
  collect_columns(e, cols);
  if (cols.empty()) return false;
  return std::all_of(cols.begin(), cols.end(), [&](std::size_t c) { return c >= from && c < to; });
}

bool plain_key_column(const ExprPtr& e) { return e->kind == ExprKind::kColumnRef; }

LogicalPtr push_keys(const LogicalJoin& j) {
  const std::size_t nl = j.input(0).schema.size(), nr = j.input(1).schema.size();
  std::vector<ExprPtr> extra[2];  // new key columns per side, over that side's columns
  struct Key {
    std::size_t conjunct;
    std::size_t column[2];  // in the widened side
    bool filter_nulls;
  };
  std::vector<Key> keys;
  auto parts = conjuncts(j.condition);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const ExprPtr& c = parts[i];
    if (c->kind != ExprKind::kCall || c->args.size() != 2 || (c->name != "=" && c->name != "IS NOT DISTINCT FROM"))
      continue;
    ExprPtr side[2] = {c->args[0], c->args[1]};
    if (within(side[1], 0, nl) && within(side[0], nl, nl + nr)) std::swap(side[0], side[1]);
    if (!within(side[0], 0, nl) || !within(side[1], nl, nl + nr)) continue;
    if (!is_deterministic(side[0]) || !is_deterministic(side[1])) continue;
    if (!join_key_types_compatible(side[0]->type, side[1]->type)) continue;
    if (plain_key_column(side[0]) && plain_key_column(side[1])) continue;  // already a key
    Key k{i, {0, 0}, c->name == "="};
    for (int s = 0; s < 2; ++s) {
      ExprPtr e = s == 0 ? side[0] : remap_columns(side[1], [&](std::size_t col) { return col - nl; });
      if (plain_key_column(e)) {
        k.column[s] = e->column_index;
      } else {
        k.column[s] = (s == 0 ? nl : nr) + extra[s].size();
        extra[s].push_back(e);
      }
    }
    keys.push_back(k);
  }
  if (keys.empty()) return nullptr;
  // The widened inputs: every column, then the key expressions.
  LogicalPtr inputs[2];
  for (int s = 0; s < 2; ++s) {
    const LogicalPtr& in = j.inputs[static_cast<std::size_t>(s)];
    if (extra[s].empty()) {
      inputs[s] = in;
      continue;
    }
    std::vector<ExprPtr> exprs;
    std::vector<std::string> names;
    for (std::size_t c = 0; c < in->schema.size(); ++c) {
      exprs.push_back(expr::column(c, in->schema.type(c), in->schema.name(c)));
      names.push_back(in->schema.name(c));
    }
    for (std::size_t k = 0; k < extra[s].size(); ++k) {
      exprs.push_back(extra[s][k]);
      names.push_back("$join_key" + std::string(s == 0 ? "_l" : "_r") + std::to_string(k));
    }
    inputs[s] = make_project(in, exprs, names, j.pos);
  }
  const std::size_t wl = inputs[0]->schema.size(), wr = inputs[1]->schema.size();
  auto widen = [&](std::size_t col) { return col < nl ? col : col - nl + wl; };
  // The condition over the widened row: the pushed conjuncts compare the key columns.
  std::vector<ExprPtr> cond;
  std::size_t next_key = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (next_key < keys.size() && keys[next_key].conjunct == i) {
      const Key& k = keys[next_key++];
      const auto& lt = inputs[0]->schema.type(k.column[0]);
      const auto& rt = inputs[1]->schema.type(k.column[1]);
      ExprPtr l = expr::column(k.column[0], lt, inputs[0]->schema.name(k.column[0]));
      ExprPtr r = expr::column(wl + k.column[1], rt, inputs[1]->schema.name(k.column[1]));
      auto eq = std::make_shared<Expr>(*parts[i]);
      eq->args = {l, r};
      cond.push_back(eq);
      continue;
    }
    cond.push_back(remap_columns(parts[i], widen));
  }
  auto nj = std::make_shared<LogicalJoin>(j);
  nj->inputs = {inputs[0], inputs[1]};
  nj->condition = conjunction(std::move(cond));
  if (j.semi_or_anti()) {
    // Output: the widened left input; above, its original columns.
    nj->schema = inputs[0]->schema;
    std::vector<std::size_t> left_columns;
    for (std::size_t c = 0; c < nl; ++c) left_columns.push_back(c);
    return make_column_project(nj, left_columns, j.pos);
  }
  std::vector<RowField> fields;
  const bool pad_left = j.type == LogicalJoin::Type::kRight || j.type == LogicalJoin::Type::kFull;
  const bool pad_right = j.type == LogicalJoin::Type::kLeft || j.type == LogicalJoin::Type::kFull;
  for (std::size_t c = 0; c < wl + wr; ++c) {
    if (c < nl) fields.push_back(j.schema.field(c));
    else if (c < wl) fields.push_back({inputs[0]->schema.name(c), inputs[0]->schema.type(c).with_nullable(
                                                                      pad_left || inputs[0]->schema.type(c).nullable())});
    else if (c < wl + nr) fields.push_back(j.schema.field(nl + c - wl));
    else fields.push_back({inputs[1]->schema.name(c - wl), inputs[1]->schema.type(c - wl).with_nullable(
                                                             pad_right || inputs[1]->schema.type(c - wl).nullable())});
  }
  nj->schema = Schema(std::move(fields));
  // Above: the join's original columns.
  std::vector<std::size_t> original;
  for (std::size_t c = 0; c < nl + nr; ++c) original.push_back(widen(c));
  return make_column_project(nj, original, j.pos);
}

}  // namespace

LogicalPtr push_join_key_expressions(const LogicalPtr& plan) {
  std::vector<LogicalPtr> inputs;
  for (const auto& i : plan->inputs) inputs.push_back(push_join_key_expressions(i));
  LogicalPtr n = with_inputs(*plan, inputs);
  if (n->kind != LogicalKind::kJoin) return n;
  LogicalPtr pushed = push_keys(static_cast<const LogicalJoin&>(*n));
  return pushed ? pushed : n;
}

}  // namespace clink::sql
