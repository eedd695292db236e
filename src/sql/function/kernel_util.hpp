// Helpers for writing vectorised kernels: tight loops over whole columns, with scalar
// (constant) arguments resolved outside the loop. Private to src/sql.
#pragma once
#include <algorithm>
#include <cstdint>
#include <span>
#include <string_view>

#include "clink/sql/function/function_registry.hpp"

namespace clink::sql::kernels {

// Row i's value of argument k (a column or a scalar).
inline std::string_view sv(std::span<const KernelArg> a, std::size_t k, std::size_t i) {
  return a[k].column->string_at(a[k].row(i));
}
inline std::int32_t iv(std::span<const KernelArg> a, std::size_t k, std::size_t i) {
  return a[k].column->values<std::int32_t>()[a[k].row(i)];
}

inline std::size_t words_for(std::size_t rows) { return (rows + 63) / 64; }

// Runs f(i, bad) for every row, writing o[i]; rows where f set `bad` become NULL.
template <class R, class F>
inline void map_rows(std::size_t n, R* o, std::uint64_t* valid, F f) {
  for (std::size_t w = 0; w * 64 < n; ++w) {
    std::size_t begin = w * 64, end = std::min(n, begin + 64);
    std::uint64_t bad_bits = 0;
    for (std::size_t i = begin; i < end; ++i) {
      bool bad = false;
      o[i] = f(i, bad);
      bad_bits |= static_cast<std::uint64_t>(bad) << (i - begin);
    }
    valid[w] &= ~bad_bits;
  }
}

// A binary kernel over fixed-width arguments A, B producing R: op(a, b, bad) -> R.
// The four scalar/column combinations each get their own loop.
template <class R, class A, class B, class Op>
inline void binary_fixed(const KernelContext& ctx, std::span<const KernelArg> args, Column& out, Op op) {
  const A* x = args[0].column->values<A>();
  const B* y = args[1].column->values<B>();
  R* o = out.values<R>();
  std::uint64_t* v = out.validity();
  std::size_t n = ctx.rows;
  if (!args[0].scalar && !args[1].scalar) {
    map_rows(n, o, v, [&](std::size_t i, bool& bad) { return op(x[i], y[i], bad); });
  } else if (!args[0].scalar) {
    const B c = y[0];
    map_rows(n, o, v, [&](std::size_t i, bool& bad) { return op(x[i], c, bad); });
  } else if (!args[1].scalar) {
    const A c = x[0];
    map_rows(n, o, v, [&](std::size_t i, bool& bad) { return op(c, y[i], bad); });
  } else {
    bool bad = false;
    R r = op(x[0], y[0], bad);
    for (std::size_t i = 0; i < n; ++i) o[i] = r;
    if (bad)
      for (std::size_t w = 0; w < words_for(n); ++w) v[w] = 0;
  }
}

template <class R, class A, class Op>
inline void unary_fixed(const KernelContext& ctx, std::span<const KernelArg> args, Column& out, Op op) {
  const A* x = args[0].column->values<A>();
  R* o = out.values<R>();
  map_rows(ctx.rows, o, out.validity(), [&](std::size_t i, bool& bad) { return op(x[args[0].row(i)], bad); });
}

// For variable-width outputs: calls f(i) for each row whose output is valid, and
// appends a NULL (empty) entry for the others. f appends exactly one value to `out`
// (through append_string) or calls out.append_null().
template <class F>
inline void for_each_valid_row(const KernelContext& ctx, Column& out, F f) {
  out.reserve(ctx.rows);
  for (std::size_t i = 0; i < ctx.rows; ++i) {
    if (ctx.args_valid_at(i)) f(i);
    else out.append_null();
  }
}

// Appends bytes as Java's UTF-8 decoder (new String(bytes, UTF_8)) reads them: each
// malformed byte becomes U+FFFD. A STRING made from bytes goes through it, as Flink's
// does when it becomes text, so every string value stays well-formed UTF-8.
void append_utf8_replacing(const unsigned char* p, std::size_t n, Buffer& arena);

}  // namespace clink::sql::kernels
