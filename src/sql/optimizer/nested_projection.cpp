// Nested projection push-down (Flink's SupportsProjectionPushDown with
// supportsNestedProjection): after the columns are pruned (optimizer.cpp, prune()), a ROW
// column that the plan reads only through `col.field` accesses (FIELD(col, 'name')) is
// narrowed, at a scan whose connector reads nested projections, to the fields used. The
// source then decodes only those (the json decoder skips the others as it skips an
// unprojected column): Nexmark's q0 reads bid.auction, bid.bidder, ... and
// person.dateTime, auction.dateTime, not the 25 other fields of the three ROWs.
//
// One top-down walk with, per output column, what its consumers need: the whole value or
// a set of first-level fields. Project, Filter and WatermarkAssigner pass the needs
// through (their own expressions add theirs); every other node needs its inputs whole, so
// below it nothing narrows and its own types never change. A node whose input narrowed is
// rebuilt with its expressions retyped (the column references and the FIELD calls over
// them; FIELD finds its field by name, so the narrowed type resolves the same field).
#include "nested_projection.hpp"

#include <set>

#include "clink/sql/function/function_registry.hpp"
#include "clink/sql/spec/connector_table.hpp"

namespace clink::sql {

namespace {

struct Need {
  bool whole = false;
  std::set<std::size_t> fields;  // first-level fields of a ROW, when not whole

