#include "clink/sql/optimizer/optimizer.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "clink/core/log.hpp"
#include "clink/metrics/sql_metrics.hpp"
#include "../planner/plan_rewrite.hpp"
#include "nested_projection.hpp"
#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/expression/expr_compiler.hpp"
#include "clink/sql/optimizer/join_reorder.hpp"
#include "clink/sql/planner/changelog_mode.hpp"
#include "clink/sql/planner/join_analysis.hpp"
#include "clink/sql/planner/lookup_join_plan.hpp"
#include "clink/sql/planner/rank_plan.hpp"
#include "clink/sql/spec/connector_table.hpp"

namespace clink::sql {

using namespace rewrite;

// ------------------------------------------------------------------ constant folding

namespace {

bool is_true(const ExprPtr& e) {
  return e->is_literal() && !e->literal.is_null() && e->type.is(TypeKind::kBoolean) && e->literal.as_bool();
}
bool is_false(const ExprPtr& e) {
  return e->is_literal() && !e->literal.is_null() && e->type.is(TypeKind::kBoolean) && !e->literal.as_bool();
}

ExprPtr evaluate_constant(const ExprPtr& e, const SessionContext& session) {
  try {
    ColumnBatch batch(make_schema({}), 1);
    batch.commit_rows(1);
    CompiledExpr compiled(e, session);
    Column c = compiled.evaluate_owned(batch);
    return expr::literal(c.value_at(0), e->type);
  } catch (const std::exception&) {
    return e;  // fails at runtime (CAST('x' AS INT)): keep it, so the error stays where Flink raises it
  }
}

// A folded subexpression: an expression, or the value of a constant ARRAY[...] / ROW(...)
// not yet made a literal, so that the constructor around it moves the value in. Evaluating
// each level of ARRAY[ARRAY[...]] instead copied every level below it through columns
// (quadratic in the depth; 990 levels took seconds).
struct Folded {
  ExprPtr expr;                // unless `value` is set
  std::optional<Value> value;  // of type `type`
  LogicalType type;

