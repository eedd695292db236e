// Flink's map functions: MAP_KEYS, MAP_VALUES, MAP_ENTRIES, MAP_FROM_ARRAYS and
// MAP_UNION, with the semantics of Flink's Map*Function classes (entries keep the map's
// own order; MAP_UNION puts the later map's entries first, as MapUnionFunction builds
// them). Kernels gather whole entry ranges per row; NULL in gives NULL.
#include <vector>

#include <fmt/format.h>

#include "collection_util.hpp"
#include "kernel_util.hpp"

namespace clink::sql {

namespace {

using collections::cell_equal;
using collections::commit_list;

bool all_valid(std::span<const KernelArg> a, std::size_t i) {
  for (const auto& arg : a)
    if (!arg.valid(i)) return false;
  return true;
}

// MAP_KEYS / MAP_VALUES: child `part` (0 keys, 1 values) of each map as an array.
std::optional<ResolvedFunction> resolve_part(const char* name, std::size_t part, std::span<const LogicalType> args) {
  if (args.size() != 1 || !args[0].is(TypeKind::kMap)) return std::nullopt;
  ResolvedFunction f;
  f.name = name;
  f.arg_types = {args[0]};
  f.return_type = LogicalType::array(part == 0 ? args[0].key_type() : args[0].value_type()).with_nullable(args[0].nullable());
  f.kernel = [part](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    const Column& map = *a[0].column;
    out.reserve(ctx.rows);
    for (std::size_t i = 0; i < ctx.rows; ++i) {
      if (!ctx.args_valid_at(i)) {
        out.append_null();
        continue;
      }
      auto [b, e] = map.list_range(a[0].row(i));
      out.child(0).append_range(map.child(part), b, e);
      commit_list(out);
    }
  };
  return f;
}

std::optional<ResolvedFunction> resolve_entries(std::span<const LogicalType> args) {
  if (args.size() != 1 || !args[0].is(TypeKind::kMap)) return std::nullopt;
  ResolvedFunction f;
  f.name = "MAP_ENTRIES";
  f.arg_types = {args[0]};
  LogicalType entry = LogicalType::row({RowField{"key", args[0].key_type()}, RowField{"value", args[0].value_type()}});
  f.return_type = LogicalType::array(entry).with_nullable(args[0].nullable());
  f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    const Column& map = *a[0].column;
    Column& rows = out.child(0);
    out.reserve(ctx.rows);
    for (std::size_t i = 0; i < ctx.rows; ++i) {
      if (!ctx.args_valid_at(i)) {
        out.append_null();
        continue;
      }
      auto [b, e] = map.list_range(a[0].row(i));
      rows.child(0).append_range(map.child(0), b, e);
      rows.child(1).append_range(map.child(1), b, e);
      std::size_t from = rows.size(), to = from + (e - b);
      rows.grow_validity(to);
      for (std::size_t k = from; k < to; ++k) rows.set_valid(k, true);
      rows.set_size(to);
      commit_list(out);
    }
  };
  return f;
}

// MAP_FROM_ARRAYS(keys, values): entries pairwise (duplicate keys kept, as
// ArrayBasedMapData); arrays of different lengths fail the query.
std::optional<ResolvedFunction> resolve_from_arrays(std::span<const LogicalType> args) {
  if (args.size() != 2 || !args[0].is(TypeKind::kArray) || !args[1].is(TypeKind::kArray)) return std::nullopt;
  ResolvedFunction f;
  f.name = "MAP_FROM_ARRAYS";
  f.arg_types = {args[0], args[1]};
  f.return_type = LogicalType::map(args[0].element_type(), args[1].element_type())
                      .with_nullable(args[0].nullable() || args[1].nullable());
  f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    const Column& keys = *a[0].column;
    const Column& values = *a[1].column;
    out.reserve(ctx.rows);
    for (std::size_t i = 0; i < ctx.rows; ++i) {
      if (!ctx.args_valid_at(i)) {
        out.append_null();
        continue;
      }
      auto [kb, ke] = keys.list_range(a[0].row(i));
      auto [vb, ve] = values.list_range(a[1].row(i));
      if (ke - kb != ve - vb) {
        if (!ctx.is_active(i)) {
          out.append_null();
          continue;
        }
        throw SqlRuntimeError(fmt::format("MAP_FROM_ARRAYS: the key array has {} elements and the value array {}; they must be equally long",
                                          ke - kb, ve - vb));
      }
      out.child(0).append_range(keys.child(0), kb, ke);
      out.child(1).append_range(values.child(0), vb, ve);
      commit_list(out);
    }
  };
  return f;
}

