// Binder: process table function calls in FROM (Flink 2.x PTFs, process_table_function.hpp):
//   f(input => TABLE t PARTITION BY k [ORDER BY ts], on_time => DESCRIPTOR(ts), uid => 'u', p => v)
// and the positional form f(TABLE t PARTITION BY k, v, ...). Arguments are matched to the
// function's signature as Flink's effective signature lists them: the table argument, the
// scalar parameters, then the implicit on_time and uid.
#include <set>

#include "binder_internal.hpp"
#include "clink/sql/function/process_table_function.hpp"

namespace clink::sql {

namespace {

// The function a call names: a CREATE FUNCTION f AS 'class' of the catalog, else a name
// registered in C++.
const ProcessTableFunctionDef* find_ptf(const Catalog& catalog, const std::string& name) {
  auto& registry = ProcessTableFunctionRegistry::process();
  if (const FunctionDef* f = catalog.function(name); f && !f->class_name.empty()) return registry.find(f->class_name);
  return registry.find(name);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

Bound Binder::Impl::bind_process_table_function(const ast::WindowTvf& call, const ast::TableRef& ref) {
  const std::string& fname = call.function;
  const ProcessTableFunctionDef* def = find_ptf(catalog, fname);
  if (!def)
    fail(ref.pos, fmt::format("No process table function `{}` is registered (register one in C++, or CREATE FUNCTION "
                              "{} AS '<class>' naming one of: {})",
                              fname, fname, fmt::join(ProcessTableFunctionRegistry::process().names(), ", ")));
  const PtfSignature& sig = def->signature;

  // Match the arguments to the effective signature: table, params..., on_time, uid.
  const std::size_t n_params = sig.params.size();
  std::vector<std::string> slots = {lower(sig.table_arg)};
  for (const auto& p : sig.params) slots.push_back(lower(p.name));
  slots.push_back("on_time");
  slots.push_back("uid");
  std::vector<const ast::TvfArg*> bound(slots.size(), nullptr);
  bool named_seen = false;
  for (std::size_t i = 0; i < call.args.size(); ++i) {
    const ast::TvfArg& a = call.args[i];
    std::size_t slot = i;
    if (!a.name.empty()) {
      named_seen = true;
      const std::string n = lower(a.name);
      slot = std::find(slots.begin(), slots.end(), n) - slots.begin();
      if (slot == slots.size())
        fail(a.pos, fmt::format("process table function {} has no argument `{}` (its arguments: {})", fname, n,
                                fmt::join(slots, ", ")));
    } else if (named_seen) {
      fail(a.pos, "a positional argument cannot follow a named one");
    } else if (slot >= slots.size()) {
      fail(a.pos, fmt::format("process table function {} takes at most {} arguments ({}), got {}", fname, slots.size(),
                              fmt::join(slots, ", "), call.args.size()));
    }
    if (bound[slot]) fail(a.pos, fmt::format("argument `{}` of {} is given twice", slots[slot], fname));
    bound[slot] = &a;
  }

  // The table argument.
  const ast::TvfArg* table = bound[0];
  if (!table) fail(ref.pos, fmt::format("process table function {} needs its table argument `{}`", fname, slots[0]));
  if (table->kind != ast::TvfArg::Kind::Table)
    fail(table->pos, fmt::format("argument `{}` of {} is a table: pass it as TABLE name", slots[0], fname));
  for (std::size_t s = 1; s < slots.size(); ++s)
    if (bound[s] && bound[s]->kind == ast::TvfArg::Kind::Table)
      fail(bound[s]->pos, fmt::format("process table function {} takes one table argument (`{}`)", fname, slots[0]));
  Bound in = bind_table_argument(*table);

  auto node = std::make_shared<LogicalProcessTableFunction>();
  node->function = def->name;
  node->pos = ref.pos;
  node->set_semantics = sig.semantics == PtfTableSemantics::kSet;
  if (!node->set_semantics && !table->partition_by.empty())
    fail(table->pos, fmt::format("Only tables with set semantics may be partitioned: the table argument `{}` of {} has "
                                 "row semantics (remove PARTITION BY)",
                                 slots[0], fname));
  if (node->set_semantics && table->partition_by.empty() && !sig.optional_partition_by)
    fail(table->pos, fmt::format("Table argument '{}' requires a PARTITION BY clause for parallel processing.", slots[0]));
  for (const auto& k : table->partition_by) {
    ast::ColumnRef r;
    r.names = k;
    node->partition_keys.push_back(resolve_column(r, in.scope, table->pos));
  }

  // on_time => DESCRIPTOR(ts): an event-time attribute of the input.
  if (const ast::TvfArg* on_time = bound[n_params + 1]) {
    if (on_time->kind != ast::TvfArg::Kind::Descriptor || on_time->columns.size() != 1)
      fail(on_time->pos, "on_time takes one column: on_time => DESCRIPTOR(time_column)");
    ast::ColumnRef r;
    r.names = {on_time->columns[0]};
    const std::size_t c = resolve_column(r, in.scope, on_time->pos);
    if (!is_time_attribute(*in.plan, c))
      fail(on_time->pos, fmt::format("the on_time column `{}` is not an event-time attribute (declare WATERMARK FOR {} "
                                     "on the table)",
                                     on_time->columns[0], on_time->columns[0]));
    node->on_time = c;
  } else if (sig.require_on_time) {
    fail(ref.pos, fmt::format("process table function {} needs an on_time argument: on_time => DESCRIPTOR(time_column)",
                              fname));
  }

  // ORDER BY: set semantics only, first an ascending event-time attribute (Flink's rule).
  if (!table->order_by.empty()) {
    if (!node->set_semantics)
      fail(table->order_by_pos, fmt::format("ORDER BY needs a table with set semantics; {} has row semantics", fname));
    for (std::size_t i = 0; i < table->order_by.size(); ++i) {
      ast::ColumnRef r;
      r.names = table->order_by[i];
      SortKey k;
      k.column = resolve_column(r, in.scope, table->order_by_pos);
      k.descending = table->order_descending[i];
      k.nulls_first = !k.descending;
      node->order_keys.push_back(k);
    }
    const SortKey& first = node->order_keys[0];
    if (first.descending || !is_time_attribute(*in.plan, first.column))
      fail(table->order_by_pos, "the first ORDER BY column of a process table function's table must be an event-time "
                                "attribute in ascending order");
  }

  // uid => 'name'
  node->uid = fname;
  if (const ast::TvfArg* uid = bound[n_params + 2]) {
    const auto* lit = uid->expr ? std::get_if<ast::Literal>(&uid->expr->node) : nullptr;
    if (uid->kind != ast::TvfArg::Kind::Expression || !lit || lit->kind != ast::Literal::Kind::String)
      fail(uid->pos, "uid takes a string literal: uid => 'my-ptf'");
    node->uid = lit->text;
  }

  // Scalar arguments: constants, implicitly cast to the parameter types.
  Scope empty;
  for (std::size_t p = 0; p < n_params; ++p) {
    const PtfScalarParam& param = sig.params[p];
    const ast::TvfArg* a = bound[p + 1];
    if (!a || !a->expr) {
      if (a && a->kind != ast::TvfArg::Kind::Expression)
        fail(a->pos, fmt::format("argument `{}` of {} is a scalar {}", param.name, fname, param.type.to_string()));
      if (!param.optional)
        fail(a ? a->pos : ref.pos, fmt::format("process table function {} needs its argument `{}` ({})", fname,
                                               param.name, param.type.to_string()));
      node->args.push_back(expr::literal(Value::null(), param.type.with_nullable(true)));
      continue;
    }
    if (a->kind != ast::TvfArg::Kind::Expression)
      fail(a->pos, fmt::format("argument `{}` of {} is a scalar {}", param.name, fname, param.type.to_string()));
    ExprPtr e = bind_expr(*a->expr, ExprContext{&empty, nullptr, "a process table function argument", nullptr});
    if (!supports_implicit_cast(e->type, param.type.with_nullable(true)))
      fail(a->pos, fmt::format("argument `{}` of {} is {}, the function takes {}", param.name, fname, e->type.to_string(),
                               param.type.to_string()));
    node->args.push_back(at(a->pos, [&] { return expr::cast_if_needed(e, param.type.with_nullable(e->type.nullable())); }));
  }
  if (node->set_semantics == false && !sig.state.empty())
    fail(ref.pos, fmt::format("process table function {} has state but row semantics", fname));

  // Output: PARTITION BY columns (every input column with PASS_COLUMNS_THROUGH), the
  // function's columns, rowtime.
  std::vector<RowField> fields;
  if (sig.pass_columns_through)
    for (const auto& f : in.plan->schema.fields()) fields.push_back(f);
  else
    for (std::size_t k : node->partition_keys) fields.push_back({in.scope.columns[k].name, in.scope.columns[k].type});
  for (const auto& f : sig.output) fields.push_back({f.name, f.type.with_nullable(true)});
  if (node->on_time) fields.push_back({"rowtime", in.scope.columns[*node->on_time].type.with_nullable(false)});
  std::vector<std::string> names;
  for (const auto& f : fields) names.push_back(f.name);
  names = unique_names(names);
  for (std::size_t i = 0; i < fields.size(); ++i) fields[i].name = names[i];
  node->schema = Schema(std::move(fields));
  node->inputs = {in.plan};

  // One uid, one call: the same call may repeat (Flink shares it), another may not.
  std::string text = def->name + "(" + qualified_text(table->table);
  for (auto k : node->partition_keys) text += " " + in.scope.columns[k].name;
  if (node->on_time) text += " @" + in.scope.columns[*node->on_time].name;
  for (const auto& a : node->args) text += ", " + expr_text(a, Schema{std::vector<RowField>{}});
  auto [it, fresh] = ptf_uids.emplace(node->uid, text);
  if (!fresh && it->second != text)
    fail(ref.pos, fmt::format("Duplicate unique identifier '{}' detected among process table functions. Make sure that "
                              "all PTF calls have an identifier defined that is globally unique.",
                              node->uid));
  return {node, Scope::of(node->schema, "")};
}

}  // namespace clink::sql
