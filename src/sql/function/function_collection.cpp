// Collection functions with Flink's semantics: the ARRAY[...], MAP[...] and ROW(...)
// constructors (the binder lowers the syntax to calls of ARRAY, MAP and ROW),
// CARDINALITY, and ITEM, the subscript `arr[i]` (1-based, NULL out of range) and
// `m[key]` (NULL when the key is absent). Kernels build whole nested columns per batch:
// children are gathered from the argument columns, offsets written in one pass.
#include <cstring>

#include <fmt/format.h>

#include "kernel_util.hpp"

namespace clink::sql {

namespace {

// Ends a nested output of `rows` rows, none of them NULL (constructors never are).
void finish_all_valid(Column& out, std::size_t rows) {
  out.set_size(rows);
  out.grow_validity(rows);
  out.set_all_valid();
}

// Appends row-major elements: for each row, argument columns first..first+step*count.
// One gather per (row, argument); nested element types copy through append_gather too.
void gather_interleaved(std::span<const KernelArg> a, std::size_t first, std::size_t step, std::size_t rows,
                        Column& child) {
  child.reserve(child.size() + rows * ((a.size() - first + step - 1) / step));
  for (std::size_t i = 0; i < rows; ++i) {
    auto row = static_cast<std::uint32_t>(i);
    for (std::size_t k = first; k < a.size(); k += step) child.append_gather(*a[k].column, &row, 1);
  }
}

void write_list_offsets(Column& out, std::size_t rows, std::size_t per_row) {
  Buffer& offsets = out.values_buffer();
  offsets.reserve((rows + 1) * sizeof(std::uint32_t));
  for (std::size_t i = 1; i <= rows; ++i) {
    auto end = static_cast<std::uint32_t>(i * per_row);
    offsets.append(&end, sizeof end);
  }
}

// The common type of args[first], args[first + step], ...; nullopt when there is none.
std::optional<LogicalType> common_of(std::span<const LogicalType> args, std::size_t first, std::size_t step) {
  std::vector<LogicalType> types;
  for (std::size_t k = first; k < args.size(); k += step) types.push_back(args[k]);
  return find_common_type(types);
}

// Whether row `i` of `keys` equals row `j` of `probe` (same type, both non-NULL).
bool same_key(const Column& keys, std::size_t i, const Column& probe, std::size_t j) {
  switch (keys.layout()) {
    case PhysicalLayout::kFixed: {
      auto w = static_cast<std::size_t>(fixed_width(keys.type().kind()));
      return std::memcmp(keys.values_buffer().data() + i * w, probe.values_buffer().data() + j * w, w) == 0;
    }
    case PhysicalLayout::kVarLen: return keys.string_at(i) == probe.string_at(j);
    default: return keys.value_at(i) == probe.value_at(j);  // nested keys: the general (slow) path
  }
}

// Key equality across two argument columns at row i; two NULL keys are equal (Flink).
bool same_arg_key(const KernelArg& x, const KernelArg& y, std::size_t i) {
  bool xv = x.valid(i), yv = y.valid(i);
  if (!xv || !yv) return xv == yv;
  return same_key(*x.column, x.row(i), *y.column, y.row(i));
}

// MAP[k0, v0, k1, v1, ...] with Flink's duplicate-key rule: a key keeps the position of
// its first occurrence and the value of its last (MAP[1, 2, 1, 3] is {1=3}).
void append_deduplicated_entries(std::span<const KernelArg> a, std::size_t rows, Column& out) {
  std::size_t pairs = a.size() / 2;
  Column& keys = out.child(0);
  Column& values = out.child(1);
  keys.reserve(rows * pairs);
  values.reserve(rows * pairs);
  Buffer& offsets = out.values_buffer();
  std::uint32_t end = 0;
  for (std::size_t i = 0; i < rows; ++i) {
    auto row = static_cast<std::uint32_t>(i);
    for (std::size_t p = 0; p < pairs; ++p) {
      bool seen = false;
      for (std::size_t q = 0; q < p && !seen; ++q) seen = same_arg_key(a[2 * q], a[2 * p], i);
      if (seen) continue;
      std::size_t last = p;
      for (std::size_t q = p + 1; q < pairs; ++q)
        if (same_arg_key(a[2 * q], a[2 * p], i)) last = q;
      keys.append_gather(*a[2 * p].column, &row, 1);
      values.append_gather(*a[2 * last + 1].column, &row, 1);
      ++end;
    }
    offsets.append(&end, sizeof end);
  }
}

std::optional<ResolvedFunction> resolve_array(std::span<const LogicalType> args) {
  if (args.empty()) return std::nullopt;
  auto element = common_of(args, 0, 1);
  if (!element) return std::nullopt;
  ResolvedFunction f;
  f.name = "ARRAY";
  f.arg_types.assign(args.size(), *element);
  f.return_type = LogicalType::array(*element).not_null();
  f.null_policy = NullPolicy::kCustom;
  f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    gather_interleaved(a, 0, 1, ctx.rows, out.child(0));
    write_list_offsets(out, ctx.rows, a.size());
    finish_all_valid(out, ctx.rows);
  };
  return f;
}

std::optional<ResolvedFunction> resolve_map(std::span<const LogicalType> args) {
  if (args.empty() || args.size() % 2 != 0) return std::nullopt;
  auto key = common_of(args, 0, 2), value = common_of(args, 1, 2);
  if (!key || !value) return std::nullopt;
  ResolvedFunction f;
  f.name = "MAP";
  for (std::size_t k = 0; k < args.size(); ++k) f.arg_types.push_back(k % 2 == 0 ? *key : *value);
  f.return_type = LogicalType::map(*key, *value).not_null();
  f.null_policy = NullPolicy::kCustom;
  f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    if (a.size() == 2) {  // one entry: no duplicates possible
      gather_interleaved(a, 0, 2, ctx.rows, out.child(0));
      gather_interleaved(a, 1, 2, ctx.rows, out.child(1));
      write_list_offsets(out, ctx.rows, 1);
      finish_all_valid(out, ctx.rows);
      return;
    }
    append_deduplicated_entries(a, ctx.rows, out);
    finish_all_valid(out, ctx.rows);
  };
  return f;
}

