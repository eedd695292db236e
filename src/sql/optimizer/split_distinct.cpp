// Split distinct aggregation, Flink's SplitAggregateRule
// (`table.optimizer.distinct-agg.split.enabled`): an unbounded GROUP BY with COUNT(DISTINCT
// x), SUM(DISTINCT x) ... becomes two aggregates. The partial one groups by the keys plus
// MOD(HASH_CODE(x), buckets) of each distinct argument (and of MIN / MAX arguments, which
// would also concentrate in one instance under retraction), so one hot key spreads over
// `buckets` groups; the final one groups by the keys and merges the partial results (a
// COUNT's counts are summed, SUM / MIN / MAX apply again). The final table is the same; the
// changelog is not (the final aggregate sees each partial update as a retraction and an
// insertion).
//
// When the calls need different group sets (COUNT(DISTINCT a) and COUNT(DISTINCT b), or a
// distinct call and a plain COUNT(*)), each input row is expanded once per group set, as
// Flink's Expand: UNNEST(ARRAY[1..n]) numbers the copies, the copy for set k keeps only the
// hash columns of set k (the others NULL, so the partial groups do not multiply), and each
// call is filtered to the copies of its own set (AND its own FILTER).
//
// Not split, as in Flink: grouping sets, aggregate functions other than COUNT / SUM / MIN /
// MAX (Flink also splits AVG, FIRST_VALUE, LAST_VALUE, LISTAGG and SINGLE_VALUE; clink keeps
// those aggregates whole) and window aggregates (clink's window operator keeps them whole).
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "clink/sql/function/aggregate.hpp"
#include "clink/sql/optimizer/optimizer.hpp"

namespace clink::sql {

namespace {

bool splittable(const AggregateCall& c) {
  const std::string& f = c.function;
  return f == "COUNT" || f == "SUM" || f == "MIN" || f == "MAX";
}

// Flink's needAddHashFields: distinct calls, and MIN / MAX (their retracting form keeps
// every value of the group: one instance would hold them all).
bool needs_hash(const AggregateCall& c) { return c.distinct || c.function == "MIN" || c.function == "MAX"; }

bool applies(const LogicalAggregate& a) {
  if (a.grouping_sets.size() > 1 || a.distinct_only || a.aggregates.empty()) return false;
  if (a.schema.size() != a.keys.size() + a.aggregates.size()) return false;  // a grouping-set column
  bool any_distinct = false;
  for (const auto& c : a.aggregates) {
    if (!splittable(c)) return false;
    any_distinct = any_distinct || c.distinct;
  }
  return any_distinct;
}

const FunctionRegistry& registry() { return FunctionRegistry::builtins(); }

ExprPtr int_literal(std::int64_t v) { return expr::literal(Value(v), LogicalType::int_type().not_null()); }

// A call of the partial or final level with its type and abilities from the registry.
AggregateCall make_call(std::string function, std::vector<std::size_t> args, bool distinct, std::optional<std::size_t> filter,
                        const Schema& input, std::string name) {
  AggregateCall c;
  c.function = std::move(function);
  c.args = std::move(args);
  c.distinct = distinct;
  c.filter = filter;
  c.name = std::move(name);
  std::vector<LogicalType> types;
  for (auto i : c.args) types.push_back(input.type(i));
  auto agg = registry().make_aggregate(c.function, types, AggregateOptions{distinct, true});
  if (!agg) throw std::runtime_error(fmt::format("split distinct aggregation: no {} for these arguments", c.function));
  c.type = c.function == "COUNT" ? LogicalType::bigint().not_null() : agg->result_type();
  if (c.function == "MIN" || c.function == "MAX") c.type = input.type(c.args[0]).with_nullable(true);
  c.retractable = agg->supports_retraction();
  c.mergeable = agg->supports_merge();
  return c;
}

LogicalPtr split(const LogicalAggregate& a, const LogicalPtr& input, int buckets) {
  const Schema& in = input->schema;
  const std::set<std::size_t> key_set(a.keys.begin(), a.keys.end());

  // 1. The hash columns: MOD(HASH_CODE(x), buckets) of every argument of a call that
  // needs one, unless it is a key already; appended after the input's columns.
  std::set<std::size_t> hashed;
  for (const auto& c : a.aggregates)
    if (needs_hash(c))
      for (auto x : c.args)
        if (!key_set.count(x)) hashed.insert(x);
  std::map<std::size_t, std::size_t> hash_column;  // input column -> its hash column
  std::vector<ExprPtr> exprs;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < in.size(); ++i) {
    exprs.push_back(expr::column(i, in.type(i), in.name(i)));
    names.push_back(in.name(i));
  }
  for (auto x : hashed) {
    hash_column[x] = exprs.size();
    ExprPtr h = expr::call(registry(), "HASH_CODE", {exprs[x]});
    exprs.push_back(expr::call(registry(), "MOD", {h, int_literal(buckets)}));
    names.push_back(fmt::format("$f{}", exprs.size() - 1));
  }
  LogicalPtr hashed_input = hashed.empty() ? input : make_project(input, exprs, names, a.pos);