  bool is_literal() const { return value.has_value() || expr->is_literal(); }
  ExprPtr take_expr() { return value ? expr::literal(std::move(*value), type) : std::move(expr); }
  Value take_value() { return value ? std::move(*value) : expr->literal; }
};

bool is_constructor(const Expr& e) { return e.kind == ExprKind::kCall && (e.name == "ARRAY" || e.name == "ROW"); }

Folded fold(const ExprPtr& e, const SessionContext& session) {
  if (e->args.empty()) return {e, std::nullopt, {}};
  std::vector<Folded> args;
  args.reserve(e->args.size());
  bool all_literal = true;
  for (const auto& a : e->args) {
    args.push_back(fold(a, session));
    all_literal = all_literal && args.back().is_literal();
  }
  if (all_literal && is_constructor(*e)) {  // the kernel's value: the arguments in order
    ValueList items;
    items.items.reserve(args.size());
    for (auto& a : args) items.items.push_back(a.take_value());
    return {nullptr, Value(std::move(items)), e->type};
  }
  auto c = std::make_shared<Expr>(*e);
  for (std::size_t i = 0; i < args.size(); ++i) c->args[i] = args[i].take_expr();
  if (c->kind == ExprKind::kAnd || c->kind == ExprKind::kOr) {
    bool is_and = c->kind == ExprKind::kAnd;
    std::vector<ExprPtr> kept;
    for (const auto& a : c->args) {
      if (is_and ? is_false(a) : is_true(a)) return {a, std::nullopt, {}};  // short-circuits the whole expression
      if (!(is_and ? is_true(a) : is_false(a))) kept.push_back(a);
    }
    if (kept.empty()) return {expr::literal(Value(is_and), LogicalType::boolean().not_null()), std::nullopt, {}};
    if (kept.size() == 1) return {kept[0], std::nullopt, {}};
    if (kept.size() != c->args.size()) return {is_and ? expr::and_(kept) : expr::or_(kept), std::nullopt, {}};
  }
  ExprPtr folded = c;
  if (all_literal && is_deterministic(folded)) return {evaluate_constant(folded, session), std::nullopt, {}};
  return {folded, std::nullopt, {}};
}

}  // namespace

ExprPtr fold_constants(const ExprPtr& e, const SessionContext& session) { return fold(e, session).take_expr(); }

LogicalPtr fold_constants(const LogicalPtr& plan, const SessionContext& session) {
  std::vector<LogicalPtr> inputs;
  for (const auto& i : plan->inputs) inputs.push_back(fold_constants(i, session));
  switch (plan->kind) {
    case LogicalKind::kProject: {
      auto p = std::static_pointer_cast<LogicalProject>(std::const_pointer_cast<LogicalNode>(with_inputs(*plan, inputs)));
      for (auto& e : p->exprs) e = fold_constants(e, session);
      return p;
    }
    case LogicalKind::kFilter: {
      ExprPtr cond = fold_constants(static_cast<const LogicalFilter&>(*plan).condition, session);
      if (is_true(cond)) return inputs[0];
      return make_filter(inputs[0], cond, plan->pos);
    }
    case LogicalKind::kJoin: {
      auto j = std::static_pointer_cast<LogicalJoin>(std::const_pointer_cast<LogicalNode>(with_inputs(*plan, inputs)));
      if (j->condition) {
        j->condition = fold_constants(j->condition, session);
        if (is_true(j->condition)) j->condition = nullptr;
      }
      return j;
    }
    case LogicalKind::kCorrelate: {
      auto c = std::static_pointer_cast<LogicalCorrelate>(std::const_pointer_cast<LogicalNode>(with_inputs(*plan, inputs)));
      for (auto& a : c->args) a = fold_constants(a, session);
      if (c->condition) {
        c->condition = fold_constants(c->condition, session);
        if (is_true(c->condition)) c->condition = nullptr;
      }
      return c;
    }
    case LogicalKind::kLookupJoin: {
      auto j = std::static_pointer_cast<LogicalLookupJoin>(std::const_pointer_cast<LogicalNode>(with_inputs(*plan, inputs)));
      if (j->condition) {
        j->condition = fold_constants(j->condition, session);
        if (is_true(j->condition)) j->condition = nullptr;
      }
      return j;
    }
    case LogicalKind::kWatermarkAssigner: {
      auto w = std::static_pointer_cast<LogicalWatermarkAssigner>(std::const_pointer_cast<LogicalNode>(with_inputs(*plan, inputs)));
      w->watermark = fold_constants(w->watermark, session);
      return w;
    }
    default: return with_inputs(*plan, inputs);
  }
}

// ------------------------------------------------------------------ predicate pushdown

namespace {

LogicalPtr push_filter(std::vector<ExprPtr> conds, const LogicalPtr& input, SourcePosition pos);

LogicalPtr keep_above(std::vector<ExprPtr> conds, const LogicalPtr& input, SourcePosition pos) {
  if (conds.empty()) return input;
  return make_filter(input, conjunction(std::move(conds)), pos);
}

bool only_columns_in(const ExprPtr& e, std::size_t from, std::size_t to) {
  std::set<std::size_t> cols;
  collect_columns(e, cols);
  return std::all_of(cols.begin(), cols.end(), [&](std::size_t c) { return c >= from && c < to; });
}

LogicalPtr push_join(const LogicalNode& join_node, std::vector<ExprPtr> conds, SourcePosition pos) {
  const auto& j = static_cast<const LogicalJoin&>(join_node);
  std::size_t nl = j.input(0).schema.size(), n = nl + j.input(1).schema.size();
  // ON conjuncts of an inner join behave like WHERE conjuncts.
  std::vector<ExprPtr> on = conjuncts(j.condition);
  std::vector<ExprPtr> left, right, above, join_cond;
  bool inner = j.type == LogicalJoin::Type::kInner;
  // A semi / anti join outputs left rows unchanged: a filter above applies to the left.
  bool left_preserved = j.type == LogicalJoin::Type::kInner || j.type == LogicalJoin::Type::kLeft || j.semi_or_anti();
  bool right_preserved = j.type == LogicalJoin::Type::kInner || j.type == LogicalJoin::Type::kRight;
  // A filter below an updating versioned table would drop versions (a row whose update
  // fails it would stay valid): such conjuncts stay in the temporal join's condition.
  bool right_pushable = !is_temporal_join(j) || !changelog_mode(j.input(1)).updating();
  for (const auto& c : conds) {
    if (left_preserved && only_columns_in(c, 0, nl) && is_deterministic(c)) left.push_back(c);
    else if (right_preserved && right_pushable && only_columns_in(c, nl, n) && is_deterministic(c)) right.push_back(c);
    else if (inner) join_cond.push_back(c);
    else above.push_back(c);
  }
  for (const auto& c : on) {
    // ON conjuncts on the side that gets null-extended can filter that side first; a semi
    // join's left-only conjuncts filter the left (an anti join emits the rows they fail).
    bool to_left = (inner || j.type == LogicalJoin::Type::kRight || j.type == LogicalJoin::Type::kSemi) &&
                   only_columns_in(c, 0, nl);
    bool to_right = (inner || j.type == LogicalJoin::Type::kLeft || j.semi_or_anti()) && right_pushable &&
                    only_columns_in(c, nl, n);
    if (to_left && is_deterministic(c)) left.push_back(c);
    else if (to_right && is_deterministic(c)) right.push_back(c);
    else join_cond.push_back(c);
  }
  for (auto& c : right) c = remap_columns(c, [&](std::size_t i) { return i - nl; });
  auto nj = std::static_pointer_cast<LogicalJoin>(std::const_pointer_cast<LogicalNode>(with_inputs(
      j, {push_filter(left, j.inputs[0], pos), push_filter(right, j.inputs[1], pos)})));
  nj->condition = conjunction(join_cond);
  return keep_above(above, nj, pos);
}

// A lookup join (Flink's rules before StreamPhysicalLookupJoin): conjuncts on the input's
// columns go below it (the probe side; a LEFT join keeps each input row's columns as they
// are), and so do an INNER join's ON conjuncts on the input; an INNER join takes the WHERE
// conjuncts that read the table into its condition (then a filter on the fetched rows or
// the join condition); a LEFT join's stay above.
LogicalPtr push_lookup_join(const LogicalNode& node, std::vector<ExprPtr> conds, SourcePosition pos) {
  const auto& j = static_cast<const LogicalLookupJoin&>(node);
  const std::size_t nl = j.input_columns(), n = j.schema.size();
  std::vector<ExprPtr> below, above, join_cond;
  for (const auto& c : conds) {
    if (only_columns_in(c, 0, nl) && is_deterministic(c)) below.push_back(c);
    else if (!j.left_outer) join_cond.push_back(c);
    else above.push_back(c);
  }
  for (const auto& c : conjuncts(j.condition)) {
    if (!j.left_outer && only_columns_in(c, 0, nl) && is_deterministic(c) && !only_columns_in(c, nl, n)) below.push_back(c);
    else join_cond.push_back(c);
  }
  auto nj = std::static_pointer_cast<LogicalLookupJoin>(
      std::const_pointer_cast<LogicalNode>(with_inputs(j, {push_filter(below, j.inputs[0], pos)})));
  nj->condition = conjunction(join_cond);
  return keep_above(above, nj, pos);
}

LogicalPtr push_filter(std::vector<ExprPtr> conds, const LogicalPtr& input_raw, SourcePosition pos) {
  const LogicalPtr& input = input_raw;
  if (conds.empty()) return push_down_predicates(input);
  switch (input->kind) {
    case LogicalKind::kFilter: {
      auto more = conjuncts(static_cast<const LogicalFilter&>(*input).condition);
      conds.insert(conds.end(), more.begin(), more.end());
      return push_filter(std::move(conds), input->inputs[0], input->pos);
    }
    case LogicalKind::kProject: {
      const auto& p = static_cast<const LogicalProject&>(*input);
      std::vector<ExprPtr> below, stay;
      for (const auto& c : conds) {
        std::set<std::size_t> cols;
        collect_columns(c, cols);
        bool ok = is_deterministic(c);
        for (auto col : cols) ok = ok && is_deterministic(p.exprs[col]);
        if (ok) below.push_back(substitute(c, p.exprs));
        else stay.push_back(c);
      }
      auto np = with_inputs(p, {push_filter(below, p.inputs[0], pos)});
      return keep_above(stay, np, pos);
    }
    case LogicalKind::kJoin: return push_join(*input, std::move(conds), pos);
    case LogicalKind::kLookupJoin: return push_lookup_join(*input, std::move(conds), pos);
    case LogicalKind::kUnion: {
      std::vector<LogicalPtr> inputs;
      for (const auto& i : input->inputs) inputs.push_back(push_filter(conds, i, pos));
      return with_inputs(*input, inputs);
    }
    case LogicalKind::kAggregate: {
      const auto& a = static_cast<const LogicalAggregate&>(*input);
      std::vector<ExprPtr> below, stay;
      for (const auto& c : conds) {
        if (a.grouping_sets.size() == 1 && only_columns_in(c, 0, a.keys.size()) && is_deterministic(c))
          below.push_back(remap_columns(c, [&](std::size_t i) { return a.keys[i]; }));
        else stay.push_back(c);
      }
      return keep_above(stay, with_inputs(a, {push_filter(below, a.inputs[0], pos)}), pos);
    }
    case LogicalKind::kWindowTvf: {
      std::size_t n_in = input->input().schema.size();
      std::vector<ExprPtr> below, stay;
      for (const auto& c : conds) (only_columns_in(c, 0, n_in) && is_deterministic(c) ? below : stay).push_back(c);
      return keep_above(stay, with_inputs(*input, {push_filter(below, input->inputs[0], pos)}), pos);
    }
    case LogicalKind::kCorrelate: {
      // A condition on the input's columns only filters input rows before they expand
      // (a LEFT correlate keeps every input row it is given, so it holds there too).
      std::size_t n_in = input->input().schema.size();
      std::vector<ExprPtr> below, stay;
      for (const auto& c : conds) (only_columns_in(c, 0, n_in) && is_deterministic(c) ? below : stay).push_back(c);
      return keep_above(stay, with_inputs(*input, {push_filter(below, input->inputs[0], pos)}), pos);
    }
    default:
      // Watermark assigners (a filter below would change the watermark), aggregates over
      // windows, sorts, limits, scans: the filter stays here.
      return keep_above(std::move(conds), push_down_predicates(input), pos);
  }
}

}  // namespace

LogicalPtr push_down_predicates(const LogicalPtr& plan) {
  if (plan->kind == LogicalKind::kFilter)
    return push_filter(conjuncts(static_cast<const LogicalFilter&>(*plan).condition), plan->inputs[0], plan->pos);
  if (plan->kind == LogicalKind::kJoin) return push_join(*plan, {}, plan->pos);
  if (plan->kind == LogicalKind::kLookupJoin) return push_lookup_join(*plan, {}, plan->pos);
  std::vector<LogicalPtr> inputs;
  for (const auto& i : plan->inputs) inputs.push_back(push_down_predicates(i));
  return with_inputs(*plan, inputs);
}

// ------------------------------------------------------------------ projection pushdown

namespace {

using Mapping = std::vector<std::optional<std::size_t>>;

struct Pruned {
  LogicalPtr plan;
  Mapping map;  // old output column -> new output column
};

Mapping identity_map(std::size_t n) {
  Mapping m(n);
  for (std::size_t i = 0; i < n; ++i) m[i] = i;
  return m;
}

std::function<std::size_t(std::size_t)> via(const Mapping& m) {
  return [&m](std::size_t i) { return *m.at(i); };
}

Pruned prune(const LogicalPtr& node, std::set<std::size_t> req);

Pruned prune_passthrough(const LogicalPtr& node, std::set<std::size_t> req, const std::set<std::size_t>& extra) {
  req.insert(extra.begin(), extra.end());
  Pruned in = prune(node->inputs[0], req);
  auto n = std::const_pointer_cast<LogicalNode>(with_inputs(*node, {in.plan}));
  n->schema = in.plan->schema;
  return {n, in.map};
}

Pruned prune(const LogicalPtr& node, std::set<std::size_t> req) {
  std::size_t n_out = node->schema.size();
  switch (node->kind) {
    case LogicalKind::kSink: {
      std::set<std::size_t> all;
      for (std::size_t i = 0; i < node->input().schema.size(); ++i) all.insert(i);
      Pruned in = prune(node->inputs[0], all);
      return {with_inputs(*node, {in.plan}), identity_map(n_out)};
    }
    case LogicalKind::kProject: {
      const auto& p = static_cast<const LogicalProject&>(*node);
      if (req.empty() && !p.exprs.empty()) req.insert(0);
      std::set<std::size_t> in_req;
      for (auto r : req) collect_columns(p.exprs[r], in_req);
      Pruned in = prune(p.inputs[0], in_req);
      std::vector<ExprPtr> exprs;
      std::vector<std::string> names;
      Mapping m(n_out);
      for (auto r : req) {
        m[r] = exprs.size();
        exprs.push_back(remap_columns(p.exprs[r], via(in.map)));
        names.push_back(p.schema.name(r));
      }
      return {make_project(in.plan, std::move(exprs), std::move(names), p.pos), m};
    }
    case LogicalKind::kFilter: {
      std::set<std::size_t> extra;
      collect_columns(static_cast<const LogicalFilter&>(*node).condition, extra);
      Pruned out = prune_passthrough(node, req, extra);
      auto f = std::static_pointer_cast<LogicalFilter>(std::const_pointer_cast<LogicalNode>(out.plan));
      f->condition = remap_columns(f->condition, via(out.map));
      return out;
    }
    case LogicalKind::kWatermarkAssigner: {
      const auto& w = static_cast<const LogicalWatermarkAssigner&>(*node);
      std::set<std::size_t> extra{w.rowtime};
      collect_columns(w.watermark, extra);
      Pruned out = prune_passthrough(node, req, extra);
      auto nw = std::static_pointer_cast<LogicalWatermarkAssigner>(std::const_pointer_cast<LogicalNode>(out.plan));
      nw->rowtime = *out.map[w.rowtime];
      nw->watermark = remap_columns(nw->watermark, via(out.map));
      return out;
    }
    case LogicalKind::kScan: {
      const auto& s = static_cast<const LogicalScan&>(*node);
      const ConnectorDescriptor* connector = find_sql_connector(s.table.connector());
      if (!connector || !connector->projection_pushdown) return {node, identity_map(n_out)};
      if (req.empty()) req.insert(0);  // a source needs one column to carry its rows
      auto ns = std::make_shared<LogicalScan>(s);
      ns->projected.clear();
      std::vector<RowField> fields;
      Mapping m(n_out);
      for (auto r : req) {
        m[r] = fields.size();
        ns->projected.push_back(s.projected[r]);
        fields.push_back(s.schema.field(r));
      }
      ns->schema = Schema(std::move(fields));
      return {ns, m};
    }
    case LogicalKind::kAggregate:
    case LogicalKind::kWindowAggregate: {
      bool window = node->kind == LogicalKind::kWindowAggregate;
      std::shared_ptr<LogicalNode> copy = std::const_pointer_cast<LogicalNode>(with_inputs(*node, node->inputs));
      auto& keys = window ? static_cast<LogicalWindowAggregate&>(*copy).keys : static_cast<LogicalAggregate&>(*copy).keys;
      auto& aggs = window ? static_cast<LogicalWindowAggregate&>(*copy).aggregates
                          : static_cast<LogicalAggregate&>(*copy).aggregates;
      std::set<std::size_t> in_req(keys.begin(), keys.end());
      for (const auto& a : aggs) {
        in_req.insert(a.args.begin(), a.args.end());
        if (a.filter) in_req.insert(*a.filter);
      }
      if (window) {
        const auto& w = static_cast<LogicalWindowAggregate&>(*copy).window;
        in_req.insert(w.time_column);
        if (w.attached_start) in_req.insert(*w.attached_start);
      }
      if (in_req.empty() && !node->input().schema.fields().empty()) in_req.insert(0);  // COUNT(*): rows must flow
      Pruned in = prune(node->inputs[0], in_req);
      for (auto& k : keys) k = *in.map[k];
      for (auto& a : aggs) {
        for (auto& x : a.args) x = *in.map[x];
        if (a.filter) a.filter = *in.map[*a.filter];
      }
      if (window) {
        auto& w = static_cast<LogicalWindowAggregate&>(*copy).window;
        w.time_column = *in.map[w.time_column];
        if (w.attached_start) w.attached_start = *in.map[*w.attached_start];
      }
      copy->inputs = {in.plan};
      return {copy, identity_map(n_out)};
    }
    case LogicalKind::kWindowTvf: {
      const auto& t = static_cast<const LogicalWindowTvf&>(*node);
      std::size_t n_in = t.input().schema.size();
      std::set<std::size_t> in_req{t.window.time_column};
      in_req.insert(t.window.partition_keys.begin(), t.window.partition_keys.end());
      for (auto r : req)
        if (r < n_in) in_req.insert(r);
      Pruned in = prune(t.inputs[0], in_req);
      auto nt = std::make_shared<LogicalWindowTvf>(t);
      nt->window.time_column = *in.map[t.window.time_column];
      for (auto& k : nt->window.partition_keys) k = *in.map[k];
      nt->inputs = {in.plan};
      nt->schema = window_tvf_schema(in.plan->schema, nt->window);
      Mapping m(n_out);
      std::size_t new_n_in = in.plan->schema.size();
      for (std::size_t i = 0; i < n_in; ++i) m[i] = in.map[i];
      for (std::size_t i = 0; i < 3; ++i) m[n_in + i] = new_n_in + i;
      return {nt, m};
    }
    case LogicalKind::kCorrelate: {
      // Input columns pass through: keep the required ones and what the arguments read;
      // the function's columns all stay (the function produces them together).
      const auto& c = static_cast<const LogicalCorrelate&>(*node);
      std::size_t n_in = c.input().schema.size();
      std::set<std::size_t> in_req;
      for (auto r : req)
        if (r < n_in) in_req.insert(r);
      for (const auto& a : c.args) collect_columns(a, in_req);
      if (c.condition) {
        std::set<std::size_t> read;
        collect_columns(c.condition, read);
        for (auto r : read)
          if (r < n_in) in_req.insert(r);
      }
      if (in_req.empty() && n_in > 0) in_req.insert(0);  // rows must flow
      Pruned in = prune(c.inputs[0], in_req);
      auto nc = std::make_shared<LogicalCorrelate>(c);
      for (auto& a : nc->args) a = remap_columns(a, via(in.map));
      nc->inputs = {in.plan};
      std::vector<RowField> fields = in.plan->schema.fields();
      for (std::size_t i = n_in; i < n_out; ++i) fields.push_back(c.schema.field(i));
      nc->schema = Schema(std::move(fields));
      Mapping m(n_out);
      std::size_t new_n_in = in.plan->schema.size();
      for (std::size_t i = 0; i < n_in; ++i) m[i] = in.map[i];
      for (std::size_t i = n_in; i < n_out; ++i) m[i] = new_n_in + (i - n_in);
      if (nc->condition) nc->condition = remap_columns(nc->condition, via(m));
      return {nc, m};
    }
    case LogicalKind::kLookupJoin: {
      // The input's required columns and what the condition reads pass through; the table's
      // columns are fetched only when required or read by the condition (its keys among them),
      // so the source reads fewer columns (Flink's projection push-down into the lookup).
      const auto& j = static_cast<const LogicalLookupJoin&>(*node);
      const std::size_t nl = j.input_columns();
      std::set<std::size_t> all = req;
      collect_columns(j.condition, all);
      std::set<std::size_t> in_req, dim_req;
      for (auto c : all) (c < nl ? in_req : dim_req).insert(c < nl ? c : c - nl);
      if (in_req.empty() && nl > 0) in_req.insert(0);  // rows must flow
      if (dim_req.empty() && !j.columns.empty()) dim_req.insert(0);
      Pruned in = prune(j.inputs[0], in_req);
      auto nj = std::make_shared<LogicalLookupJoin>(j);
      nj->inputs = {in.plan};
      nj->columns.clear();
      const std::size_t new_nl = in.plan->schema.size();
      Mapping m(n_out);
      for (std::size_t i = 0; i < nl; ++i) m[i] = in.map[i];
      for (auto d : dim_req) {
        m[nl + d] = new_nl + nj->columns.size();
        nj->columns.push_back(j.columns[d]);
      }
      if (nj->condition) nj->condition = remap_columns(nj->condition, via(m));
      nj->schema = lookup_join_schema(in.plan->schema, *nj);
      return {nj, m};
    }
    case LogicalKind::kProcessTableFunction:  // the function reads whole rows (polymorphic table arguments)
    case LogicalKind::kMatch: {
      // The conditions and measures read whole rows (the extended row): keep every input column.
      std::vector<LogicalPtr> inputs;
      for (const auto& i : node->inputs) {
        std::set<std::size_t> in_req;
        for (std::size_t c = 0; c < i->schema.size(); ++c) in_req.insert(c);
        Pruned in = prune(i, in_req);
        std::vector<std::size_t> order;
        bool identity = in.plan->schema.size() == in_req.size();
        for (std::size_t c = 0; c < in_req.size(); ++c) {
          order.push_back(*in.map[c]);
          identity = identity && *in.map[c] == c;
        }
        // The operator reads its columns by index.
        inputs.push_back(identity ? in.plan : make_column_project(in.plan, order, node->pos));
      }
      Mapping m(n_out);
      for (std::size_t i = 0; i < n_out; ++i) m[i] = i;
      return {with_inputs(*node, inputs), m};
    }
    case LogicalKind::kOverAggregate: {
      // Input columns pass through: keep the required ones and what the window reads.
      const auto& o = static_cast<const LogicalOverAggregate&>(*node);
      std::size_t n_in = o.input().schema.size();
      std::set<std::size_t> in_req(o.window.partition_keys.begin(), o.window.partition_keys.end());
      in_req.insert(o.window.order_column);
      for (auto r : req)
        if (r < n_in) in_req.insert(r);
      for (const auto& a : o.aggregates) {
        in_req.insert(a.args.begin(), a.args.end());
        if (a.filter) in_req.insert(*a.filter);
      }
      Pruned in = prune(o.inputs[0], in_req);
      auto no = std::make_shared<LogicalOverAggregate>(o);
      for (auto& k : no->window.partition_keys) k = *in.map[k];
      no->window.order_column = *in.map[o.window.order_column];
      for (auto& a : no->aggregates) {
        for (auto& x : a.args) x = *in.map[x];
        if (a.filter) a.filter = *in.map[*a.filter];
      }
      no->inputs = {in.plan};
      no->schema = over_aggregate_schema(in.plan->schema, no->aggregates);
      Mapping m(n_out);
      std::size_t new_n_in = in.plan->schema.size();
      for (std::size_t i = 0; i < n_in; ++i) m[i] = in.map[i];
      for (std::size_t i = 0; i < o.aggregates.size(); ++i) m[n_in + i] = new_n_in + i;
      return {no, m};
    }
    case LogicalKind::kUnion: {
      if (req.empty() && n_out > 0) req.insert(0);
      std::vector<std::size_t> cols(req.begin(), req.end());
      std::vector<LogicalPtr> inputs;
      for (const auto& i : node->inputs) {
        Pruned p = prune(i, req);
        std::vector<std::size_t> exact;
        for (auto c : cols) exact.push_back(*p.map[c]);
        bool same = p.plan->schema.size() == exact.size();
        for (std::size_t k = 0; same && k < exact.size(); ++k) same = exact[k] == k;
        inputs.push_back(same ? p.plan : make_column_project(p.plan, exact, node->pos));
      }
      auto u = std::const_pointer_cast<LogicalNode>(with_inputs(*node, inputs));
      std::vector<RowField> fields;
      Mapping m(n_out);
      for (auto c : cols) {
        m[c] = fields.size();
        fields.push_back(node->schema.field(c));
      }
      u->schema = Schema(std::move(fields));
      return {u, m};
    }
    case LogicalKind::kSort: {
      const auto& s = static_cast<const LogicalSort&>(*node);
      std::set<std::size_t> extra;
      for (const auto& k : s.keys) extra.insert(k.column);
      Pruned out = prune_passthrough(node, req, extra);
      auto ns = std::static_pointer_cast<LogicalSort>(std::const_pointer_cast<LogicalNode>(out.plan));
      for (auto& k : ns->keys) k.column = *out.map[k.column];
      return out;
    }
    case LogicalKind::kLimit: return prune_passthrough(node, req, {});
    case LogicalKind::kJoin: {
      const auto& j = static_cast<const LogicalJoin&>(*node);
      std::size_t nl = j.input(0).schema.size();
      std::set<std::size_t> all = req;
      collect_columns(j.condition, all);
      std::set<std::size_t> lreq, rreq;
      for (auto c : all) (c < nl ? lreq : rreq).insert(c < nl ? c : c - nl);
      Pruned l = prune(j.inputs[0], lreq), r = prune(j.inputs[1], rreq);
      // The condition's columns (left ++ right) and the output's (the same, or a semi /
      // anti join's left ones).
      const std::size_t nr = j.input(1).schema.size();
      Mapping cm(nl + nr);
      std::size_t new_nl = l.plan->schema.size();
      for (std::size_t i = 0; i < nl + nr; ++i)
        cm[i] = i < nl ? l.map[i] : (r.map[i - nl] ? std::optional(new_nl + *r.map[i - nl]) : std::nullopt);
      Mapping m(cm.begin(), cm.begin() + static_cast<std::ptrdiff_t>(n_out));
      std::vector<RowField> fields(j.semi_or_anti() ? new_nl : new_nl + r.plan->schema.size());
      for (std::size_t i = 0; i < n_out; ++i)
        if (m[i]) fields[*m[i]] = j.schema.field(i);
      auto nj = std::make_shared<LogicalJoin>(j);
      nj->inputs = {l.plan, r.plan};
      nj->schema = Schema(std::move(fields));
      if (nj->condition) nj->condition = remap_columns(nj->condition, via(cm));
      return {nj, m};
    }
    case LogicalKind::kRank: {
      // The rank's input keeps what is read above plus the partition and order keys; the
      // rank number is dropped when nothing above reads it (Flink's outputRankNumber = false,
      // which a deduplication needs).
      const auto& r = static_cast<const LogicalRank&>(*node);
      const std::size_t n_in = r.input().schema.size();
      std::set<std::size_t> in_req;
      for (auto x : req)
        if (x < n_in) in_req.insert(x);
      in_req.insert(r.partition_keys.begin(), r.partition_keys.end());
      for (const auto& k : r.order_keys) in_req.insert(k.column);
      Pruned in = prune(r.inputs[0], in_req);
      auto nr = std::make_shared<LogicalRank>(r);
      for (auto& k : nr->partition_keys) k = *in.map[k];
      for (auto& k : nr->order_keys) k.column = *in.map[k.column];
      nr->output_rank_number = r.output_rank_number && (!r.rank_end || req.count(n_in) > 0);
      nr->inputs = {in.plan};
      nr->schema = rank_schema(in.plan->schema, *nr);
      Mapping m(n_out);
      for (std::size_t i = 0; i < n_in; ++i) m[i] = in.map[i];
      if (nr->output_rank_number) m[n_in] = in.plan->schema.size();
      return {nr, m};
    }
    case LogicalKind::kValues: return {node, identity_map(n_out)};
    case LogicalKind::kVectorSearch: {
      // The input's columns all pass through (the query expression reads over them); the
      // vector table's columns and the score stay (the operator fills them together).
      std::set<std::size_t> all;
      for (std::size_t i = 0; i < node->input().schema.size(); ++i) all.insert(i);
      Pruned in = prune(node->inputs[0], all);
      auto nv = std::make_shared<LogicalVectorSearch>(static_cast<const LogicalVectorSearch&>(*node));
      nv->query = remap_columns(nv->query, via(in.map));
      nv->inputs = {in.plan};
      return {nv, identity_map(n_out)};
    }
  }
  return {node, identity_map(n_out)};
}

bool is_identity(const LogicalProject& p) {
  const Schema& in = p.input().schema;
  if (p.exprs.size() != in.size()) return false;
  for (std::size_t i = 0; i < p.exprs.size(); ++i)
    if (p.exprs[i]->kind != ExprKind::kColumnRef || p.exprs[i]->column_index != i || p.schema.name(i) != in.name(i))
      return false;
  return true;
}

// Merges Project(Project(x)) and drops identity projections.
LogicalPtr merge_projects(const LogicalPtr& node) {
  std::vector<LogicalPtr> inputs;
  for (const auto& i : node->inputs) inputs.push_back(merge_projects(i));
  LogicalPtr n = with_inputs(*node, inputs);
  if (n->kind != LogicalKind::kProject) return n;
  const auto& p = static_cast<const LogicalProject&>(*n);
  if (p.input().kind == LogicalKind::kProject) {
    const auto& inner = static_cast<const LogicalProject&>(p.input());
    bool ok = std::all_of(inner.exprs.begin(), inner.exprs.end(), [](const auto& e) { return is_deterministic(e); });
    if (ok) {
      std::vector<ExprPtr> exprs;
      for (const auto& e : p.exprs) exprs.push_back(substitute(e, inner.exprs));
      std::vector<std::string> names;
      for (const auto& f : p.schema.fields()) names.push_back(f.name);
      return merge_projects(make_project(inner.inputs[0], std::move(exprs), std::move(names), p.pos));
    }
  }
  if (is_identity(p)) return p.inputs[0];
  return n;
}

}  // namespace

LogicalPtr push_down_projections(const LogicalPtr& plan) {
  std::set<std::size_t> all;
  for (std::size_t i = 0; i < plan->schema.size(); ++i) all.insert(i);
  Pruned p = prune(plan, all);
  LogicalPtr out = p.plan;
  // A top-level projection restores the columns the pruning dropped (never for sinks).
  bool exact = out->schema.size() == plan->schema.size();
  if (!exact) {
    std::vector<std::size_t> cols;
    for (std::size_t i = 0; i < plan->schema.size(); ++i) cols.push_back(*p.map[i]);
    out = make_column_project(out, cols, plan->pos);
  }
  return push_down_nested_projections(merge_projects(out));
}

// ------------------------------------------------------------------ driver

LogicalPtr optimize(LogicalPtr plan, const OptimizerOptions& options) {
  metrics::sql::StageTimer timer(metrics::sql::counters().optimize);
  auto fold = [&](const LogicalPtr& p) { return fold_constants(p, options.session); };
  auto pass = [&](bool enabled, const char* name, const auto& f) {
    if (!enabled) return;
    try {
      plan = f(plan);
    } catch (const TranslationError&) {
      throw;
    } catch (const std::exception& e) {
      // A failing rewrite is a planner bug; the plan before it is still valid, so the
      // query runs, but say so: a skipped rewrite changes the plan (and its cost).
      metrics::sql::counters().optimize.errors.fetch_add(1, std::memory_order_relaxed);
      log::warn("the optimizer's {} rewrite failed and was skipped (the query runs without it): {}", name, e.what());
    }
  };
  // Not optional: a rank without a range only runs as an OVER aggregate.
  plan = plan_unfiltered_ranks(plan);
  pass(options.fold_constants, "constant folding", fold);
  pass(options.push_predicates, "predicate push-down", &push_down_predicates);
  pass(options.reorder_joins, "join reordering", &reorder_joins);
  pass(options.push_join_keys, "join key push-down", &push_join_key_expressions);
  pass(options.distinct_agg_split_buckets > 0, "split distinct aggregation",
       [&](const LogicalPtr& p) { return split_distinct_aggregates(p, options.distinct_agg_split_buckets); });
  pass(options.push_projections, "projection push-down", &push_down_projections);
  // Merged projections may have brought casts next to literals: fold once more.
  pass(options.fold_constants, "constant folding", fold);
  return plan;
}

}  // namespace clink::sql