// Whether key row k of `keys` appears among rows [b, e) of `others` (NULL matches NULL).
bool key_in(const Column& keys, std::size_t k, const Column& others, std::uint32_t b, std::uint32_t e) {
  bool null_key = !keys.is_valid(k);
  for (auto q = b; q < e; ++q) {
    if (!others.is_valid(q)) {
      if (null_key) return true;
      continue;
    }
    if (!null_key && cell_equal(keys, k, others, q)) return true;
  }
  return false;
}

// MAP_UNION(m1, m2, ...): folds left; each step keeps the newer map's entries and then
// the older entries whose key the newer map lacks.
std::optional<ResolvedFunction> resolve_union(std::span<const LogicalType> args) {
  if (args.empty()) return std::nullopt;
  for (const auto& t : args)
    if (!t.is(TypeKind::kMap)) return std::nullopt;
  std::vector<LogicalType> all(args.begin(), args.end());
  auto common = find_common_type(all);
  if (!common) return std::nullopt;
  ResolvedFunction f;
  f.name = "MAP_UNION";
  bool nullable = false;
  for (const auto& t : args) {
    f.arg_types.push_back(common->with_nullable(t.nullable()));
    nullable = nullable || t.nullable();
  }
  f.return_type = common->with_nullable(nullable);
  f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    // Entry sources of the row being built: (argument, child row), newest first.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> entries, next;
    std::vector<std::uint32_t> idx;
    out.reserve(ctx.rows);
    for (std::size_t i = 0; i < ctx.rows; ++i) {
      if (!all_valid(a, i)) {
        out.append_null();
        continue;
      }
      entries.clear();
      auto [b0, e0] = a[0].column->list_range(a[0].row(i));
      for (auto k = b0; k < e0; ++k) entries.emplace_back(0, k);
      for (std::uint32_t m = 1; m < a.size(); ++m) {
        const Column& map = *a[m].column;
        auto [b, e] = map.list_range(a[m].row(i));
        if (b == e) continue;
        next.clear();
        for (auto k = b; k < e; ++k) next.emplace_back(m, k);
        for (const auto& [src, k] : entries)
          if (!key_in(a[src].column->child(0), k, map.child(0), b, e)) next.emplace_back(src, k);
        entries.swap(next);
      }
      for (const auto& [src, k] : entries) {
        out.child(0).append_gather(a[src].column->child(0), &k, 1);
        out.child(1).append_gather(a[src].column->child(1), &k, 1);
      }
      commit_list(out);
    }
  };
  f.null_policy = NullPolicy::kCustom;
  return f;
}

}  // namespace

void register_map_functions(FunctionRegistry& r) {
  r.add_scalar("MAP_KEYS", "MAP_KEYS(MAP<K, V>) -> ARRAY<K>", [](std::span<const LogicalType> a) { return resolve_part("MAP_KEYS", 0, a); });
  r.add_scalar("MAP_VALUES", "MAP_VALUES(MAP<K, V>) -> ARRAY<V>", [](std::span<const LogicalType> a) { return resolve_part("MAP_VALUES", 1, a); });
  r.add_scalar("MAP_ENTRIES", "MAP_ENTRIES(MAP<K, V>) -> ARRAY<ROW<key K, value V>>", resolve_entries);
  r.add_scalar("MAP_FROM_ARRAYS", "MAP_FROM_ARRAYS(ARRAY<K>, ARRAY<V>) -> MAP<K, V>", resolve_from_arrays);
  r.add_scalar("MAP_UNION", "MAP_UNION(MAP<K, V>, ...) -> MAP<K, V>", resolve_union);
}

}  // namespace clink::sql