  // 2. Each call's group set (the keys plus its hash columns) and the distinct sets in
  // Flink's order; `new_sets` counts the sets hash columns made, as Flink's newGroupSetsNum.
  std::vector<std::set<std::size_t>> call_set;
  std::set<std::set<std::size_t>> sets;
  int new_sets = 0;
  for (const auto& c : a.aggregates) {
    std::set<std::size_t> s = key_set;
    if (needs_hash(c)) {
      for (auto x : c.args) s.insert(hash_column.count(x) ? hash_column[x] : x);
      if (!sets.count(s)) ++new_sets;
    }
    sets.insert(s);
    call_set.push_back(s);
  }
  std::vector<std::size_t> extra_keys;  // the hash columns among the partial keys, ascending
  for (const auto& s : sets)
    for (auto col : s)
      if (!key_set.count(col) && std::find(extra_keys.begin(), extra_keys.end(), col) == extra_keys.end())
        extra_keys.push_back(col);
  std::sort(extra_keys.begin(), extra_keys.end());

  // 3. With several group sets: expand each row once per set, the copy for set k keeping
  // only set k's hash columns, each call filtered to its set's copies (and its FILTER).
  LogicalPtr partial_input = hashed_input;
  std::vector<std::optional<std::size_t>> filters;
  for (const auto& c : a.aggregates) filters.push_back(c.filter);
  if (new_sets > 1) {
    const Schema& hs = hashed_input->schema;
    std::vector<ExprPtr> ids;
    for (std::size_t k = 1; k <= sets.size(); ++k) ids.push_back(int_literal(static_cast<std::int64_t>(k)));
    auto expand = std::make_shared<LogicalCorrelate>();
    expand->function = LogicalCorrelate::Function::kUnnest;
    expand->args = {expr::call(registry(), "ARRAY", ids)};
    std::vector<RowField> fields = hs.fields();
    for (const auto& f : unnest_fields(expand->args[0]->type, false, false)) fields.push_back({"$e", f.type});
    expand->schema = Schema(fields);
    expand->inputs = {hashed_input};
    expand->pos = a.pos;
    const ExprPtr e = expr::column(hs.size(), fields.back().type, "$e");
    auto id_of = [&](const std::set<std::size_t>& s) {
      return static_cast<std::int64_t>(std::distance(sets.begin(), sets.find(s)) + 1);
    };
    std::vector<ExprPtr> cols;
    std::vector<std::string> col_names;
    for (std::size_t i = 0; i < hs.size(); ++i) {
      ExprPtr c = expr::column(i, hs.type(i), hs.name(i));
      if (std::find(extra_keys.begin(), extra_keys.end(), i) != extra_keys.end()) {
        std::vector<ExprPtr> in_sets;  // the copies of the sets holding this hash column
        for (const auto& s : sets)
          if (s.count(i)) in_sets.push_back(expr::call(registry(), "=", {e, int_literal(id_of(s))}));
        c = expr::case_when({{in_sets.size() == 1 ? in_sets[0] : expr::or_(in_sets), c}}, nullptr);
      }
      cols.push_back(c);
      col_names.push_back(hs.name(i));
    }
    std::map<std::pair<std::int64_t, std::optional<std::size_t>>, std::size_t> filter_column;
    for (std::size_t i = 0; i < a.aggregates.size(); ++i) {
      const std::int64_t id = id_of(call_set[i]);
      auto key = std::make_pair(id, a.aggregates[i].filter);
      auto it = filter_column.find(key);
      if (it == filter_column.end()) {
        ExprPtr f = expr::call(registry(), "=", {e, int_literal(id)});
        const auto old = a.aggregates[i].filter;
        if (old) f = expr::and_({f, expr::column(*old, hs.type(*old), hs.name(*old))});
        it = filter_column.emplace(key, cols.size()).first;
        cols.push_back(f);
        col_names.push_back(old ? fmt::format("$g_{}_{}", id, hs.name(*old)) : fmt::format("$g_{}", id));
      }
      filters[i] = it->second;
    }
    partial_input = make_project(expand, cols, col_names, a.pos);
  }

