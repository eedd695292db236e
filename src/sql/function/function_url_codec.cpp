// PARSE_URL, URL_ENCODE, URL_DECODE, ENCODE and DECODE with the semantics of the Java
// classes Flink calls: java.net.URL (through SqlFunctionUtils.parseUrl), URLEncoder /
// URLDecoder with UTF-8, String.getBytes / new String(bytes, charset). Results go
// straight into the output column; parsing works on string_views of the input.
#include <optional>
#include <string>

#include <fmt/format.h>

#include "../common/utf8_decode.hpp"
#include "kernel_util.hpp"

namespace clink::sql {

namespace {

using kernels::append_utf8_replacing;
using kernels::for_each_valid_row;
using kernels::sv;

LogicalType str() { return LogicalType::string(); }

// The parts of a URL as java.net.URL exposes them (std::nullopt: Java's null).
struct UrlParts {
  std::string_view protocol;
  std::optional<std::string_view> authority, user_info, query, ref;
  std::string_view host;
  std::string_view path;  // as written (Flink 2.3 keeps /./ and /../ segments)
};

bool is_scheme_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
}

// new URL(spec) for the protocols with the JDK's standard stream handler (http, https,
// ftp, file); false where Java throws MalformedURLException (Flink then returns NULL).
bool parse_url(std::string_view spec, UrlParts& u) {
  while (!spec.empty() && static_cast<unsigned char>(spec.front()) <= ' ') spec.remove_prefix(1);
  while (!spec.empty() && static_cast<unsigned char>(spec.back()) <= ' ') spec.remove_suffix(1);
  if (spec.size() >= 4 && (spec.substr(0, 4) == "url:" || spec.substr(0, 4) == "URL:")) spec.remove_prefix(4);
  std::size_t colon = 0;
  while (colon < spec.size() && spec[colon] != '/' && spec[colon] != ':') ++colon;
  if (colon == 0 || colon >= spec.size() || spec[colon] != ':' || !std::isalpha(static_cast<unsigned char>(spec[0])))
    return false;
  for (std::size_t k = 0; k < colon; ++k)
    if (!is_scheme_char(spec[k])) return false;
  std::string_view scheme = spec.substr(0, colon);
  auto iequals = [&](std::string_view x) {
    if (x.size() != scheme.size()) return false;
    for (std::size_t k = 0; k < x.size(); ++k)
      if (std::tolower(static_cast<unsigned char>(scheme[k])) != x[k]) return false;
    return true;
  };
  if (iequals("http")) u.protocol = "http";
  else if (iequals("https")) u.protocol = "https";
  else if (iequals("ftp")) u.protocol = "ftp";
  else if (iequals("file")) u.protocol = "file";
  else return false;
  std::string_view rest = spec.substr(colon + 1);
  if (auto hash = rest.find('#'); hash != std::string_view::npos) {
    u.ref = rest.substr(hash + 1);
    rest = rest.substr(0, hash);
  }
  if (auto q = rest.find('?'); q != std::string_view::npos) {
    u.query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  if (rest.size() >= 2 && rest[0] == '/' && rest[1] == '/') {
    rest.remove_prefix(2);
    std::size_t end = std::min(rest.find('/'), rest.size());
    std::string_view authority = rest.substr(0, end);
    u.authority = authority;
    std::string_view host = authority;
    std::size_t at = authority.find('@');
    bool host_known = true;
    if (at != std::string_view::npos) {
      if (at != authority.rfind('@')) {
        host_known = false;  // two '@': Java leaves user info and host unset
      } else {
        u.user_info = authority.substr(0, at);
        host = authority.substr(at + 1);
      }
    }
    if (!host_known) {
      host = {};
    } else if (!host.empty() && host[0] == '[') {
      std::size_t close = host.find(']');
      if (close == std::string_view::npos) return false;  // "Invalid host"
      std::string_view after = host.substr(close + 1);
      if (!after.empty()) {
        if (after[0] != ':') return false;
        for (char c : after.substr(1))
          if (c < '0' || c > '9') return false;
      }
      host = host.substr(0, close + 1);
    } else if (auto pc = host.find(':'); pc != std::string_view::npos) {
      for (char c : host.substr(pc + 1))  // Integer.parseInt of the port
        if (c < '0' || c > '9') return false;
      host = host.substr(0, pc);
    }
    u.host = host;
    rest = rest.substr(end);
  }
  u.path = rest;
  return true;
}

// Appends PARSE_URL(url, part) or a NULL; the FILE part is path + "?" + query.
void append_url_part(std::string_view url, std::string_view part, Column& out) {
  UrlParts u;
  if (!parse_url(url, u)) {
    out.append_null();
    return;
  }
  auto opt = [&](const std::optional<std::string_view>& v) {
    if (v) out.append_string(*v);
    else out.append_null();
  };
  if (part == "HOST") out.append_string(u.host);
  else if (part == "PATH") out.append_string(u.path);  // as written: Flink 2.3 keeps /./ and /../
  else if (part == "QUERY") opt(u.query);
  else if (part == "REF") opt(u.ref);
  else if (part == "PROTOCOL") out.append_string(u.protocol);
  else if (part == "AUTHORITY") opt(u.authority);
  else if (part == "USERINFO") opt(u.user_info);
  else if (part == "FILE") {
    out.arena().append(u.path.data(), u.path.size());
    if (u.query) {
      out.arena().append("?", 1);
      out.arena().append(u.query->data(), u.query->size());
    }
    out.commit_string();
  } else {
    out.append_null();
  }
}

// PARSE_URL(url, 'QUERY', key): the value of the first `key=` at the start of the query or
// after an '&', up to the next '&' (the regex (&|^)key=([^&]*)).
void append_query_value(std::string_view url, std::string_view part, std::string_view key, Column& out) {
  UrlParts u;
  if (part != "QUERY" || !parse_url(url, u) || !u.query) {
    out.append_null();
    return;
  }
  std::string_view q = *u.query;
  for (std::size_t at = q.find(key); at != std::string_view::npos; at = q.find(key, at + 1)) {
    if (at != 0 && q[at - 1] != '&') continue;
    std::size_t eq = at + key.size();
    if (eq >= q.size() || q[eq] != '=') continue;
    std::size_t end = std::min(q.find('&', eq + 1), q.size());
    out.append_string(q.substr(eq + 1, end - eq - 1));
    return;
  }
  out.append_null();
}

const char kUpperHex[] = "0123456789ABCDEF";

// URLEncoder.encode(s, UTF-8): [A-Za-z0-9.*_-] kept, ' ' -> '+', other bytes %XX.
void append_url_encoded(std::string_view s, Buffer& arena) {
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '.' || c == '-' || c == '*' || c == '_') {
      arena.append(&ch, 1);
    } else if (c == ' ') {
      arena.append("+", 1);
    } else {
      char esc[3] = {'%', kUpperHex[c >> 4], kUpperHex[c & 15]};
      arena.append(esc, 3);
    }
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// URLDecoder.decode(s, UTF-8): '+' -> ' ', runs of %XX decoded as UTF-8 together; false
// for an incomplete or non-hex escape (Java throws; Flink returns NULL).
bool append_url_decoded(std::string_view s, Buffer& arena, std::string& bytes) {
  for (std::size_t i = 0; i < s.size();) {
    char c = s[i];
    if (c == '+') {
      arena.append(" ", 1);
      ++i;
    } else if (c == '%') {
      bytes.clear();
      while (i < s.size() && s[i] == '%') {
        if (i + 2 >= s.size()) return false;  // incomplete trailing escape
        int hi = hex_value(s[i + 1]), lo = hex_value(s[i + 2]);
        if (hi < 0 || lo < 0) return false;
        bytes.push_back(static_cast<char>(hi * 16 + lo));
        i += 3;
      }
      append_utf8_replacing(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), arena);
    } else {
      arena.append(&c, 1);
      ++i;
    }
  }
  return true;
}

enum class Charset { kUtf8, kAscii, kLatin1, kUtf16, kUtf16Be, kUtf16Le };

// Charset.forName for the charsets Flink documents, with Java's common aliases.
Charset charset_of(std::string_view name, const char* fn) {
  std::string u;
  for (char c : name) u += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (u == "UTF-8" || u == "UTF8") return Charset::kUtf8;
  if (u == "US-ASCII" || u == "ASCII" || u == "US_ASCII" || u == "ASCII7" || u == "646") return Charset::kAscii;
  if (u == "ISO-8859-1" || u == "ISO8859-1" || u == "ISO8859_1" || u == "ISO_8859_1" || u == "LATIN1" || u == "L1")
    return Charset::kLatin1;
  if (u == "UTF-16" || u == "UTF_16" || u == "UTF16") return Charset::kUtf16;
  if (u == "UTF-16BE" || u == "UTF_16BE" || u == "X-UTF-16BE") return Charset::kUtf16Be;
  if (u == "UTF-16LE" || u == "UTF_16LE" || u == "X-UTF-16LE") return Charset::kUtf16Le;
  throw SqlRuntimeError(fmt::format("{}: unsupported charset '{}' (supported: US-ASCII, ISO-8859-1, UTF-8, UTF-16BE, UTF-16LE, UTF-16)", fn, name));
}

void push_unit(std::uint16_t unit, bool big_endian, Buffer& arena) {
  unsigned char b[2] = {static_cast<unsigned char>(big_endian ? unit >> 8 : unit & 0xFF),
                        static_cast<unsigned char>(big_endian ? unit & 0xFF : unit >> 8)};
  arena.append(b, 2);
}

// String.getBytes(charset): unmappable characters become '?'; UTF-16 writes a BOM and
// big-endian units.
void append_encoded(std::string_view s, Charset cs, Buffer& arena) {
  if (cs == Charset::kUtf8) {
    arena.append(s.data(), s.size());
    return;
  }
  if (cs == Charset::kUtf16 && !s.empty()) push_unit(0xFEFF, true, arena);
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t cp = utf8_decode(s, i);
    switch (cs) {
      case Charset::kAscii:
      case Charset::kLatin1: {
        char c = cp < (cs == Charset::kAscii ? 0x80u : 0x100u) ? static_cast<char>(cp) : '?';
        arena.append(&c, 1);
        break;
      }
      default: {
        bool be = cs != Charset::kUtf16Le;
        if (cp >= 0x10000) {
          std::uint32_t v = cp - 0x10000;
          push_unit(static_cast<std::uint16_t>(0xD800 | (v >> 10)), be, arena);
          push_unit(static_cast<std::uint16_t>(0xDC00 | (v & 0x3FF)), be, arena);
        } else {
          push_unit(static_cast<std::uint16_t>(cp), be, arena);
        }
      }
    }
  }
}

