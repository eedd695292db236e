// Binder: processing-time lookup joins, `FROM o [LEFT] JOIN t FOR SYSTEM_TIME AS OF
// o.proc_time AS d ON o.k = d.id [AND ...]`, decided as Flink decides
// (LogicalCorrelateToJoinFromTemporalTableRule, StreamPhysicalLookupJoinRule): the AS OF
// expression is the left's processing-time attribute and the right table's connector
// serves lookups (its row's lookup_factory). The table is not scanned: the join fetches
// its rows per input row (LogicalLookupJoin, lookup_join_plan.hpp).
#include "binder_internal.hpp"
#include "clink/sql/planner/lookup_join_plan.hpp"
#include "clink/sql/spec/connector_table.hpp"

namespace clink::sql {

std::optional<Bound> Binder::Impl::bind_lookup_join(const ast::Join& j, const ast::TableRef& ref, const Bound& left,
                                                     const ast::NamedTable& dim) {
  const ast::Expr& as_of = *dim.system_time;
  ExprContext ctx;
  ctx.scope = &left.scope;
  ctx.clause = "FOR SYSTEM_TIME AS OF";
  ExprPtr t;
  try {
    t = bind_expr(as_of, ctx);
  } catch (const SqlError&) {
    return std::nullopt;  // the event-time path reports it
  }
  if (t->kind == ExprKind::kCall && t->function && t->function->name == "PROCTIME")
    fail(as_of.pos, "Temporal table can only be used in temporal join and only supports 'FOR SYSTEM_TIME AS OF' left "
                    "table's time attribute field.\nQuerying a temporal table using 'FOR SYSTEM TIME AS OF' syntax with "
                    "an expression call 'PROCTIME()' is not supported yet.");
  if (t->kind != ExprKind::kColumnRef || !is_proctime_attribute(*left.plan, t->column_index)) return std::nullopt;
  // A processing-time AS OF: a lookup join when the right table serves lookups.
  const std::string& name = dim.name.back();
  bool cte = false;
  if (dim.name.size() == 1)
    for (const auto& scope : ctes) cte = cte || scope.count(name) > 0;
  const TableDef* def = cte || catalog.view(name) ? nullptr : catalog.table(name);
  const ConnectorDescriptor* connector = def ? find_sql_connector(def->connector()) : nullptr;
  if (!connector || !connector->is_lookup()) {
    // Flink takes it for a processing-time temporal join of a versioned table: without a
    // primary key it says so first.
    const std::string hint = fmt::format(" (`{}` is not a lookup table: a lookup join reads a table whose connector "
                                         "serves lookups: {})",
                                         qualified_text(dim.name), sql_lookup_names());
    if (def && def->primary_key.empty())
      fail(j.right->pos, "Temporal Table Join requires primary key in versioned table, but no primary key can be "
                         "found." + hint);
    fail(as_of.pos, "Processing-time temporal join is not supported yet." + hint);
  }
  if (j.type != ast::Join::Type::Inner && j.type != ast::Join::Type::Left)
    fail(j.right->pos, fmt::format("Temporal table join currently only supports INNER JOIN and LEFT JOIN, but was {}.",
                                   j.type == ast::Join::Type::Right  ? "RIGHT JOIN"
                                   : j.type == ast::Join::Type::Full ? "FULL JOIN"
                                                                     : "CROSS JOIN"));
  if (!j.right->column_aliases.empty()) fail(j.right->pos, "column aliases on a lookup table are not supported");
  TableDef merged = *def;
  for (const auto& hint : dim.hints) {
    if (hint.name != "OPTIONS") fail(hint.pos, fmt::format("unsupported table hint {}", hint.name));
    for (const auto& p : hint.options) merged.set_option(p.key, p.value);
  }
  for (const auto& c : merged.columns)
    if (c.kind != CatalogColumn::Kind::kPhysical)
      fail(j.right->pos, fmt::format("lookup table `{}`: the {} column `{}` is not supported in a lookup join (only "
                                     "physical columns are looked up)",
                                     merged.name, c.kind == CatalogColumn::Kind::kComputed ? "computed" : "metadata",
                                     c.name));
  try {
    (void)parse_lookup_options(merged.options);
  } catch (const ClinkError& e) {
    fail(j.right->pos, fmt::format("lookup table `{}`: {}", merged.name, e.what()));
  }
  auto node = std::make_shared<LogicalLookupJoin>();
  node->table = merged;
  node->alias = j.right->alias.value_or(name);
  node->left_outer = j.type == ast::Join::Type::Left;
  node->inputs = {left.plan};
  node->pos = ref.pos;
  try {
    node->async = async_lookup_options(session);
  } catch (const ClinkError& e) {
    fail(ref.pos, e.what());
  }
  const Schema physical = merged.physical_schema();
  for (std::size_t i = 0; i < physical.size(); ++i) node->columns.push_back(i);
  node->schema = lookup_join_schema(left.plan->schema, *node);
  Bound out;
  out.scope.columns = left.scope.columns;
  const Schema fetched = lookup_fetched_schema(*node);
  for (const auto& f : fetched.fields()) out.scope.columns.push_back({node->alias, f.name, f.type});
  if (j.on) {
    ExprContext on;
    on.scope = &out.scope;
    on.clause = "JOIN ON";
    std::vector<const ast::Expr*> aggs;
    collect_aggregates(j.on.get(), registry, aggs);
    if (!aggs.empty()) fail(aggs[0]->pos, "aggregate functions are not allowed in ON");
    node->condition = bind_expr(*j.on, on);
    if (!node->condition->type.is(TypeKind::kBoolean))
      fail(j.on->pos, fmt::format("JOIN ON needs a BOOLEAN condition, got {}", node->condition->type.to_string()));
  }
  const SourcePosition on_pos = j.on ? j.on->pos : j.right->pos;
  const LookupJoinAnalysis a = analyze_lookup_join(*node);
  if (a.not_distinct)
    fail(on_pos, "LookupJoin doesn't support join condition contains 'a IS NOT DISTINCT FROM b' (or alternative '(a = "
                 "b) or (a IS NULL AND b IS NULL)')");
  if (a.keys.empty())
    fail(on_pos, fmt::format("Temporal table join requires an equality condition on fields of table [{}].", merged.name));
  out.plan = node;
  return out;
}

}  // namespace clink::sql
