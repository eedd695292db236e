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

// A table argument as the uid check compares calls: the table's name, or a subquery's
// position (the same call, repeated by a view, has the same one).
std::string table_argument_text(const ast::TvfArg& a) {
  if (!a.expr) return qualified_text(a.table);
  return fmt::format("(query at {}:{})", a.pos.line, a.pos.column);
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

  // Match the arguments to the effective signature: tables..., params..., on_time, uid.
  const std::size_t n_tables = 1 + sig.more_table_args.size();
  const std::size_t n_params = sig.params.size();
  std::vector<std::string> slots = {lower(sig.table_arg)};
  for (const auto& t : sig.more_table_args) slots.push_back(lower(t));
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
  for (std::size_t s = n_tables; s < slots.size(); ++s)
    if (bound[s] && bound[s]->kind == ast::TvfArg::Kind::Table)
      fail(bound[s]->pos, n_tables == 1 ? fmt::format("process table function {} takes one table argument (`{}`)",
                                                      fname, slots[0])
                                        : fmt::format("argument `{}` of {} is not a table argument", slots[s], fname));

  auto node = std::make_shared<LogicalProcessTableFunction>();
  node->function = def->name;
  node->pos = ref.pos;
  node->set_semantics = sig.semantics == PtfTableSemantics::kSet;
  std::vector<Bound> ins;
  for (std::size_t t = 0; t < n_tables; ++t) {
    const ast::TvfArg* table = bound[t];
    if (!table) fail(ref.pos, fmt::format("process table function {} needs its table argument `{}`", fname, slots[t]));
    if (table->kind != ast::TvfArg::Kind::Table)
      fail(table->pos, fmt::format("argument `{}` of {} is a table: pass it as TABLE name or a query in parentheses",
                                   slots[t], fname));
    ins.push_back(bind_table_argument(*table));
    node->tables.push_back(bind_table_clauses(*table, ins.back(), *node, slots[t], fname));
  }
  check_copartitioned(*node, ins, bound);
  bind_on_time(*node, ins, bound[n_tables + n_params], std::vector<std::string>(slots.begin(), slots.begin() + n_tables),
               sig.require_on_time, ref.pos, fname);

  // uid => 'name'
  node->uid = fname;
  if (const ast::TvfArg* uid = bound[n_tables + n_params + 1]) {
    const auto* lit = uid->expr ? std::get_if<ast::Literal>(&uid->expr->node) : nullptr;
    if (uid->kind != ast::TvfArg::Kind::Expression || !lit || lit->kind != ast::Literal::Kind::String)
      fail(uid->pos, "uid takes a string literal: uid => 'my-ptf'");
    node->uid = lit->text;
  }

  // Scalar arguments: constants, implicitly cast to the parameter types.
  Scope empty;
  for (std::size_t p = 0; p < n_params; ++p) {
    const PtfScalarParam& param = sig.params[p];
    const ast::TvfArg* a = bound[n_tables + p];
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

  // Output: each table's PARTITION BY columns (every input column with
  // PASS_COLUMNS_THROUGH), the function's columns, rowtime.
  std::vector<RowField> fields;
  for (std::size_t t = 0; t < n_tables; ++t) {
    if (sig.pass_columns_through)
      for (const auto& f : ins[t].plan->schema.fields()) fields.push_back(f);
    else
      for (std::size_t k : node->tables[t].partition_keys)
        fields.push_back({ins[t].scope.columns[k].name, ins[t].scope.columns[k].type});
  }
  for (const auto& f : sig.output) fields.push_back({f.name, f.type.with_nullable(true)});
  if (node->has_rowtime())
    fields.push_back({"rowtime", ins[0].scope.columns[*node->tables[0].on_time].type.with_nullable(false)});
  std::vector<std::string> names;
  for (const auto& f : fields) names.push_back(f.name);
  names = unique_names(names);
  for (std::size_t i = 0; i < fields.size(); ++i) fields[i].name = names[i];
  node->schema = Schema(std::move(fields));
  for (const auto& in : ins) node->inputs.push_back(in.plan);

  // One uid, one call: the same call may repeat (Flink shares it), another may not.
  std::string text = def->name + "(";
  for (std::size_t t = 0; t < n_tables; ++t) {
    text += (t ? "; " : "") + table_argument_text(*bound[t]);
    for (auto k : node->tables[t].partition_keys) text += " " + ins[t].scope.columns[k].name;
    if (node->tables[t].on_time) text += " @" + ins[t].scope.columns[*node->tables[t].on_time].name;
  }
  for (const auto& a : node->args) text += ", " + expr_text(a, Schema{std::vector<RowField>{}});
  auto [it, fresh] = ptf_uids.emplace(node->uid, text);
  if (!fresh && it->second != text)
    fail(ref.pos, fmt::format("Duplicate unique identifier '{}' detected among process table functions. Make sure that "
                              "all PTF calls have an identifier defined that is globally unique.",
                              node->uid));
  return {node, Scope::of(node->schema, "")};
}

// A table argument's PARTITION BY and ORDER BY, as Flink checks them.
PtfTableArgument Binder::Impl::bind_table_clauses(const ast::TvfArg& table, const Bound& in,
                                                  const LogicalProcessTableFunction& node, const std::string& name,
                                                  const std::string& fname) {
  const ProcessTableFunctionDef* def = ProcessTableFunctionRegistry::process().find(node.function);
  PtfTableArgument out;
  if (!node.set_semantics && !table.partition_by.empty())
    fail(table.pos, fmt::format("Only tables with set semantics may be partitioned: the table argument `{}` of {} has "
                                "row semantics (remove PARTITION BY)",
                                name, fname));
  if (node.set_semantics && table.partition_by.empty() && !def->signature.optional_partition_by)
    fail(table.pos, fmt::format("Table argument '{}' requires a PARTITION BY clause for parallel processing.", name));
  for (const auto& k : table.partition_by) {
    ast::ColumnRef r;
    r.names = k;
    out.partition_keys.push_back(resolve_column(r, in.scope, table.pos));
  }
  // ORDER BY: set semantics only, first an ascending event-time attribute (Flink's rule).
  if (table.order_by.empty()) return out;
  if (!node.set_semantics)
    fail(table.order_by_pos, fmt::format("ORDER BY needs a table with set semantics; {} has row semantics", fname));
  for (std::size_t i = 0; i < table.order_by.size(); ++i) {
    ast::ColumnRef r;
    r.names = table.order_by[i];
    SortKey k;
    k.column = resolve_column(r, in.scope, table.order_by_pos);
    k.descending = table.order_descending[i];
    k.nulls_first = !k.descending;
    out.order_keys.push_back(k);
  }
  const SortKey& first = out.order_keys[0];
  if (first.descending || !is_time_attribute(*in.plan, first.column))
    fail(table.order_by_pos, "the first ORDER BY column of a process table function's table must be an event-time "
                             "attribute in ascending order");
  return out;
}

// Several tables: their PARTITION BY columns agree in number and types (Flink's rule),
// so the tables are co-partitioned and share one key space.
void Binder::Impl::check_copartitioned(const LogicalProcessTableFunction& node, const std::vector<Bound>& ins,
                                       const std::vector<const ast::TvfArg*>& args) {
  if (node.tables.size() < 2) return;
  auto types = [&](std::size_t t) {
    std::vector<LogicalType> out;
    for (std::size_t k : node.tables[t].partition_keys) out.push_back(ins[t].scope.columns[k].type.with_nullable(true));
    return out;
  };
  for (std::size_t t = 1; t < node.tables.size(); ++t) {
    if (types(t) == types(0)) continue;
    std::vector<std::string> sets;
    for (std::size_t u = 0; u < node.tables.size(); ++u) {
      std::vector<std::string> names;
      for (std::size_t k : node.tables[u].partition_keys) names.push_back(ins[u].scope.columns[k].type.to_string());
      sets.push_back(fmt::format("[{}]", fmt::join(names, ", ")));
    }
    fail(args[t]->pos, fmt::format("Invalid PARTITION BY columns. The number of columns and their data types must match "
                                   "across all involved table arguments. Given partition key sets: {}",
                                   fmt::join(sets, ", ")));
  }
}

// on_time => DESCRIPTOR(c, ...): per table argument, the one descriptor column it has
// (Flink's resolution by name); with several tables, every table has one or none does.
void Binder::Impl::bind_on_time(LogicalProcessTableFunction& node, const std::vector<Bound>& ins,
                                const ast::TvfArg* on_time, const std::vector<std::string>& table_names,
                                bool required, SourcePosition call_pos, const std::string& fname) {
  if (!on_time) {
    if (required)
      fail(call_pos, fmt::format("process table function {} needs an on_time argument: on_time => "
                                 "DESCRIPTOR(time_column)",
                                 fname));
    return;
  }
  if (on_time->kind != ast::TvfArg::Kind::Descriptor || on_time->columns.empty())
    fail(on_time->pos, "on_time takes time columns: on_time => DESCRIPTOR(time_column)");
  std::vector<bool> used(on_time->columns.size(), false);
  std::vector<std::string> missing;
  for (std::size_t t = 0; t < ins.size(); ++t) {
    std::vector<std::size_t> found;
    for (std::size_t d = 0; d < on_time->columns.size(); ++d)
      for (std::size_t c = 0; c < ins[t].scope.columns.size(); ++c)
        if (ins[t].scope.columns[c].name == on_time->columns[d]) {
          if (std::find(found.begin(), found.end(), c) == found.end()) found.push_back(c);
          used[d] = true;
          break;
        }
    if (found.size() > 1)
      fail(on_time->pos, fmt::format("Ambiguous time attribute found. The `on_time` argument must reference at most one "
                                     "column in a table argument. Currently, the columns in `on_time` point to both "
                                     "'{}' and '{}' in table argument '{}'.",
                                     ins[t].scope.columns[found[0]].name, ins[t].scope.columns[found[1]].name,
                                     table_names[t]));
    if (found.empty()) {
      missing.push_back(table_names[t]);
      continue;
    }
    const std::size_t c = found[0];
    if (!is_time_attribute(*ins[t].plan, c))
      fail(on_time->pos, fmt::format("the on_time column `{}` is not an event-time attribute (declare WATERMARK FOR {} "
                                     "on the table)",
                                     ins[t].scope.columns[c].name, ins[t].scope.columns[c].name));
    node.tables[t].on_time = c;
  }
  std::vector<std::string> unknown;
  for (std::size_t d = 0; d < used.size(); ++d)
    if (!used[d]) unknown.push_back(on_time->columns[d]);
  if (!unknown.empty())
    fail(on_time->pos, fmt::format("Invalid time attribute declaration. Each column in the `on_time` argument must "
                                   "reference at least one column in one of the table arguments. Unknown references: "
                                   "[{}]",
                                   fmt::join(unknown, ", ")));
  if (!missing.empty())
    fail(on_time->pos, fmt::format("Invalid time attribute declaration. If multiple tables are declared, the `on_time` "
                                   "argument must reference a time column for each table argument or none. Missing "
                                   "time attributes for: [{}]",
                                   fmt::join(missing, ", ")));
}

}  // namespace clink::sql