struct ArenaSink {
  Buffer& arena;
  void push_back(char c) { arena.append(&c, 1); }
};

// new String(bytes, charset): malformed input becomes U+FFFD; UTF-16 reads a BOM to pick
// the byte order (big-endian without one) and drops it.
void append_decoded(std::string_view bytes, Charset cs, Buffer& arena) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  std::size_t n = bytes.size();
  ArenaSink sink{arena};
  switch (cs) {
    case Charset::kUtf8: append_utf8_replacing(p, n, arena); return;
    case Charset::kAscii:
    case Charset::kLatin1:
      for (std::size_t i = 0; i < n; ++i) utf8_encode(cs == Charset::kAscii && p[i] >= 0x80 ? 0xFFFDu : p[i], sink);
      return;
    default: break;
  }
  bool be = cs != Charset::kUtf16Le;
  std::size_t i = 0;
  if (cs == Charset::kUtf16 && n >= 2) {
    if (p[0] == 0xFE && p[1] == 0xFF) i = 2;
    else if (p[0] == 0xFF && p[1] == 0xFE) i = 2, be = false;
  }
  auto unit = [&](std::size_t k) -> std::uint32_t { return be ? (p[k] << 8 | p[k + 1]) : (p[k + 1] << 8 | p[k]); };
  for (; i + 1 < n; i += 2) {
    std::uint32_t u = unit(i);
    if (u >= 0xD800 && u < 0xDC00 && i + 3 < n) {
      std::uint32_t lo = unit(i + 2);
      if (lo >= 0xDC00 && lo < 0xE000) {
        utf8_encode(0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00), sink);
        i += 2;
        continue;
      }
    }
    utf8_encode(u >= 0xD800 && u < 0xE000 ? 0xFFFDu : u, sink);
  }
  if (i < n) utf8_encode(0xFFFDu, sink);  // an odd trailing byte
}

}  // namespace

