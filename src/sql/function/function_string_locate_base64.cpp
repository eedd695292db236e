// String functions Flink scripts use often beyond the SQL standard ones: LOCATE,
// TO_BASE64 and FROM_BASE64. Positions count code points; results are written straight
// into the output column's arena.
#include "clink/sql/function/string_util.hpp"
#include "kernel_util.hpp"

namespace clink::sql {

namespace {

using kernels::for_each_valid_row;

LogicalType str() { return LogicalType::string(); }
LogicalType int_t() { return LogicalType::int_type(); }

using kernels::sv;

// LOCATE(needle, haystack, from): the 1-based character position of the first needle at
// or after character `from`, 0 when there is none (Java's indexOf from from - 1, which
// reads a negative start as 0: a `from` < 1 searches from the first character, as Flink;
// an empty needle is found at `from` itself while inside the text).
std::int32_t locate(std::string_view needle, std::string_view hay, std::int64_t from) {
  auto chars = static_cast<std::int64_t>(utf8_length(hay));
  if (from < 1) from = 1;
  if (from - 1 > chars) return 0;
  std::size_t start = utf8_offset(hay, static_cast<std::size_t>(from - 1));
  std::size_t at = hay.find(needle, start);
  if (at == std::string_view::npos) return 0;
  return static_cast<std::int32_t>(utf8_length(hay.substr(0, at)) + 1);
}

const char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void append_base64(std::string_view s, Buffer& arena) {
  std::size_t i = 0;
  char quad[4];
  for (; i + 3 <= s.size(); i += 3) {
    std::uint32_t v = (static_cast<unsigned char>(s[i]) << 16) | (static_cast<unsigned char>(s[i + 1]) << 8) |
                      static_cast<unsigned char>(s[i + 2]);
    for (int k = 0; k < 4; ++k) quad[k] = kBase64[(v >> (18 - 6 * k)) & 63];
    arena.append(quad, 4);
  }
  if (i < s.size()) {
    std::uint32_t v = static_cast<unsigned char>(s[i]) << 16;
    if (i + 1 < s.size()) v |= static_cast<unsigned char>(s[i + 1]) << 8;
    quad[0] = kBase64[(v >> 18) & 63];
    quad[1] = kBase64[(v >> 12) & 63];
    quad[2] = i + 1 < s.size() ? kBase64[(v >> 6) & 63] : '=';
    quad[3] = '=';
    arena.append(quad, 4);
  }
}

int base64_digit(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// java.util.Base64's basic decoder: padding optional at the end, nothing else allowed
// (Flink's FROM_BASE64 fails the query on such input). The bytes become text as Flink's
// do: a malformed UTF-8 byte reads as U+FFFD.
void append_unbase64(std::string_view s, Buffer& arena) {
  thread_local std::string bytes;
  bytes.clear();
  std::size_t end = s.size();
  while (end > 0 && s[end - 1] == '=' && s.size() - end < 2) --end;
  std::uint32_t acc = 0;
  int bits = 0;
  for (std::size_t i = 0; i < end; ++i) {
    int d = base64_digit(s[i]);
    if (d < 0) throw SqlRuntimeError("FROM_BASE64: '" + std::string(s) + "' is not valid base64");
    acc = (acc << 6) | static_cast<std::uint32_t>(d);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  if (end % 4 == 1) throw SqlRuntimeError("FROM_BASE64: '" + std::string(s) + "' is not valid base64");
  kernels::append_utf8_replacing(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), arena);
}

}  // namespace

void register_string_extra_functions(FunctionRegistry& r) {
  r.add_fixed("LOCATE", {str(), str()}, int_t(), [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    auto* o = out.values<std::int32_t>();
    for (std::size_t i = 0; i < ctx.rows; ++i)
      if (ctx.args_valid_at(i)) o[i] = locate(sv(a, 0, i), sv(a, 1, i), 1);
  });
  r.add_fixed("LOCATE", {str(), str(), int_t()}, int_t(), [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    auto* o = out.values<std::int32_t>();
    for (std::size_t i = 0; i < ctx.rows; ++i)
      if (ctx.args_valid_at(i)) o[i] = locate(sv(a, 0, i), sv(a, 1, i), a[2].column->values<std::int32_t>()[a[2].row(i)]);
  });
  r.add_fixed("TO_BASE64", {str()}, str(), [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    for_each_valid_row(ctx, out, [&](std::size_t i) {
      append_base64(sv(a, 0, i), out.arena());
      out.commit_string();
    });
  });
  r.add_fixed("FROM_BASE64", {str()}, str(), [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    for_each_valid_row(ctx, out, [&](std::size_t i) {
      if (!ctx.is_active(i)) {
        out.append_string({});
        return;
      }
      append_unbase64(sv(a, 0, i), out.arena());
      out.commit_string();
    });
  });
}

}  // namespace clink::sql
