// More string functions with Flink's semantics: the `||` operator, SUBSTR, REPEAT,
// REVERSE, LEFT, RIGHT, ASCII, CHR and OVERLAY. Results are written straight into the output
// column's arena (no per-row allocation); positions and lengths count code points.
#include <algorithm>
#include <cstring>

#include "clink/sql/function/string_util.hpp"
#include "kernel_util.hpp"

namespace clink::sql {

namespace {

using kernels::for_each_valid_row;

LogicalType str() { return LogicalType::string(); }
LogicalType int_t() { return LogicalType::int_type(); }

using kernels::sv;
using kernels::iv;

// Registers a function returning STRING, over rows whose arguments are all non-NULL.
template <class F>
void add_string_fn(FunctionRegistry& r, const char* name, std::vector<LogicalType> params, F f) {
  r.add_fixed(name, std::move(params), str(), [f](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    out.arena().reserve(a[0].column->arena().size());
    for_each_valid_row(ctx, out, [&](std::size_t i) { f(a, i, out); });
  });
}

// Flink's BinaryStringDataUtil.substringSQL (shared with SUBSTRING's semantics).
std::string_view substring_sql(std::string_view s, std::int64_t pos, std::int64_t len) {
  auto chars = static_cast<std::int64_t>(utf8_length(s));
  std::int64_t start = 0;
  if (pos > 0) {
    start = pos - 1;
    if (start >= chars) return {};
  } else if (pos < 0) {
    start = chars + pos;
    if (start < 0) return {};
  }
  std::int64_t end = chars - start < len ? chars : start + len;
  std::size_t b = utf8_offset(s, static_cast<std::size_t>(start));
  std::size_t e = utf8_offset(s, static_cast<std::size_t>(end));
  return s.substr(b, e - b);
}

// Appends the code points of s in reverse order (multi-byte sequences stay intact).
void append_reversed(std::string_view s, Buffer& arena) {
  std::size_t end = s.size();
  while (end > 0) {
    std::size_t start = end - 1;
    while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    arena.append(s.data() + start, end - start);
    end = start;
  }
}

// CHR(n) as Flink's SqlFunctionUtils.chr: "" for a negative n, else the character with
// code n & 0xFF (Latin-1, so 128..255 take two UTF-8 bytes; 0 is the NUL character).
void append_chr(std::int64_t n, Column& out) {
  if (n < 0) {
    out.append_string({});
    return;
  }
  auto c = static_cast<unsigned>(n & 0xFF);
  char buf[2];
  std::size_t len = 1;
  if (c < 0x80) {
    buf[0] = static_cast<char>(c);
  } else {
    buf[0] = static_cast<char>(0xC0 | (c >> 6));
    buf[1] = static_cast<char>(0x80 | (c & 0x3F));
    len = 2;
  }
  out.append_string(std::string_view(buf, len));
}

// OVERLAY(s PLACING r FROM pos [FOR len]) as Calcite's SqlFunctions.overlay: the first
// pos - 1 characters of s, then r, then s after character pos - 1 + len (len defaults to
// r's length). Positions outside s clamp to its ends (Java's substring would throw).
void append_overlay(std::string_view s, std::string_view r, std::int64_t pos, std::int64_t len, Column& out) {
  auto chars = static_cast<std::int64_t>(utf8_length(s));
  auto clamp = [&](std::int64_t c) { return static_cast<std::size_t>(std::clamp<std::int64_t>(c, 0, chars)); };
  std::size_t head = utf8_offset(s, clamp(pos - 1));
  std::size_t tail = utf8_offset(s, clamp(pos - 1 + std::max<std::int64_t>(len, 0)));
  Buffer& arena = out.arena();
  arena.append(s.data(), head);
  arena.append(r.data(), r.size());
  arena.append(s.data() + tail, s.size() - tail);
  out.commit_string();
}

}  // namespace

void register_string_more_functions(FunctionRegistry& r) {
  // `a || b`: NULL if either side is NULL. Typed as Calcite's DYADIC_STRING_SUM_PRECISION:
  // CHAR(p1 + p2) for two CHARs, else VARCHAR(p1 + p2), capped at STRING.
  r.add_scalar("||", "STRING || STRING", [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
    if (args.size() != 2 || !args[0].is_character_string() || !args[1].is_character_string()) return std::nullopt;
    ResolvedFunction f;
    f.name = "||";
    f.arg_types = {args[0], args[1]};
    std::int64_t length = std::min<std::int64_t>(std::int64_t{args[0].length()} + args[1].length(), kMaxVarLength);
    bool both_char = args[0].is(TypeKind::kChar) && args[1].is(TypeKind::kChar);
    auto len = static_cast<std::int32_t>(length);
    LogicalType result = both_char ? LogicalType::char_type(len) : LogicalType::varchar(len);
    f.return_type = result.with_nullable(args[0].nullable() || args[1].nullable());
    f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
      for_each_valid_row(ctx, out, [&](std::size_t i) {
        auto x = sv(a, 0, i), y = sv(a, 1, i);
        out.arena().append(x.data(), x.size());
        out.arena().append(y.data(), y.size());
        out.commit_string();
      });
    };
    return f;
  });
  add_string_fn(r, "SUBSTR", {str(), int_t()},
                [](auto a, std::size_t i, Column& out) { out.append_string(substring_sql(sv(a, 0, i), iv(a, 1, i), 2147483647)); });
  add_string_fn(r, "SUBSTR", {str(), int_t(), int_t()}, [](auto a, std::size_t i, Column& out) {
    if (iv(a, 2, i) < 0) out.append_null();  // a negative length is NULL, as SUBSTRING
    else out.append_string(substring_sql(sv(a, 0, i), iv(a, 1, i), iv(a, 2, i)));
  });
  // REPEAT(s, n): "" when n <= 0.
  add_string_fn(r, "REPEAT", {str(), int_t()}, [](auto a, std::size_t i, Column& out) {
    auto s = sv(a, 0, i);
    std::int32_t n = iv(a, 1, i);
    Buffer& arena = out.arena();
    if (n > 0) arena.reserve(arena.size() + s.size() * static_cast<std::size_t>(n));
    for (std::int32_t k = 0; k < n; ++k) arena.append(s.data(), s.size());
    out.commit_string();
  });
  add_string_fn(r, "REVERSE", {str()}, [](auto a, std::size_t i, Column& out) {
    append_reversed(sv(a, 0, i), out.arena());
    out.commit_string();
  });
  // LEFT/RIGHT(s, n): the leftmost/rightmost n characters, "" when n <= 0.
  add_string_fn(r, "LEFT", {str(), int_t()}, [](auto a, std::size_t i, Column& out) {
    auto s = sv(a, 0, i);
    std::int32_t n = iv(a, 1, i);
    out.append_string(n <= 0 ? std::string_view{} : s.substr(0, utf8_offset(s, static_cast<std::size_t>(n))));
  });
  add_string_fn(r, "RIGHT", {str(), int_t()}, [](auto a, std::size_t i, Column& out) {
    auto s = sv(a, 0, i);
    std::int32_t n = iv(a, 1, i);
    std::size_t chars = utf8_length(s);
    if (n <= 0) out.append_string({});
    else if (static_cast<std::size_t>(n) >= chars) out.append_string(s);
    else out.append_string(s.substr(utf8_offset(s, chars - static_cast<std::size_t>(n))));
  });
  add_string_fn(r, "OVERLAY", {str(), str(), int_t()}, [](auto a, std::size_t i, Column& out) {
    auto placing = sv(a, 1, i);
    append_overlay(sv(a, 0, i), placing, iv(a, 2, i), static_cast<std::int64_t>(utf8_length(placing)), out);
  });
  add_string_fn(r, "OVERLAY", {str(), str(), int_t(), int_t()}, [](auto a, std::size_t i, Column& out) {
    append_overlay(sv(a, 0, i), sv(a, 1, i), iv(a, 2, i), iv(a, 3, i), out);
  });
  // ASCII(s): the first byte of s as Flink's generated code reads it (a signed byte), 0
  // for the empty string.
  r.add_fixed("ASCII", {str()}, int_t(), [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    auto* o = out.values<std::int32_t>();
    for (std::size_t i = 0; i < ctx.rows; ++i) {
      auto s = sv(a, 0, i);
      o[i] = s.empty() ? 0 : static_cast<std::int32_t>(static_cast<signed char>(s[0]));
    }
  });
  add_string_fn(r, "CHR", {LogicalType::bigint()}, [](auto a, std::size_t i, Column& out) {
    append_chr(a[0].column->template values<std::int64_t>()[a[0].row(i)], out);
  });
}

}  // namespace clink::sql