std::optional<ResolvedFunction> resolve_row(std::span<const LogicalType> args) {
  if (args.empty()) return std::nullopt;
  ResolvedFunction f;
  f.name = "ROW";
  std::vector<RowField> fields;
  for (std::size_t k = 0; k < args.size(); ++k) {
    fields.push_back(RowField{fmt::format("EXPR${}", k), args[k]});  // Flink's names for unnamed fields
    f.arg_types.push_back(args[k]);
  }
  f.return_type = LogicalType::row(std::move(fields)).not_null();
  f.null_policy = NullPolicy::kCustom;
  f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    for (std::size_t k = 0; k < a.size(); ++k) out.child(k).append_range(*a[k].column, 0, ctx.rows);
    finish_all_valid(out, ctx.rows);
  };
  return f;
}

std::optional<ResolvedFunction> resolve_cardinality(std::span<const LogicalType> args) {
  if (args.size() != 1 || !(args[0].is(TypeKind::kArray) || args[0].is(TypeKind::kMap))) return std::nullopt;
  ResolvedFunction f;
  f.name = "CARDINALITY";
  f.arg_types = {args[0]};
  f.return_type = LogicalType::int_type().with_nullable(args[0].nullable());
  f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    const std::uint32_t* off = a[0].column->offsets();
    auto* o = out.values<std::int32_t>();
    for (std::size_t i = 0; i < ctx.rows; ++i) o[i] = static_cast<std::int32_t>(off[i + 1] - off[i]);
  };
  return f;
}

// ITEM(array, index): 1-based; NULL for a NULL array or index and out of range (Flink).
std::optional<ResolvedFunction> resolve_array_item(std::span<const LogicalType> args) {
  if (args.size() != 2 || !args[0].is(TypeKind::kArray) || !supports_implicit_cast(args[1], LogicalType::bigint()))
    return std::nullopt;
  ResolvedFunction f;
  f.name = "ITEM";
  // Any integer index (TINYINT..BIGINT): read as BIGINT so a large index is out of range, not wrapped.
  f.arg_types = {args[0], LogicalType::bigint().with_nullable(args[1].nullable())};
  f.return_type = args[0].element_type().with_nullable(true);
  f.null_policy = NullPolicy::kCustom;
  f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    const Column& arr = *a[0].column;
    const Column& elements = arr.child(0);
    const auto* index = a[1].column->values<std::int64_t>();
    for (std::size_t i = 0; i < ctx.rows; ++i) {
      const Column* src = nullptr;
      std::size_t at = 0;
      if (a[0].valid(i) && a[1].valid(i)) {
        auto [begin, end] = arr.list_range(a[0].row(i));
        std::int64_t k = index[a[1].row(i)];
        if (k >= 1 && k <= static_cast<std::int64_t>(end - begin)) {
          src = &elements;
          at = begin + static_cast<std::size_t>(k - 1);
        }
      }
      copy_row(src, at, out, i);
    }
  };
  return f;
}

// ITEM(map, key): the value of the first entry whose key equals `key`; NULL when absent.
std::optional<ResolvedFunction> resolve_map_item(std::span<const LogicalType> args) {
  if (args.size() != 2 || !args[0].is(TypeKind::kMap)) return std::nullopt;
  const LogicalType& key = args[0].key_type();
  if (!supports_implicit_cast(args[1], key.with_nullable(true))) return std::nullopt;
  ResolvedFunction f;
  f.name = "ITEM";
  f.arg_types = {args[0], key.with_nullable(args[1].nullable())};
  f.return_type = args[0].value_type().with_nullable(true);
  f.null_policy = NullPolicy::kCustom;
  f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    const Column& map = *a[0].column;
    const Column& keys = map.child(0);
    const Column& probe = *a[1].column;
    for (std::size_t i = 0; i < ctx.rows; ++i) {
      const Column* src = nullptr;
      std::size_t at = 0;
      if (a[0].valid(i) && a[1].valid(i)) {
        auto [begin, end] = map.list_range(a[0].row(i));
        for (std::size_t e = begin; e < end; ++e) {
          if (keys.is_valid(e) && same_key(keys, e, probe, a[1].row(i))) {
            src = &map.child(1);
            at = e;
            break;
          }
        }
      }
      copy_row(src, at, out, i);
    }
  };
  return f;
}

}  // namespace

void register_collection_functions(FunctionRegistry& r) {
  r.add_scalar("ARRAY", "ARRAY[T, ...] -> ARRAY<T>", resolve_array);
  r.add_scalar("MAP", "MAP[K, V, ...] -> MAP<K, V>", resolve_map);
  r.add_scalar("ROW", "ROW(T0, ...) -> ROW<EXPR$0 T0, ...>", resolve_row);
  r.add_scalar("CARDINALITY", "CARDINALITY(ARRAY | MAP) -> INT", resolve_cardinality);
  r.add_scalar("ITEM", "ITEM(ARRAY<T>, integer) -> T", resolve_array_item);
  r.add_scalar("ITEM", "ITEM(MAP<K, V>, K) -> V", resolve_map_item);
}

}  // namespace clink::sql
