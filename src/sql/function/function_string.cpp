// String functions. Results are written straight into the output column's arena (no
// per-row allocation). Character positions and lengths count Unicode code points of the
// UTF-8 text, as Flink counts chars. UPPER/LOWER/INITCAP map ASCII, Latin-1, Greek and
// Cyrillic letters (not the full Unicode case tables).
#include <cstring>

#include <fmt/format.h>

#include "clink/sql/function/string_util.hpp"
#include "kernel_util.hpp"

namespace clink::sql {

namespace {

using kernels::for_each_valid_row;

LogicalType str() { return LogicalType::string(); }
LogicalType int_t() { return LogicalType::int_type(); }

using kernels::sv;
using kernels::iv;

// Registers a string -> string function over rows whose arguments are all non-NULL.
template <class F>
void add_string_fn(FunctionRegistry& r, const char* name, std::vector<LogicalType> params, F f) {
  r.add_fixed(name, std::move(params), str(), [f](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    out.arena().reserve(a[0].column->arena().size());
    for_each_valid_row(ctx, out, [&](std::size_t i) { f(a, i, out); });
  });
}

// Flink's BinaryStringDataUtil.substringSQL.
std::string_view substring_sql(std::string_view s, std::int64_t pos, std::int64_t len) {
  std::int64_t chars = static_cast<std::int64_t>(utf8_length(s));
  std::int64_t start;
  if (pos > 0) {
    start = pos - 1;
    if (start >= chars) return {};
  } else if (pos < 0) {
    start = chars + pos;
    if (start < 0) return {};
  } else {
    start = 0;
  }
  std::int64_t end = chars - start < len ? chars : start + len;
  std::size_t b = utf8_offset(s, static_cast<std::size_t>(start));
  std::size_t e = utf8_offset(s, static_cast<std::size_t>(end));
  return s.substr(b, e - b);
}

bool in_set(std::string_view chars, std::string_view s, std::size_t at, std::size_t& len) {
  len = utf8_char_len(static_cast<unsigned char>(s[at]));
  std::string_view c = s.substr(at, len);
  for (std::size_t k = 0; k < chars.size();) {
    std::size_t l = utf8_char_len(static_cast<unsigned char>(chars[k]));
    if (chars.substr(k, l) == c) return true;
    k += l;
  }
  return false;
}

std::string_view trim_chars(std::string_view s, std::string_view chars, bool left, bool right) {
  if (left) {
    std::size_t len;
    while (!s.empty() && in_set(chars, s, 0, len)) s.remove_prefix(len);
  }
  if (right) {
    while (!s.empty()) {
      std::size_t start = s.size() - 1;
      while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
      std::size_t len;
      if (!in_set(chars, s, start, len)) break;
      s.remove_suffix(s.size() - start);
    }
  }
  return s;
}

void add_trim(FunctionRegistry& r, const char* name, bool left, bool right) {
  add_string_fn(r, name, {str()}, [=](auto a, std::size_t i, Column& out) { out.append_string(trim_chars(sv(a, 0, i), " ", left, right)); });
  add_string_fn(r, name, {str(), str()},
                [=](auto a, std::size_t i, Column& out) { out.append_string(trim_chars(sv(a, 0, i), sv(a, 1, i), left, right)); });
}

// LPAD/RPAD(s, len, pad): Flink returns NULL for a negative length, truncates a longer
// string to len, and returns s unchanged... padded with `pad` repeated.
void pad(std::span<const KernelArg> a, std::size_t i, Column& out, bool left) {
  std::string_view s = sv(a, 0, i), p = sv(a, 2, i);
  std::int64_t len = iv(a, 1, i);
  if (len < 0) {
    out.append_null();
    return;
  }
  std::size_t chars = utf8_length(s);
  auto n = static_cast<std::size_t>(len);
  if (chars >= n) {
    out.append_string(s.substr(0, utf8_offset(s, n)));
    return;
  }
  std::size_t pad_chars = utf8_length(p);
  if (pad_chars == 0) {
    out.append_string(s);
    return;
  }
  std::size_t need = n - chars;
  Buffer& arena = out.arena();
  if (!left) arena.append(s.data(), s.size());
  while (need > 0) {
    std::size_t take = std::min(need, pad_chars);
    arena.append(p.data(), utf8_offset(p, take));
    need -= take;
  }
  if (left) arena.append(s.data(), s.size());
  out.commit_string();
}

}  // namespace

void register_string_functions(FunctionRegistry& r) {
  for (const char* name : {"CHAR_LENGTH", "CHARACTER_LENGTH"}) {
    r.add_fixed(name, {str()}, int_t(), [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
      auto* o = out.values<std::int32_t>();
      for (std::size_t i = 0; i < ctx.rows; ++i) o[i] = static_cast<std::int32_t>(utf8_length(sv(a, 0, i)));
    });
  }
  add_string_fn(r, "UPPER", {str()}, [](auto a, std::size_t i, Column& out) {
    append_case_mapped(sv(a, 0, i), true, out.arena());
    out.commit_string();
  });
  add_string_fn(r, "LOWER", {str()}, [](auto a, std::size_t i, Column& out) {
    append_case_mapped(sv(a, 0, i), false, out.arena());
    out.commit_string();
  });
  add_string_fn(r, "INITCAP", {str()}, [](auto a, std::size_t i, Column& out) {
    append_initcap(sv(a, 0, i), out.arena());
    out.commit_string();
  });
  // CONCAT: NULL if any argument is NULL (Flink). Variadic.
  r.add_scalar("CONCAT", "CONCAT(STRING, ...)", [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
    if (args.empty()) return std::nullopt;
    ResolvedFunction f;
    f.name = "CONCAT";
    bool nullable = false;
    for (const auto& t : args) {
      if (!supports_implicit_cast(t, str())) return std::nullopt;
      f.arg_types.push_back(str().with_nullable(t.nullable()));
      nullable = nullable || t.nullable();
    }
    f.return_type = str().with_nullable(nullable);
    f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
      for_each_valid_row(ctx, out, [&](std::size_t i) {
        for (std::size_t k = 0; k < a.size(); ++k) {
          auto s = sv(a, k, i);
          out.arena().append(s.data(), s.size());
        }
        out.commit_string();
      });
    };
    return f;
  });
  // CONCAT_WS(sep, s...): NULL separator gives NULL; NULL strings are skipped.
  r.add_scalar("CONCAT_WS", "CONCAT_WS(STRING, STRING, ...)", [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
    if (args.size() < 2) return std::nullopt;
    ResolvedFunction f;
    f.name = "CONCAT_WS";
    for (const auto& t : args) {
      if (!supports_implicit_cast(t, str())) return std::nullopt;
      f.arg_types.push_back(str().with_nullable(t.nullable()));
    }
    f.return_type = str().with_nullable(args[0].nullable());
    f.null_policy = NullPolicy::kCustom;
    f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
      for (std::size_t i = 0; i < ctx.rows; ++i) {
        if (!a[0].valid(i)) {
          out.append_null();
          continue;
        }
        auto sep = sv(a, 0, i);
        bool first = true;
        for (std::size_t k = 1; k < a.size(); ++k) {
          if (!a[k].valid(i)) continue;
          if (!first) out.arena().append(sep.data(), sep.size());
          first = false;
          auto s = sv(a, k, i);
          out.arena().append(s.data(), s.size());
        }
        out.commit_string();
      }
    };
    return f;
  });
  add_string_fn(r, "SUBSTRING", {str(), int_t()},
                [](auto a, std::size_t i, Column& out) { out.append_string(substring_sql(sv(a, 0, i), iv(a, 1, i), 2147483647)); });
  add_string_fn(r, "SUBSTRING", {str(), int_t(), int_t()}, [](auto a, std::size_t i, Column& out) {
    if (iv(a, 2, i) < 0) out.append_null();  // a negative length is NULL (Flink)
    else out.append_string(substring_sql(sv(a, 0, i), iv(a, 1, i), iv(a, 2, i)));
  });
  add_trim(r, "TRIM", true, true);
  add_trim(r, "BTRIM", true, true);
  add_trim(r, "LTRIM", true, false);
  add_trim(r, "RTRIM", false, true);
  add_string_fn(r, "LPAD", {str(), int_t(), str()}, [](auto a, std::size_t i, Column& out) { pad(a, i, out, true); });
  add_string_fn(r, "RPAD", {str(), int_t(), str()}, [](auto a, std::size_t i, Column& out) { pad(a, i, out, false); });
  add_string_fn(r, "REPLACE", {str(), str(), str()}, [](auto a, std::size_t i, Column& out) {
    std::string_view s = sv(a, 0, i), from = sv(a, 1, i), to = sv(a, 2, i);
    if (from.empty()) {
      out.append_string(s);
      return;
    }
    Buffer& arena = out.arena();
    std::size_t at = 0;
    for (;;) {
      std::size_t hit = s.find(from, at);
      if (hit == std::string_view::npos) break;
      arena.append(s.data() + at, hit - at);
      arena.append(to.data(), to.size());
      at = hit + from.size();
    }
    arena.append(s.data() + at, s.size() - at);
    out.commit_string();
  });
  // POSITION(needle IN haystack) -> POSITION(needle, haystack): 1-based, 0 when absent.
  r.add_fixed("POSITION", {str(), str()}, int_t(), [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    auto* o = out.values<std::int32_t>();
    for (std::size_t i = 0; i < ctx.rows; ++i) {
      if (!ctx.args_valid_at(i)) continue;
      std::string_view needle = sv(a, 0, i), hay = sv(a, 1, i);
      std::size_t hit = hay.find(needle);
      o[i] = hit == std::string_view::npos ? 0 : static_cast<std::int32_t>(utf8_length(hay.substr(0, hit)) + 1);
    }
  });
  // SPLIT_INDEX(s, sep, n): the n-th (0-based) piece, NULL when out of range.
  add_string_fn(r, "SPLIT_INDEX", {str(), str(), int_t()}, [](auto a, std::size_t i, Column& out) {
    std::string_view s = sv(a, 0, i), sep = sv(a, 1, i);
    std::int32_t n = iv(a, 2, i);
    if (n < 0) {
      out.append_null();
      return;
    }
    if (sep.empty()) {  // splitByWholeSeparatorPreserveAllTokens with an empty separator splits on whitespace
      sep = " ";
    }
    if (s.empty()) {  // commons-lang returns no tokens for an empty string
      out.append_null();
      return;
    }
    std::size_t at = 0;
    for (std::int32_t k = 0;; ++k) {
      std::size_t hit = s.find(sep, at);
      if (k == n) {
        out.append_string(s.substr(at, hit == std::string_view::npos ? std::string_view::npos : hit - at));
        return;
      }
      if (hit == std::string_view::npos) {
        out.append_null();
        return;
      }
      at = hit + sep.size();
    }
  });
}

}  // namespace clink::sql
