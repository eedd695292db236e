// Binder: table functions in FROM (UNNEST, LATERAL TABLE): Flink's Correlate. The
// function's arguments are bound over the FROM items on its left (the correlation), and
// the function's rows are joined to each left row: INNER for `, f(...)`, CROSS JOIN and
// JOIN ... ON c (a filter above), LEFT for LEFT JOIN ... ON TRUE.
#include "binder_internal.hpp"
#include "clink/sql/function/table_function.hpp"

namespace clink::sql {

namespace {

bool is_true_literal(const ExprPtr& e) {
  return e->is_literal() && e->type.is(TypeKind::kBoolean) && !e->literal.is_null() && e->literal.as_bool();
}

}  // namespace

Bound Binder::Impl::bind_correlate(Bound left, const ast::TableRef& ref, bool left_outer) {
  const auto& tf = std::get<ast::TableFunction>(ref.node);
  const std::string name = upper_name(tf.name.back());
  ExprContext ctx;
  ctx.scope = &left.scope;
  ctx.clause = tf.name.size() == 1 && name == "UNNEST" ? "UNNEST" : "a table function's arguments";
  std::vector<ExprPtr> args;
  for (const auto& a : tf.args) {
    std::vector<const ast::Expr*> aggs;
    collect_aggregates(a.get(), registry, aggs);
    if (!aggs.empty()) fail(aggs[0]->pos, fmt::format("aggregate functions are not allowed in {}", ctx.clause));
    args.push_back(bind_expr(*a, ctx));
  }
  auto node = std::make_shared<LogicalCorrelate>();
  std::vector<RowField> function_fields;
  if (tf.name.size() == 1 && name == "UNNEST") {
    // Flink's UNNEST expands one collection (UnnestRowsFunction reads its first argument).
    if (args.size() != 1)
      fail(ref.pos, fmt::format("UNNEST takes one ARRAY or MAP argument, got {}", args.size()));
    function_fields = unnest_fields(args[0]->type, tf.with_ordinality, left_outer);
    if (function_fields.empty())
      fail(tf.args[0]->pos, fmt::format("UNNEST needs an ARRAY or MAP argument, got {}", args[0]->type.to_string()));
    node->function = LogicalCorrelate::Function::kUnnest;
  } else {
    if (tf.with_ordinality) fail(ref.pos, "WITH ORDINALITY applies to UNNEST only");
    const TableFunctionDef* def = tf.name.size() == 1 ? TableFunctionRegistry::process().find(name) : nullptr;
    if (!def)
      fail(ref.pos, fmt::format("No table function `{}` is registered (UNNEST is the built-in table function)",
                                qualified_text(tf.name)));
    if (!tf.lateral_table) fail(ref.pos, fmt::format("call the table function {} as LATERAL TABLE({}(...))", name, name));
    if (args.size() != def->params.size())
      fail(ref.pos, fmt::format("table function {} takes {} arguments, got {}", name, def->params.size(), args.size()));
    for (std::size_t i = 0; i < args.size(); ++i) {
      const LogicalType& want = def->params[i];
      if (!supports_implicit_cast(args[i]->type, want.with_nullable(true)))
        fail(tf.args[i]->pos, fmt::format("table function {}: argument {} is {}, the function takes {}", name, i + 1,
                                          args[i]->type.to_string(), want.to_string()));
      args[i] = at(tf.args[i]->pos, [&] { return expr::cast_if_needed(args[i], want.with_nullable(args[i]->type.nullable())); });
    }
    function_fields = def->columns;
    for (auto& f : function_fields) f.type = f.type.with_nullable(true);
    node->function = LogicalCorrelate::Function::kUser;
    node->function_name = name;
  }
  node->args = std::move(args);
  node->with_ordinality = tf.with_ordinality;
  node->left_outer = left_outer;

  // The function's columns: named by the column aliases (AS t(a, b)), else as Flink
  // names them (f0, f1, a row's fields, ORDINALITY); the node keeps Flink's names.
  if (!ref.column_aliases.empty() && ref.column_aliases.size() != function_fields.size())
    fail(ref.pos, fmt::format("{} returns {} columns but {} column aliases were given", name,
                              function_fields.size(), ref.column_aliases.size()));
  Bound out;
  out.scope = left.scope;
  std::vector<std::string> names;
  for (const auto& c : left.scope.columns) names.push_back(c.name);
  const std::string qualifier = ref.alias.value_or("");
  for (std::size_t i = 0; i < function_fields.size(); ++i) {
    const std::string& shown = ref.column_aliases.empty() ? function_fields[i].name : ref.column_aliases[i];
    out.scope.columns.push_back({qualifier, shown, function_fields[i].type});
    names.push_back(function_fields[i].name);
  }
  names = unique_names(names);
  std::vector<RowField> fields;
  for (std::size_t i = 0; i < out.scope.columns.size(); ++i) fields.push_back({names[i], out.scope.columns[i].type});
  node->schema = Schema(std::move(fields));
  node->inputs = {left.plan};
  node->pos = ref.pos;
  out.plan = node;
  return out;
}

// FROM UNNEST(ARRAY[...]) with nothing on its left: the function over one empty row (a
// one-row VALUES whose column a projection then drops).
Bound Binder::Impl::bind_uncorrelated_table_function(const ast::TableRef& ref) {
  auto v = std::make_shared<LogicalValues>();
  v->rows = {{expr::literal(Value(0), LogicalType::int_type().not_null())}};
  v->schema = Schema({{"ZERO", LogicalType::int_type().not_null()}});
  v->pos = ref.pos;
  Bound left{v, Scope{}};
  left.scope.columns.push_back({"", "ZERO", LogicalType::int_type().not_null()});
  Bound b = bind_correlate(left, ref, false);
  std::vector<std::size_t> cols;
  for (std::size_t i = 1; i < b.plan->schema.size(); ++i) cols.push_back(i);
  b.plan = make_column_project(b.plan, cols, ref.pos);
  b.scope.columns.erase(b.scope.columns.begin());
  return b;
}

Bound Binder::Impl::bind_correlate_join(const ast::Join& j, const ast::TableRef& ref) {
  if (j.natural || !j.using_columns.empty())
    fail(ref.pos, "NATURAL and USING joins with a table function are not supported (write ON TRUE)");
  if (j.type == ast::Join::Type::Right || j.type == ast::Join::Type::Full)
    fail(j.right->pos, "a table function can only be the right side of an INNER, CROSS or LEFT join (as in Flink)");
  Bound left = bind_table_ref(*j.left);
  const bool left_outer = j.type == ast::Join::Type::Left;
  Bound out = bind_correlate(std::move(left), *j.right, left_outer);
  if (!j.on) {
    if (left_outer) fail(ref.pos, "LEFT JOIN with a table function needs ON TRUE");
    return out;
  }
  ExprContext ctx;
  ctx.scope = &out.scope;
  ctx.clause = "JOIN ON";
  ExprPtr cond = bind_expr(*j.on, ctx);
  if (!cond->type.is(TypeKind::kBoolean))
    fail(j.on->pos, fmt::format("JOIN ON needs a BOOLEAN condition, got {}", cond->type.to_string()));
  if (is_true_literal(cond)) return out;
  if (left_outer) {
    // Flink: "Currently only support literal TRUE as a LEFT JOIN condition with a table
    // function" for LATERAL TABLE; LEFT JOIN UNNEST takes a condition, kept in the
    // Correlate (a filter above it would drop the NULL-padded rows too).
    auto c = std::static_pointer_cast<LogicalCorrelate>(std::const_pointer_cast<LogicalNode>(out.plan));
    if (c->function != LogicalCorrelate::Function::kUnnest)
      fail(j.on->pos, "LEFT JOIN with a table function supports only ON TRUE (LEFT JOIN UNNEST takes a condition)");
    c->condition = cond;
    return out;
  }
  out.plan = make_filter(out.plan, cond, j.on->pos);
  return out;
}

}  // namespace clink::sql
