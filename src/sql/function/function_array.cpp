// Flink's array functions: ELEMENT, ARRAY_APPEND, ARRAY_PREPEND, ARRAY_EXCEPT, ARRAY_INTERSECT, ARRAY_CONTAINS, ARRAY_POSITION, ARRAY_REMOVE,
// ARRAY_DISTINCT, ARRAY_REVERSE, ARRAY_SLICE, ARRAY_UNION, ARRAY_CONCAT, ARRAY_MAX,
// ARRAY_MIN, ARRAY_JOIN and ARRAY_SORT, with the semantics of Flink's Array*Function
// classes: elements compare with NULL equal to NULL (Objects.equals), results keep the
// order Flink's LinkedHashSet / TimSort gives. Kernels gather the selected elements of
// each row with one append_gather, into index scratch reused across rows.
#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "collection_util.hpp"
#include "kernel_util.hpp"

namespace clink::sql {

namespace {

using collections::cell_compare;
using collections::cell_equal_nulls;
using collections::commit_list;

// Appends the elements child[idx...] of the source array as one output row.
void append_selected(const Column& elements, const std::vector<std::uint32_t>& idx, Column& out) {
  if (!idx.empty()) out.child(0).append_gather(elements, idx.data(), idx.size());
  commit_list(out);
}

// Registers f(array type, other args) -> ResolvedFunction for a function taking an ARRAY first.
ResolvedFunction array_fn(const char* name, std::vector<LogicalType> arg_types, LogicalType result, ScalarKernel kernel) {
  ResolvedFunction f;
  f.name = name;
  f.arg_types = std::move(arg_types);
  f.return_type = std::move(result);
  f.null_policy = NullPolicy::kCustom;
  f.kernel = std::move(kernel);
  return f;
}

bool any_nullable(std::span<const LogicalType> args) {
  for (const auto& t : args)
    if (t.nullable()) return true;
  return false;
}

// ARRAY_CONTAINS / ARRAY_POSITION / ARRAY_REMOVE (array, needle): the needle is cast to the
// element type; a NULL needle matches NULL elements. The result is NULL only for a NULL array.
enum class NeedleFn { kContains, kPosition, kRemove };

std::optional<ResolvedFunction> resolve_needle(NeedleFn fn, std::span<const LogicalType> args) {
  if (args.size() != 2 || !args[0].is(TypeKind::kArray)) return std::nullopt;
  const LogicalType& element = args[0].element_type();
  // Character strings compare by their text whatever their lengths (Flink casts within the
  // family); other needles are cast to the element type.
  bool both_text = element.is_character_string() && args[1].is_character_string();
  if (!both_text && !supports_implicit_cast(args[1], element.with_nullable(true))) return std::nullopt;
  std::vector<LogicalType> types{args[0], both_text ? args[1] : element.with_nullable(args[1].nullable())};
  bool nullable = args[0].nullable();
  switch (fn) {
    case NeedleFn::kContains:
      return array_fn("ARRAY_CONTAINS", types, LogicalType::boolean().with_nullable(nullable),
                      [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
                        const Column& arr = *a[0].column;
                        auto* o = out.values<std::uint8_t>();
                        for (std::size_t i = 0; i < ctx.rows; ++i) {
                          bool valid = a[0].valid(i);
                          out.set_valid(i, valid);
                          o[i] = 0;
                          if (!valid) continue;
                          auto [b, e] = arr.list_range(a[0].row(i));
                          for (auto k = b; k < e && !o[i]; ++k) o[i] = cell_equal_nulls(arr.child(0), k, *a[1].column, a[1].row(i));
                        }
                      });
    case NeedleFn::kPosition:
      return array_fn("ARRAY_POSITION", types, LogicalType::int_type().with_nullable(nullable),
                      [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
                        const Column& arr = *a[0].column;
                        auto* o = out.values<std::int32_t>();
                        for (std::size_t i = 0; i < ctx.rows; ++i) {
                          bool valid = a[0].valid(i);
                          out.set_valid(i, valid);
                          o[i] = 0;
                          if (!valid) continue;
                          auto [b, e] = arr.list_range(a[0].row(i));
                          for (auto k = b; k < e; ++k) {
                            if (cell_equal_nulls(arr.child(0), k, *a[1].column, a[1].row(i))) {
                              o[i] = static_cast<std::int32_t>(k - b + 1);
                              break;
                            }
                          }
                        }
                      });
    case NeedleFn::kRemove:
      return array_fn("ARRAY_REMOVE", types, args[0], [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
        const Column& arr = *a[0].column;
        std::vector<std::uint32_t> idx;
        out.reserve(ctx.rows);
        for (std::size_t i = 0; i < ctx.rows; ++i) {
          if (!a[0].valid(i)) {
            out.append_null();
            continue;
          }
          idx.clear();
          auto [b, e] = arr.list_range(a[0].row(i));
          for (auto k = b; k < e; ++k)
            if (!cell_equal_nulls(arr.child(0), k, *a[1].column, a[1].row(i))) idx.push_back(k);
          append_selected(arr.child(0), idx, out);
        }
      });
  }
  return std::nullopt;
}

// Appends the first occurrence of each distinct element of rows' ranges (in order) to idx.
void add_distinct(const Column& elements, std::uint32_t b, std::uint32_t e, std::vector<std::uint32_t>& idx) {
  for (auto k = b; k < e; ++k) {
    bool seen = false;
    for (std::size_t q = 0; q < idx.size() && !seen; ++q) seen = cell_equal_nulls(elements, idx[q], elements, k);
    if (!seen) idx.push_back(k);
  }
}

// A function of one array producing an array of its elements, selected by `select`.
template <class Select>
ScalarKernel select_kernel(Select select) {
  return [select](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    const Column& arr = *a[0].column;
    std::vector<std::uint32_t> idx;
    out.reserve(ctx.rows);
    for (std::size_t i = 0; i < ctx.rows; ++i) {
      bool valid = true;
      for (const auto& arg : a) valid = valid && arg.valid(i);
      if (!valid) {
        out.append_null();
        continue;
      }
      idx.clear();
      auto [b, e] = arr.list_range(a[0].row(i));
      select(a, i, b, e, idx);
      append_selected(arr.child(0), idx, out);
    }
  };
}

// ARRAY_SLICE(arr, start [, end]) as ArraySliceFunction: 1-based inclusive bounds,
// negative ones count from the end, start clamps to 1, end 0 means 1.
void slice(std::span<const KernelArg> a, std::size_t i, std::uint32_t b, std::uint32_t e, std::vector<std::uint32_t>& idx) {
  auto size = static_cast<std::int64_t>(e - b);
  if (size == 0) return;
  std::int64_t start = kernels::iv(a, 1, i);
  std::int64_t end = a.size() > 2 ? kernels::iv(a, 2, i) : size;
  if (start < 0) start += size + 1;
  if (end < 0) end += size + 1;
  start = std::max<std::int64_t>(1, start);
  end = end == 0 ? 1 : std::min(end, size);
  for (std::int64_t k = start; k <= end; ++k) idx.push_back(b + static_cast<std::uint32_t>(k - 1));
}

// Sorts idx by element value: ascending or descending, NULLs first or last; stable (TimSort).
void sort_indices(const Column& elements, bool ascending, bool nulls_first, std::vector<std::uint32_t>& idx) {
  std::sort(idx.begin(), idx.end(), [&](std::uint32_t x, std::uint32_t y) {
    bool xv = elements.is_valid(x), yv = elements.is_valid(y);
    if (!xv || !yv) {
      if (xv == yv) return x < y;
      return nulls_first ? !xv : xv;
    }
    int c = cell_compare(elements, x, elements, y);
    if (!ascending) c = -c;
    return c != 0 ? c < 0 : x < y;
  });
}

std::optional<ResolvedFunction> resolve_sort(std::span<const LogicalType> args) {
  if (args.empty() || args.size() > 3 || !args[0].is(TypeKind::kArray) || !collections::is_orderable(args[0].element_type()))
    return std::nullopt;
  std::vector<LogicalType> types{args[0]};
  for (std::size_t k = 1; k < args.size(); ++k) {
    if (!args[k].is(TypeKind::kBoolean)) return std::nullopt;
    types.push_back(args[k]);
  }
  return array_fn("ARRAY_SORT", types, args[0].with_nullable(any_nullable(args)),
                  select_kernel([](std::span<const KernelArg> a, std::size_t i, std::uint32_t b, std::uint32_t e, std::vector<std::uint32_t>& idx) {
                    auto flag = [&](std::size_t k) { return a[k].column->template values<std::uint8_t>()[a[k].row(i)] != 0; };
                    bool ascending = a.size() > 1 ? flag(1) : true;
                    bool nulls_first = a.size() > 2 ? flag(2) : ascending;  // one flag: NULLs follow the order
                    for (auto k = b; k < e; ++k) idx.push_back(k);
                    sort_indices(a[0].column->child(0), ascending, nulls_first, idx);
                  }));
}

// ARRAY_MAX / ARRAY_MIN: the greatest / least non-NULL element; NULL for an empty or
// all-NULL array. Ties keep the first (Flink replaces only on strictly greater / less).
std::optional<ResolvedFunction> resolve_extreme(bool max, std::span<const LogicalType> args) {
  if (args.size() != 1 || !args[0].is(TypeKind::kArray) || !collections::is_orderable(args[0].element_type()))
    return std::nullopt;
  return array_fn(max ? "ARRAY_MAX" : "ARRAY_MIN", {args[0]}, args[0].element_type().with_nullable(true),
                  [max](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
                    const Column& arr = *a[0].column;
                    const Column& elements = arr.child(0);
                    for (std::size_t i = 0; i < ctx.rows; ++i) {
                      const Column* src = nullptr;
                      std::size_t best = 0;
                      if (a[0].valid(i)) {
                        auto [b, e] = arr.list_range(a[0].row(i));
                        for (auto k = b; k < e; ++k) {
                          if (!elements.is_valid(k)) continue;
                          int c = src ? cell_compare(elements, k, elements, best) : 0;
                          if (src == nullptr || (max ? c > 0 : c < 0)) {
                            src = &elements;
                            best = k;
                          }
                        }
                      }
                      copy_row(src, best, out, i);
                    }
                  });
}

// ARRAY_UNION(a, b) / ARRAY_CONCAT(a, ...): arrays of a common element type; NULL when any is.
std::optional<ResolvedFunction> resolve_combine(bool distinct, std::span<const LogicalType> args) {
  if (args.empty() || (distinct && args.size() != 2)) return std::nullopt;
  for (const auto& t : args)
    if (!t.is(TypeKind::kArray)) return std::nullopt;
  std::vector<LogicalType> all(args.begin(), args.end());
  auto common = find_common_type(all);
  if (!common) return std::nullopt;
  std::vector<LogicalType> types;
  for (const auto& t : args) types.push_back(common->with_nullable(t.nullable()));
  return array_fn(distinct ? "ARRAY_UNION" : "ARRAY_CONCAT", types, common->with_nullable(any_nullable(args)),
                  [distinct](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
                    Column& child = out.child(0);
                    std::vector<std::uint32_t> idx;
                    out.reserve(ctx.rows);
                    for (std::size_t i = 0; i < ctx.rows; ++i) {
                      bool valid = true;
                      for (const auto& arg : a) valid = valid && arg.valid(i);
                      if (!valid) {
                        out.append_null();
                        continue;
                      }
                      std::size_t row_begin = child.size();
                      for (const auto& arg : a) {
                        const Column& arr = *arg.column;
                        auto [b, e] = arr.list_range(arg.row(i));
                        idx.clear();
                        for (auto k = b; k < e; ++k) {
                          bool seen = false;
                          if (distinct) {
                            for (std::size_t q = row_begin; q < child.size() && !seen; ++q) seen = cell_equal_nulls(child, q, arr.child(0), k);
                            for (std::size_t q = 0; q < idx.size() && !seen; ++q) seen = cell_equal_nulls(arr.child(0), idx[q], arr.child(0), k);
                          }
                          if (!seen) idx.push_back(k);
                        }
                        if (!idx.empty()) child.append_gather(arr.child(0), idx.data(), idx.size());
                      }
                      commit_list(out);
                    }
                  });
}

// ARRAY_JOIN(ARRAY<STRING>, delimiter [, null_replacement]): NULL elements are skipped
// unless replaced; a NULL array, delimiter or replacement gives NULL.
std::optional<ResolvedFunction> resolve_join(std::span<const LogicalType> args) {
  if (args.size() < 2 || args.size() > 3 || !args[0].is(TypeKind::kArray) || !args[0].element_type().is_character_string())
    return std::nullopt;
  std::vector<LogicalType> types{args[0]};
  for (std::size_t k = 1; k < args.size(); ++k) {
    if (!supports_implicit_cast(args[k], LogicalType::string())) return std::nullopt;
    types.push_back(LogicalType::string().with_nullable(args[k].nullable()));
  }
  return array_fn("ARRAY_JOIN", types, LogicalType::string().with_nullable(any_nullable(args)),
                  [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
                    out.reserve(ctx.rows);
                    for (std::size_t i = 0; i < ctx.rows; ++i) {
                      bool valid = true;
                      for (const auto& arg : a) valid = valid && arg.valid(i);
                      if (!valid) {
                        out.append_null();
                        continue;
                      }
                      const Column& arr = *a[0].column;
                      const Column& elements = arr.child(0);
                      std::string_view sep = kernels::sv(a, 1, i);
                      bool replace = a.size() > 2;
                      std::string_view replacement = replace ? kernels::sv(a, 2, i) : std::string_view{};
                      auto [b, e] = arr.list_range(a[0].row(i));
                      bool first = true;
                      for (auto k = b; k < e; ++k) {
                        if (!elements.is_valid(k) && !replace) continue;
                        if (!first) out.arena().append(sep.data(), sep.size());
                        first = false;
                        std::string_view s = elements.is_valid(k) ? elements.string_at(k) : replacement;
                        out.arena().append(s.data(), s.size());
                      }
                      out.commit_string();
                    }
                  });
}

std::optional<ResolvedFunction> resolve_unary_array(const char* name, std::span<const LogicalType> args) {
  if (args.size() != 1 || !args[0].is(TypeKind::kArray)) return std::nullopt;
  bool reverse = std::string_view(name) == "ARRAY_REVERSE";
  return array_fn(name, {args[0]}, args[0],
                  select_kernel([reverse](std::span<const KernelArg> a, std::size_t, std::uint32_t b, std::uint32_t e,
                                          std::vector<std::uint32_t>& idx) {
                    if (reverse) {
                      for (auto k = e; k > b; --k) idx.push_back(k - 1);
                    } else {
                      add_distinct(a[0].column->child(0), b, e, idx);
                    }
                  }));
}

// ARRAY_APPEND / ARRAY_PREPEND(arr, x): x (cast to the element type, NULL kept) added at
// the end / front; NULL for a NULL array (ArrayAppendFunction / ArrayPrependFunction).
std::optional<ResolvedFunction> resolve_add(bool append, std::span<const LogicalType> args) {
  if (args.size() != 2 || !args[0].is(TypeKind::kArray)) return std::nullopt;
  const LogicalType& element = args[0].element_type();
  if (!supports_implicit_cast(args[1], element.with_nullable(true))) return std::nullopt;
  LogicalType result_element = element.with_nullable(element.nullable() || args[1].nullable());
  return array_fn(append ? "ARRAY_APPEND" : "ARRAY_PREPEND", {args[0], element.with_nullable(args[1].nullable())},
                  LogicalType::array(result_element).with_nullable(args[0].nullable()),
                  [append](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
                    const Column& arr = *a[0].column;
                    Column& child = out.child(0);
                    out.reserve(ctx.rows);
                    for (std::size_t i = 0; i < ctx.rows; ++i) {
                      if (!a[0].valid(i)) {
                        out.append_null();
                        continue;
                      }
                      auto [b, e] = arr.list_range(a[0].row(i));
                      auto x = static_cast<std::uint32_t>(a[1].row(i));
                      if (!append) child.append_gather(*a[1].column, &x, 1);
                      child.append_range(arr.child(0), b, e);
                      if (append) child.append_gather(*a[1].column, &x, 1);
                      commit_list(out);
                    }
                  });
}

// Whether a[k] (NULL equal to NULL) is among rows [b, e) of `elements`.
bool contains(const Column& elements, std::uint32_t b, std::uint32_t e, const Column& a, std::size_t k) {
  for (auto q = b; q < e; ++q)
    if (cell_equal_nulls(elements, q, a, k)) return true;
  return false;
}

// ARRAY_EXCEPT(a, b): the distinct elements of a (NULL one of them, in its place) that b
// lacks; ARRAY_INTERSECT(a, b): those that b has; in a's order, NULL equal to NULL, NULL
// when either array is NULL (Flink 2.3's ArrayExceptFunction / ArrayIntersectFunction).
std::optional<ResolvedFunction> resolve_set_op(bool except, std::span<const LogicalType> args) {
  if (args.size() != 2 || !args[0].is(TypeKind::kArray) || !args[1].is(TypeKind::kArray)) return std::nullopt;
  auto common = find_common_type({args[0], args[1]});
  if (!common) return std::nullopt;
  bool nullable = args[0].nullable() || args[1].nullable();
  return array_fn(except ? "ARRAY_EXCEPT" : "ARRAY_INTERSECT",
                  {common->with_nullable(args[0].nullable()), common->with_nullable(args[1].nullable())},
                  common->with_nullable(nullable), [except](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
                    const Column& one = *a[0].column;
                    const Column& two = *a[1].column;
                    std::vector<std::uint32_t> idx;
                    out.reserve(ctx.rows);
                    for (std::size_t i = 0; i < ctx.rows; ++i) {
                      if (!a[0].valid(i) || !a[1].valid(i)) {
                        out.append_null();
                        continue;
                      }
                      auto [b1, e1] = one.list_range(a[0].row(i));
                      auto [b2, e2] = two.list_range(a[1].row(i));
                      idx.clear();
                      for (auto k = b1; k < e1; ++k) {
                        bool seen = false;
                        for (std::size_t q = 0; q < idx.size() && !seen; ++q) seen = cell_equal_nulls(one.child(0), idx[q], one.child(0), k);
                        if (seen || contains(two.child(0), b2, e2, one.child(0), k) == except) continue;
                        idx.push_back(k);
                      }
                      append_selected(one.child(0), idx, out);
                    }
                  });
}

}  // namespace

void register_array_functions(FunctionRegistry& r) {
  r.add_scalar("ARRAY_EXCEPT", "ARRAY_EXCEPT(ARRAY<T>, ARRAY<T>) -> ARRAY<T>", [](std::span<const LogicalType> a) { return resolve_set_op(true, a); });
  r.add_scalar("ARRAY_INTERSECT", "ARRAY_INTERSECT(ARRAY<T>, ARRAY<T>) -> ARRAY<T>",
               [](std::span<const LogicalType> a) { return resolve_set_op(false, a); });
  r.add_scalar("ARRAY_APPEND", "ARRAY_APPEND(ARRAY<T>, T) -> ARRAY<T>", [](std::span<const LogicalType> a) { return resolve_add(true, a); });
  r.add_scalar("ARRAY_PREPEND", "ARRAY_PREPEND(ARRAY<T>, T) -> ARRAY<T>", [](std::span<const LogicalType> a) { return resolve_add(false, a); });
  // ELEMENT(arr): the only element; NULL for an empty array; more than one fails.
  r.add_scalar("ELEMENT", "ELEMENT(ARRAY<T>) -> T", [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
    if (args.size() != 1 || !args[0].is(TypeKind::kArray)) return std::nullopt;
    return array_fn("ELEMENT", {args[0]}, args[0].element_type().with_nullable(true),
                    [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
                      const Column& arr = *a[0].column;
                      for (std::size_t i = 0; i < ctx.rows; ++i) {
                        const Column* src = nullptr;
                        std::size_t at = 0;
                        if (a[0].valid(i)) {
                          auto [b, e] = arr.list_range(a[0].row(i));
                          if (e - b > 1 && ctx.is_active(i)) throw SqlRuntimeError("ELEMENT: Array has more than one element.");
                          if (e - b == 1) src = &arr.child(0), at = b;
                        }
                        copy_row(src, at, out, i);
                      }
                    });
  });
  r.add_scalar("ARRAY_CONTAINS", "ARRAY_CONTAINS(ARRAY<T>, T) -> BOOLEAN",
               [](std::span<const LogicalType> a) { return resolve_needle(NeedleFn::kContains, a); });
  r.add_scalar("ARRAY_POSITION", "ARRAY_POSITION(ARRAY<T>, T) -> INT",
               [](std::span<const LogicalType> a) { return resolve_needle(NeedleFn::kPosition, a); });
  r.add_scalar("ARRAY_REMOVE", "ARRAY_REMOVE(ARRAY<T>, T) -> ARRAY<T>",
               [](std::span<const LogicalType> a) { return resolve_needle(NeedleFn::kRemove, a); });
  r.add_scalar("ARRAY_DISTINCT", "ARRAY_DISTINCT(ARRAY<T>) -> ARRAY<T>",
               [](std::span<const LogicalType> a) { return resolve_unary_array("ARRAY_DISTINCT", a); });
  r.add_scalar("ARRAY_REVERSE", "ARRAY_REVERSE(ARRAY<T>) -> ARRAY<T>",
               [](std::span<const LogicalType> a) { return resolve_unary_array("ARRAY_REVERSE", a); });
  r.add_scalar("ARRAY_SLICE", "ARRAY_SLICE(ARRAY<T>, INT [, INT]) -> ARRAY<T>", [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
    if (args.size() < 2 || args.size() > 3 || !args[0].is(TypeKind::kArray)) return std::nullopt;
    std::vector<LogicalType> types{args[0]};
    for (std::size_t k = 1; k < args.size(); ++k) {
      if (!args[k].is_integer() || args[k].is(TypeKind::kBigInt)) return std::nullopt;
      types.push_back(LogicalType::int_type().with_nullable(args[k].nullable()));
    }
    return array_fn("ARRAY_SLICE", types, args[0].with_nullable(any_nullable(args)), select_kernel(slice));
  });
  r.add_scalar("ARRAY_UNION", "ARRAY_UNION(ARRAY<T>, ARRAY<T>) -> ARRAY<T>",
               [](std::span<const LogicalType> a) { return resolve_combine(true, a); });
  r.add_scalar("ARRAY_CONCAT", "ARRAY_CONCAT(ARRAY<T>, ...) -> ARRAY<T>",
               [](std::span<const LogicalType> a) { return resolve_combine(false, a); });
  r.add_scalar("ARRAY_MAX", "ARRAY_MAX(ARRAY<T>) -> T", [](std::span<const LogicalType> a) { return resolve_extreme(true, a); });
  r.add_scalar("ARRAY_MIN", "ARRAY_MIN(ARRAY<T>) -> T", [](std::span<const LogicalType> a) { return resolve_extreme(false, a); });
  r.add_scalar("ARRAY_JOIN", "ARRAY_JOIN(ARRAY<STRING>, STRING [, STRING]) -> STRING", resolve_join);
  r.add_scalar("ARRAY_SORT", "ARRAY_SORT(ARRAY<T> [, BOOLEAN [, BOOLEAN]]) -> ARRAY<T>", resolve_sort);
}

}  // namespace clink::sql
