#include "clink/sql/optimizer/join_reorder.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "../planner/plan_rewrite.hpp"
#include "clink/sql/planner/cardinality.hpp"
#include "clink/sql/planner/join_analysis.hpp"

namespace clink::sql {

using namespace rewrite;

namespace {

struct Leaf {
  LogicalPtr plan;
  const LogicalNode* original;  // the written input (before its own joins were reordered)
  std::size_t offset;  // first global column
  double rows;
};

struct Condition {
  ExprPtr expr;           // over global columns
  std::uint32_t leaves;   // the leaves it references
  double selectivity;
};

struct JoinGraph {
  std::vector<Leaf> leaves;
  std::vector<Condition> conditions;
  std::vector<RowField> fields;  // the original join's output, by global column
};

// A temporal join is not reordered: its right side is a versioned table read as of the
// left's time, not a relation that commutes.
bool is_inner_join(const LogicalNode& n) {
  return n.kind == LogicalKind::kJoin && static_cast<const LogicalJoin&>(n).type == LogicalJoin::Type::kInner &&
         !is_temporal_join(static_cast<const LogicalJoin&>(n));
}

void flatten(const LogicalPtr& node, std::size_t offset, JoinGraph& g, std::vector<ExprPtr>& conds) {
  if (!is_inner_join(*node) || g.leaves.size() >= kMaxReorderInputs) {
    g.leaves.push_back({node, node.get(), offset, estimate_rows(*node)});
    return;
  }
  const auto& j = static_cast<const LogicalJoin&>(*node);
  std::size_t nl = j.input(0).schema.size();
  flatten(j.inputs[0], offset, g, conds);
  flatten(j.inputs[1], offset + nl, g, conds);
  for (const auto& c : conjuncts(j.condition))
    conds.push_back(remap_columns(c, [&](std::size_t i) { return i + offset; }));
}

std::size_t leaf_of(const JoinGraph& g, std::size_t col) {
  for (std::size_t i = g.leaves.size(); i-- > 0;)
    if (col >= g.leaves[i].offset) return i;
  return 0;
}

double condition_selectivity(const JoinGraph& g, const ExprPtr& c) {
  if (c->kind == ExprKind::kCall && c->name == "=" && c->args.size() == 2 &&
      c->args[0]->kind == ExprKind::kColumnRef && c->args[1]->kind == ExprKind::kColumnRef) {
    double ndv = 1.0;
    for (const auto& a : c->args) {
      std::size_t col = a->column_index, l = leaf_of(g, col);
      const Leaf& leaf = g.leaves[l];
      ndv = std::max(ndv, estimate_ndv(*leaf.plan, col - leaf.offset).value_or(leaf.rows));
    }
    return 1.0 / ndv;
  }
  return 0.25;
}

double subset_rows(const JoinGraph& g, std::uint32_t mask) {
  double rows = 1.0;
  for (std::size_t i = 0; i < g.leaves.size(); ++i)
    if (mask & (1u << i)) rows *= g.leaves[i].rows;
  for (const auto& c : g.conditions)
    if ((c.leaves & mask) == c.leaves) rows *= c.selectivity;
  return rows;
}

struct Best {
  double cost = std::numeric_limits<double>::infinity();
  std::uint32_t left = 0;  // 0: a leaf
};

bool connected(const JoinGraph& g, std::uint32_t a, std::uint32_t b) {
  for (const auto& c : g.conditions)
    if ((c.leaves & a) && (c.leaves & b) && ((c.leaves & (a | b)) == c.leaves)) return true;
  return false;
}

struct Built {
  LogicalPtr plan;
  std::vector<std::size_t> layout;  // global column at each output position
};

Built build(const JoinGraph& g, const std::map<std::uint32_t, Best>& best, std::uint32_t mask, SourcePosition pos) {
  const Best& b = best.at(mask);
  if (b.left == 0) {
    std::size_t i = static_cast<std::size_t>(__builtin_ctz(mask));
    Built out{g.leaves[i].plan, {}};
    for (std::size_t c = 0; c < g.leaves[i].plan->schema.size(); ++c) out.layout.push_back(g.leaves[i].offset + c);
    return out;
  }
  std::uint32_t right = mask & ~b.left;
  Built l = build(g, best, b.left, pos), r = build(g, best, right, pos);
  Built out;
  out.layout = l.layout;
  out.layout.insert(out.layout.end(), r.layout.begin(), r.layout.end());
  std::map<std::size_t, std::size_t> position;
  for (std::size_t i = 0; i < out.layout.size(); ++i) position[out.layout[i]] = i;
  std::vector<ExprPtr> here;
  for (const auto& c : g.conditions)
    if ((c.leaves & mask) == c.leaves && (c.leaves & b.left) != c.leaves && (c.leaves & right) != c.leaves)
      here.push_back(remap_columns(c.expr, [&](std::size_t col) { return position.at(col); }));
  auto j = std::make_shared<LogicalJoin>();
  j->type = LogicalJoin::Type::kInner;
  j->condition = conjunction(here);
  std::vector<RowField> fields;
  for (auto col : out.layout) fields.push_back(g.fields[col]);
  j->schema = Schema(std::move(fields));
  j->inputs = {l.plan, r.plan};
  j->pos = pos;
  out.plan = j;
  return out;
}

double tree_cost(const JoinGraph& g, const LogicalNode& node, std::size_t offset, std::uint32_t& mask) {
  if (!is_inner_join(node)) {
    for (std::size_t i = 0; i < g.leaves.size(); ++i)
      if (g.leaves[i].offset == offset && g.leaves[i].original == &node) mask = 1u << i;
    return 0.0;
  }
  std::uint32_t lm = 0, rm = 0;
  double c = tree_cost(g, node.input(0), offset, lm) + tree_cost(g, node.input(1), offset + node.input(0).schema.size(), rm);
  mask = lm | rm;
  return c + subset_rows(g, mask);
}

// The written join tree with its inputs replaced by their reordered versions.
LogicalPtr with_reordered_leaves(const JoinGraph& g, const LogicalPtr& node) {
  if (!is_inner_join(*node)) {
    for (const auto& leaf : g.leaves)
      if (leaf.original == node.get()) return leaf.plan;
    return node;
  }
  return with_inputs(*node, {with_reordered_leaves(g, node->inputs[0]), with_reordered_leaves(g, node->inputs[1])});
}

LogicalPtr reorder_tree(const LogicalPtr& root) {
  JoinGraph g;
  std::vector<ExprPtr> conds;
  flatten(root, 0, g, conds);
  // Inputs below the join tree may hold joins of their own.
  for (auto& leaf : g.leaves) leaf.plan = reorder_joins(leaf.plan);
  if (g.leaves.size() < 3) return with_reordered_leaves(g, root);
  g.fields = root->schema.fields();
  for (const auto& c : conds) {
    std::set<std::size_t> cols;
    collect_columns(c, cols);
    std::uint32_t leaves = 0;
    for (auto col : cols) leaves |= 1u << leaf_of(g, col);
    g.conditions.push_back({c, leaves, condition_selectivity(g, c)});
  }
  std::size_t n = g.leaves.size();
  std::uint32_t full = (1u << n) - 1;
  std::map<std::uint32_t, Best> best;
  for (std::size_t i = 0; i < n; ++i) best[1u << i] = Best{0.0, 0};
  for (std::uint32_t mask = 1; mask <= full; ++mask) {
    if (__builtin_popcount(mask) < 2) continue;
    double rows = subset_rows(g, mask);
    Best b;
    for (int pass = 0; pass < 2 && b.left == 0; ++pass) {
      // Pass 0: connected splits only; pass 1 allows cross products.
      for (std::uint32_t left = (mask - 1) & mask; left > 0; left = (left - 1) & mask) {
        std::uint32_t right = mask & ~left;
        auto lb = best.find(left), rb = best.find(right);
        if (lb == best.end() || rb == best.end() || std::isinf(lb->second.cost) || std::isinf(rb->second.cost)) continue;
        if (pass == 0 && !connected(g, left, right)) continue;
        double cost = lb->second.cost + rb->second.cost + rows;
        if (cost < b.cost || (cost == b.cost && left < b.left)) b = Best{cost, left};
      }
    }
    if (b.left != 0) best[mask] = b;
  }
  std::uint32_t written_mask = 0;
  double written = tree_cost(g, *root, 0, written_mask);
  if (!best.count(full) || !(best[full].cost < written)) {
    return with_reordered_leaves(g, root);  // the written order is as cheap
  }
  Built b = build(g, best, full, root->pos);
  std::vector<std::size_t> cols(b.layout.size());
  for (std::size_t i = 0; i < b.layout.size(); ++i) cols[b.layout[i]] = i;
  bool identity = true;
  for (std::size_t i = 0; i < cols.size(); ++i) identity = identity && cols[i] == i;
  if (identity) return b.plan;
  auto p = make_column_project(b.plan, cols, root->pos);
  return p;
}

}  // namespace

double join_tree_cost(const LogicalNode& plan) {
  if (!is_inner_join(plan)) return 0.0;
  double c = join_tree_cost(plan.input(0)) + join_tree_cost(plan.input(1));
  return c + estimate_rows(plan);
}

LogicalPtr reorder_joins(const LogicalPtr& plan) {
  if (is_inner_join(*plan)) return reorder_tree(plan);
  std::vector<LogicalPtr> inputs;
  for (const auto& i : plan->inputs) inputs.push_back(reorder_joins(i));
  return with_inputs(*plan, inputs);
}

}  // namespace clink::sql