void kernels::append_utf8_replacing(const unsigned char* p, std::size_t n, Buffer& arena) {
  static const char kReplacement[] = "\xEF\xBF\xBD";
  for (std::size_t i = 0; i < n;) {
    unsigned char c = p[i];
    std::size_t len = c < 0x80 ? 1 : (c >= 0xC2 && c < 0xE0) ? 2 : (c >= 0xE0 && c < 0xF0) ? 3 : (c >= 0xF0 && c < 0xF5) ? 4 : 0;
    bool ok = len != 0 && i + len <= n;
    for (std::size_t k = 1; ok && k < len; ++k) ok = (p[i + k] & 0xC0) == 0x80;
    if (ok && len == 3) ok = !(c == 0xE0 && p[i + 1] < 0xA0) && !(c == 0xED && p[i + 1] >= 0xA0);
    if (ok && len == 4) ok = !(c == 0xF0 && p[i + 1] < 0x90) && !(c == 0xF4 && p[i + 1] >= 0x90);
    if (ok) {
      arena.append(p + i, len);
      i += len;
    } else {
      arena.append(kReplacement, 3);
      ++i;
    }
  }
}

void register_url_codec_functions(FunctionRegistry& r) {
  r.add_fixed("PARSE_URL", {str(), str()}, str(), [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    for_each_valid_row(ctx, out, [&](std::size_t i) { append_url_part(sv(a, 0, i), sv(a, 1, i), out); });
  });
  r.add_fixed("PARSE_URL", {str(), str(), str()}, str(), [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    for_each_valid_row(ctx, out, [&](std::size_t i) { append_query_value(sv(a, 0, i), sv(a, 1, i), sv(a, 2, i), out); });
  });
  r.add_fixed("URL_ENCODE", {str()}, str(), [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    for_each_valid_row(ctx, out, [&](std::size_t i) {
      append_url_encoded(sv(a, 0, i), out.arena());
      out.commit_string();
    });
  });
  r.add_fixed("URL_DECODE", {str()}, str(), [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    std::string bytes;
    for_each_valid_row(ctx, out, [&](std::size_t i) {
      std::size_t mark = out.arena().size();
      if (append_url_decoded(sv(a, 0, i), out.arena(), bytes)) {
        out.commit_string();
      } else {
        out.arena().resize(mark);
        out.append_null();
      }
    });
  });
  r.add_fixed("ENCODE", {str(), str()}, LogicalType::bytes(), [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    for_each_valid_row(ctx, out, [&](std::size_t i) {
      append_encoded(sv(a, 0, i), charset_of(sv(a, 1, i), "ENCODE"), out.arena());
      out.commit_string();
    });
  });
  r.add_fixed("DECODE", {LogicalType::bytes(), str()}, str(), [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    for_each_valid_row(ctx, out, [&](std::size_t i) {
      append_decoded(sv(a, 0, i), charset_of(sv(a, 1, i), "DECODE"), out.arena());
      out.commit_string();
    });
  });
}

}  // namespace clink::sql