  // 4. The partial aggregate: the keys (their order kept) and the hash columns.
  auto partial = std::make_shared<LogicalAggregate>();
  partial->keys = a.keys;
  partial->keys.insert(partial->keys.end(), extra_keys.begin(), extra_keys.end());
  partial->grouping_sets = {{}};
  for (std::size_t i = 0; i < partial->keys.size(); ++i) partial->grouping_sets[0].push_back(i);
  const Schema& ps = partial_input->schema;
  for (std::size_t i = 0; i < a.aggregates.size(); ++i) {
    const auto& c = a.aggregates[i];
    partial->aggregates.push_back(make_call(c.function, c.args, c.distinct, filters[i], ps, fmt::format("$p{}", i)));
  }
  partial->schema = aggregate_schema(ps, partial->keys, false, partial->aggregates);
  partial->inputs = {partial_input};
  partial->pos = a.pos;

  // 5. The final aggregate by the original keys: counts summed, SUM / MIN / MAX again.
  auto final_agg = std::make_shared<LogicalAggregate>();
  const std::size_t nk = a.keys.size();
  for (std::size_t i = 0; i < nk; ++i) final_agg->keys.push_back(i);
  final_agg->grouping_sets = {final_agg->keys};
  const std::size_t np = partial->keys.size();
  for (std::size_t i = 0; i < a.aggregates.size(); ++i) {
    const auto& c = a.aggregates[i];
    const std::string f = c.function == "COUNT" ? "SUM" : c.function;
    final_agg->aggregates.push_back(make_call(f, {np + i}, false, std::nullopt, partial->schema, c.name));
  }
  std::vector<RowField> final_fields;
  for (std::size_t i = 0; i < nk; ++i) final_fields.push_back(a.schema.field(i));
  for (const auto& c : final_agg->aggregates) final_fields.push_back({c.name, c.type});
  final_agg->schema = Schema(final_fields);
  final_agg->inputs = {partial};
  final_agg->pos = a.pos;

  // 6. The original types: a COUNT's sum is never NULL while its group exists (Flink's
  // $SUM0), a SUM of sums has the type of the SUM.
  bool same = true;
  for (std::size_t i = 0; i < a.schema.size(); ++i) same = same && final_fields[i].type == a.schema.type(i);
  if (same) return final_agg;
  std::vector<ExprPtr> out;
  std::vector<std::string> out_names;
  for (std::size_t i = 0; i < a.schema.size(); ++i) {
    ExprPtr c = expr::column(i, final_fields[i].type, final_fields[i].name);
    if (i >= nk && a.aggregates[i - nk].function == "COUNT")
      c = expr::coalesce({c, expr::literal(Value(std::int64_t{0}), LogicalType::bigint().not_null())});
    out.push_back(expr::cast_if_needed(c, a.schema.type(i)));
    out_names.push_back(a.schema.name(i));
  }
  return make_project(final_agg, out, out_names, a.pos);
}

LogicalPtr rewrite(const LogicalPtr& plan, int buckets) {
  std::vector<LogicalPtr> inputs;
  bool changed = false;
  for (const auto& i : plan->inputs) {
    inputs.push_back(rewrite(i, buckets));
    changed = changed || inputs.back() != i;
  }
  if (plan->kind == LogicalKind::kAggregate) {
    const auto& a = static_cast<const LogicalAggregate&>(*plan);
    if (applies(a)) return split(a, inputs[0], buckets);
  }
  return changed ? with_inputs(*plan, std::move(inputs)) : plan;
}

}  // namespace

LogicalPtr split_distinct_aggregates(const LogicalPtr& plan, int buckets) {
  if (buckets <= 0) return plan;
  return rewrite(plan, buckets);
}

}  // namespace clink::sql