  void add(const Need& o) {
    whole = whole || o.whole;
    if (!whole) fields.insert(o.fields.begin(), o.fields.end());
  }
};
using Needs = std::vector<Need>;

Needs all_whole(std::size_t n) {
  Needs needs(n);
  for (auto& x : needs) x.whole = true;
  return needs;
}

// FIELD(column, 'name'): the column and the field's index; else nullopt.
std::optional<std::pair<std::size_t, std::size_t>> field_of_column(const Expr& e) {
  if (e.kind != ExprKind::kCall || !e.function || e.function->name != "FIELD" || e.args.size() != 2) return std::nullopt;
  const Expr& base = *e.args[0];
  const Expr& name = *e.args[1];
  if (base.kind != ExprKind::kColumnRef || !base.type.is(TypeKind::kRow) || !name.is_literal() ||
      name.literal.is_null() || !std::holds_alternative<std::string>(name.literal.v))
    return std::nullopt;
  try {
    return std::make_pair(base.column_index, row_field_index(base.type, name.literal));
  } catch (const SqlTypeError&) {
    return std::nullopt;
  }
}

// What `e` needs of its input columns: a field access adds its field, any other
// reference the whole column.
void collect(const ExprPtr& e, Needs& needs) {
  if (!e) return;
  if (auto f = field_of_column(*e)) {
    if (!needs[f->first].whole) needs[f->first].fields.insert(f->second);
    return;
  }
  if (e->kind == ExprKind::kColumnRef) {
    needs[e->column_index].whole = true;
    return;
  }
  for (const auto& a : e->args) collect(a, needs);
}

}  // namespace

// `e` over an input whose column types are now `in`'s.
ExprPtr retype(const ExprPtr& e, const Schema& in) {
  if (e->kind == ExprKind::kColumnRef) {
    const LogicalType& t = in.field(e->column_index).type;
    if (t == e->type) return e;
    auto c = std::make_shared<Expr>(*e);
    c->type = t;
    return c;
  }
  if (e->args.empty()) return e;
  auto c = std::make_shared<Expr>(*e);
  bool changed = false;
  for (auto& a : c->args) {
    auto n = retype(a, in);
    changed = changed || n != a;
    a = n;
  }
  if (!changed) return e;
  if (field_of_column(*e)) {  // FIELD over a narrowed ROW: its argument type follows
    auto f = std::make_shared<ResolvedFunction>(*c->function);
    f->arg_types[0] = c->args[0]->type;
    c->function = f;
  }
  return c;
}

namespace {

LogicalPtr narrow(const LogicalPtr& node, const Needs& needs);

LogicalPtr narrow_scan(const LogicalScan& s, const Needs& needs) {
  const ConnectorDescriptor* d = find_sql_connector(s.table.connector());
  if (!d || !d->projection_pushdown || !d->nested_projection_pushdown ||
      !d->nested_projection_pushdown(s.table.options, s.table.physical_schema()))
    return nullptr;
  std::vector<RowField> fields = s.schema.fields();
  bool changed = false;
  for (std::size_t r = 0; r < s.projected.size() && r < fields.size(); ++r) {
    const LogicalType& t = fields[r].type;
    if (!t.is(TypeKind::kRow) || needs[r].whole || needs[r].fields.empty() || needs[r].fields.size() == t.fields().size())
      continue;
    std::vector<RowField> kept;
    for (std::size_t f : needs[r].fields) kept.push_back(t.fields()[f]);
    fields[r].type = LogicalType::row(std::move(kept)).with_nullable(t.nullable());
    changed = true;
  }
  if (!changed) return nullptr;
  auto ns = std::make_shared<LogicalScan>(s);
  ns->schema = Schema(std::move(fields));
  return ns;
}

// A pass-through node (Filter, WatermarkAssigner) over its narrowed input: the same
// columns, the input's types, `fix` retypes its expressions.
template <class Node, class Fix>
LogicalPtr pass_through(const LogicalPtr& node, Needs needs, const std::vector<ExprPtr>& exprs, Fix&& fix) {
  for (const auto& e : exprs) collect(e, needs);
  LogicalPtr in = narrow(node->inputs[0], needs);
  if (in == node->inputs[0]) return node;
  auto n = std::static_pointer_cast<Node>(std::const_pointer_cast<LogicalNode>(with_inputs(*node, {in})));
  n->schema = in->schema;
  fix(*n, in->schema);
  return n;
}

LogicalPtr narrow(const LogicalPtr& node, const Needs& needs) {
  switch (node->kind) {
    case LogicalKind::kScan: {
      LogicalPtr n = narrow_scan(static_cast<const LogicalScan&>(*node), needs);
      return n ? n : node;
    }
    case LogicalKind::kProject: {
      const auto& p = static_cast<const LogicalProject&>(*node);
      Needs in_needs(p.input().schema.size());
      for (std::size_t r = 0; r < p.exprs.size(); ++r) {
        const ExprPtr& e = p.exprs[r];
        if (e->kind == ExprKind::kColumnRef) in_needs[e->column_index].add(needs[r]);
        else collect(e, in_needs);
      }
      LogicalPtr in = narrow(p.inputs[0], in_needs);
      if (in == p.inputs[0]) return node;
      std::vector<ExprPtr> exprs;
      std::vector<std::string> names;
      for (std::size_t r = 0; r < p.exprs.size(); ++r) {
        exprs.push_back(retype(p.exprs[r], in->schema));
        names.push_back(p.schema.name(r));
      }
      return make_project(in, std::move(exprs), std::move(names), p.pos);
    }
    case LogicalKind::kFilter: {
      const auto& f = static_cast<const LogicalFilter&>(*node);
      return pass_through<LogicalFilter>(node, needs, {f.condition}, [](LogicalFilter& n, const Schema& in) {
        n.condition = retype(n.condition, in);
      });
    }
    case LogicalKind::kWatermarkAssigner: {
      const auto& w = static_cast<const LogicalWatermarkAssigner&>(*node);
      Needs with_rowtime = needs;
      with_rowtime[w.rowtime].whole = true;
      return pass_through<LogicalWatermarkAssigner>(node, with_rowtime, {w.watermark},
                                                    [](LogicalWatermarkAssigner& n, const Schema& in) {
                                                      n.watermark = retype(n.watermark, in);
                                                    });
    }
    default: {
      // Its inputs whole: below it only what it passes to nothing narrows, so it keeps its types.
      std::vector<LogicalPtr> inputs;
      bool changed = false;
      for (const auto& i : node->inputs) {
        inputs.push_back(narrow(i, all_whole(i->schema.size())));
        changed = changed || inputs.back() != i;
      }
      return changed ? with_inputs(*node, std::move(inputs)) : node;
    }
  }
}

}  // namespace

LogicalPtr push_down_nested_projections(const LogicalPtr& plan) {
  return narrow(plan, all_whole(plan->schema.size()));
}

Schema scan_read_schema(const LogicalScan& s) {
  std::vector<RowField> physical = s.table.physical_schema().fields();
  for (std::size_t r = 0; r < s.projected.size() && r < s.schema.size(); ++r)
    if (s.projected[r] < physical.size() && physical[s.projected[r]].type.is(TypeKind::kRow) &&
        s.schema.field(r).type.is(TypeKind::kRow))
      physical[s.projected[r]].type = s.schema.field(r).type;
  return Schema(std::move(physical));
}

}  // namespace clink::sql
