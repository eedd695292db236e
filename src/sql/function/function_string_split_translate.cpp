// Flink's string built-ins beyond the SQL standard: INSTR, TRANSLATE, ELT, SPLIT,
// STR_TO_MAP, STARTSWITH, ENDSWITH, IS_ALPHA, IS_DIGIT, IS_DECIMAL and TYPEOF, each with
// the semantics of Flink's runtime implementation (SqlFunctionUtils, *Function classes).
// Results are written straight into the output column; per-row state (a TRANSLATE
// dictionary, a compiled STR_TO_MAP delimiter) is rebuilt only when the argument changes.
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <re2/re2.h>

#include "../common/utf8_decode.hpp"
#include "clink/sql/function/string_util.hpp"
#include "collection_util.hpp"
#include "kernel_util.hpp"

namespace clink::sql {

namespace {

using kernels::for_each_valid_row;
using kernels::iv;
using kernels::sv;

LogicalType str() { return LogicalType::string(); }
LogicalType int_t() { return LogicalType::int_type(); }

// Appends the code points of s in reverse order to `out` (cleared first).
void reverse_code_points(std::string_view s, std::string& out) {
  out.clear();
  std::size_t end = s.size();
  while (end > 0) {
    std::size_t start = end - 1;
    while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    out.append(s.data() + start, end - start);
    end = start;
  }
}

// SqlFunctionUtils.instr: the character position of the nth occurrence of sub in s at or
// after character `start`; a negative start searches the reversed strings from character
// -start and maps the position back; 0 when there is none or start is 0. An empty sub is
// found at once (BinaryStringData.indexOf returns 0 for it). `scratch` holds reversals.
std::int32_t instr(std::string_view s, std::string_view sub, std::int32_t start, std::int32_t nth,
                   std::string (&scratch)[2]) {
  if (nth <= 0) throw SqlRuntimeError(fmt::format("INSTR: nthAppearance must be positive, got {}", nth));
  if (start == 0) return 0;
  if (start > 0) {
    std::int64_t index = 0, from = start;
    for (std::int32_t k = 0; k < nth; ++k) {
      std::int64_t found = -1;
      if (sub.empty()) {
        found = 0;
      } else if (static_cast<std::size_t>(from - 1) <= s.size()) {
        std::size_t at = s.find(sub, utf8_offset(s, static_cast<std::size_t>(from - 1)));
        if (at != std::string_view::npos) found = static_cast<std::int64_t>(utf8_length(s.substr(0, at)));
      }
      index = found + 1;
      if (index == 0) return 0;
      from = index + 1;
    }
    return static_cast<std::int32_t>(index);
  }
  reverse_code_points(s, scratch[0]);
  reverse_code_points(sub, scratch[1]);
  std::string rs = std::move(scratch[0]), rsub = std::move(scratch[1]);
  std::int32_t pos = instr(rs, rsub, -start, nth, scratch);
  scratch[0] = std::move(rs);
  scratch[1] = std::move(rsub);
  if (pos == 0) return 0;
  return static_cast<std::int32_t>(utf8_length(s) + 2 - static_cast<std::size_t>(pos) - utf8_length(sub));
}

// TRANSLATE's dictionary for one (from, to) pair: code point -> replacement bytes of `to`
// (empty: delete); the first mapping of a repeated code point wins.
class TranslateDict {
 public:
  void build(std::string_view from, std::string_view to) {
    from_.assign(from);
    to_.assign(to);
    entries_.clear();
    std::size_t j = 0;
    for (std::size_t i = 0; i < from_.size();) {
      std::uint32_t cp = utf8_decode(from_, i);
      std::size_t to_begin = j, to_len = 0;
      if (j < to_.size()) {
        to_len = utf8_char_len(static_cast<unsigned char>(to_[j]));
        j += to_len;
      }
      if (find(cp) == nullptr) entries_.push_back({cp, to_begin, to_len});
    }
  }
  bool same(std::string_view from, std::string_view to) const { return built_ && from == from_ && to == to_; }
  void mark_built() { built_ = true; }
  void append_translated(std::string_view s, Buffer& arena) const {
    for (std::size_t i = 0; i < s.size();) {
      std::size_t begin = i;
      const Entry* e = find(utf8_decode(s, i));
      if (e == nullptr) arena.append(s.data() + begin, i - begin);
      else arena.append(to_.data() + e->to_begin, e->to_len);
    }
  }

 private:
  struct Entry {
    std::uint32_t cp;
    std::size_t to_begin, to_len;
  };
  const Entry* find(std::uint32_t cp) const {
    for (const auto& e : entries_)
      if (e.cp == cp) return &e;
    return nullptr;
  }
  std::string from_, to_;
  std::vector<Entry> entries_;
  bool built_ = false;
};

// StringUtils.splitByWholeSeparatorPreserveAllTokens: every separator ends a token (empty
// tokens kept, a trailing separator gives a trailing ""); an empty string has no tokens;
// an empty separator splits into code points (SplitFunction).
void append_split(std::string_view s, std::string_view sep, Column& child) {
  if (s.empty()) return;
  if (sep.empty()) {
    for (std::size_t i = 0; i < s.size();) {
      std::size_t len = utf8_char_len(static_cast<unsigned char>(s[i]));
      child.append_string(s.substr(i, len));
      i += len;
    }
    return;
  }
  std::size_t begin = 0;
  while (true) {
    std::size_t at = s.find(sep, begin);
    if (at == std::string_view::npos) {
      child.append_string(s.substr(begin));
      return;
    }
    child.append_string(s.substr(begin, at - begin));
    begin = at + sep.size();
  }
}

// A java.lang.String.split delimiter: a literal when it holds no regex metacharacter (or
// is an escaped single non-alphanumeric character, Java's fast path), else a regex.
class JavaSplitter {
 public:
  void set(std::string_view delim) {
    if (valid_ && delim == delim_) return;
    valid_ = true;
    delim_.assign(delim);
    re_.reset();
    literal_ = delim_;
    if (delim_.find_first_of("\\^$.|?*+()[]{}") == std::string::npos) return;
    if (delim_.size() == 2 && delim_[0] == '\\' && !std::isalnum(static_cast<unsigned char>(delim_[1]))) {
      literal_ = delim_.substr(1);
      return;
    }
    RE2::Options opts;
    opts.set_log_errors(false);
    re_ = std::make_unique<RE2>(delim_, opts);
    if (!re_->ok()) throw SqlRuntimeError(fmt::format("STR_TO_MAP: invalid delimiter regex '{}': {}", delim_, re_->error()));
  }
  // The first match at or after `from`: {byte offset, length}, offset npos when none.
  std::pair<std::size_t, std::size_t> find(std::string_view s, std::size_t from) const {
    if (!re_) {
      std::size_t at = literal_.empty() ? std::string_view::npos : s.find(literal_, from);
      return {at, literal_.size()};
    }
    re2::StringPiece m;
    if (from > s.size() || !re_->Match(s, from, s.size(), RE2::UNANCHORED, &m, 1)) return {std::string_view::npos, 0};
    return {static_cast<std::size_t>(m.data() - s.data()), m.size()};
  }

 private:
  std::string delim_, literal_;
  std::unique_ptr<RE2> re_;
  bool valid_ = false;
};

// STR_TO_MAP(text, list_delim, kv_delim) as SqlFunctionUtils.strToMap: text.split(list)
// (trailing empty pairs dropped, a zero-width match at 0 gives no leading pair), each pair
// split at its first kv match (no match: the value is NULL). A repeated key keeps its
// first position and its last value (HashMap.put). `pairs` is reused scratch.
struct KeyValue {
  std::string_view key;
  std::string_view value;
  bool has_value;
};
void append_str_to_map(std::string_view text, const JavaSplitter& list, const JavaSplitter& kv,
                       std::vector<KeyValue>& pairs, Column& out) {
  pairs.clear();
  if (!text.empty()) {
    std::size_t begin = 0, search = 0;
    std::size_t kept = 0;  // pairs up to the last non-empty one (Java drops trailing "")
    auto add = [&](std::string_view pair) {
      auto [at, len] = kv.find(pair, 0);
      if (at == 0 && len == 0) std::tie(at, len) = kv.find(pair, 1);  // no leading "" for a zero-width match
      KeyValue e{at == std::string_view::npos ? pair : pair.substr(0, at), {}, at != std::string_view::npos};
      if (e.has_value) e.value = pair.substr(at + len);
      pairs.push_back(e);
      if (!pair.empty()) kept = pairs.size();
    };
    bool any = false;
    while (true) {
      auto [at, len] = list.find(text, search);
      if (at == std::string_view::npos) break;
      if (len == 0) {  // zero-width: never at 0, and the search moves on by one character
        search = at + (at < text.size() ? utf8_char_len(static_cast<unsigned char>(text[at])) : 1);
        if (at == 0) continue;
        if (at >= text.size()) break;
      } else {
        search = at + len;
      }
      add(text.substr(begin, at - begin));
      any = true;
      begin = at + len;
    }
    if (!any) {
      add(text);
      kept = pairs.size();  // no match: the whole text is the one pair, even if empty
    } else {
      add(text.substr(begin));
    }
    pairs.resize(kept);
  }
  Column& keys = out.child(0);
  Column& values = out.child(1);
  for (std::size_t p = 0; p < pairs.size(); ++p) {
    bool seen = false;
    for (std::size_t q = 0; q < p && !seen; ++q) seen = pairs[q].key == pairs[p].key;
    if (seen) continue;
    std::size_t last = p;
    for (std::size_t q = p + 1; q < pairs.size(); ++q)
      if (pairs[q].key == pairs[p].key) last = q;
    keys.append_string(pairs[p].key);
    if (pairs[last].has_value) values.append_string(pairs[last].value);
    else values.append_null();
  }
  collections::commit_list(out);
}

// Java's Double.parseDouble grammar (after trimming chars <= ' '): [+-] then NaN,
// Infinity, a decimal with optional exponent, or a hex float; an optional f/F/d/D suffix.
bool is_java_double(std::string_view s) {
  while (!s.empty() && static_cast<unsigned char>(s.front()) <= ' ') s.remove_prefix(1);
  while (!s.empty() && static_cast<unsigned char>(s.back()) <= ' ') s.remove_suffix(1);
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  if (s == "NaN" || s == "Infinity") return true;
  if (!s.empty() && (s.back() == 'f' || s.back() == 'F' || s.back() == 'd' || s.back() == 'D')) s.remove_suffix(1);
  auto digits = [&](std::size_t& i, bool hex) {
    std::size_t start = i;
    while (i < s.size() && (hex ? std::isxdigit(static_cast<unsigned char>(s[i])) : std::isdigit(static_cast<unsigned char>(s[i])))) ++i;
    return i - start;
  };
  std::size_t i = 0;
  bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  if (hex) i = 2;
  std::size_t mantissa = digits(i, hex);
  if (i < s.size() && s[i] == '.') {
    ++i;
    mantissa += digits(i, hex);
  }
  if (mantissa == 0) return false;
  if (hex) {  // a hex float needs its binary exponent
    if (i >= s.size() || (s[i] != 'p' && s[i] != 'P')) return false;
  } else if (i >= s.size() || (s[i] != 'e' && s[i] != 'E')) {
    return i == s.size();
  }
  ++i;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  return digits(i, false) > 0 && i == s.size();
}

// Integer.parseInt / Long.parseLong: [+-] then ASCII digits (range checks do not matter
// here: a long-range miss still parses as a double).
bool is_java_integer(std::string_view s) {
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// StringUtils.isAlpha / isNumeric over Java chars: every code point a letter (\p{L}) /
// a decimal digit (\p{Nd}); a supplementary code point is two surrogate chars, neither a
// letter nor a digit, so it fails.
bool all_chars_match(std::string_view s, bool letters) {
  if (s.empty()) return false;
  bool ascii = true;
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c >= 0x80) {
      ascii = false;
      if (c >= 0xF0) return false;
      continue;
    }
    bool ok = letters ? ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') : (c >= '0' && c <= '9');
    if (!ok) return false;
  }
  if (ascii) return true;
  static const RE2 kLetters("\\p{L}+");
  static const RE2 kDigits("\\p{Nd}+");
  return RE2::FullMatch(s, letters ? kLetters : kDigits);
}

// IS_ALPHA / IS_DIGIT / IS_DECIMAL (any argument, BOOLEAN NOT NULL: a NULL string gives FALSE).
enum class CharClassFn { kAlpha, kDigit, kDecimal };

std::optional<ResolvedFunction> resolve_char_class(CharClassFn fn, const char* name, std::span<const LogicalType> args) {
  if (args.size() != 1) return std::nullopt;
  const LogicalType& t = args[0];
  // The answer for every non-NULL value of a non-string type is fixed by the type.
  bool fixed = false;
  if (fn == CharClassFn::kDigit) fixed = t.is_integer();
  if (fn == CharClassFn::kDecimal) fixed = t.is_numeric();
  bool text = t.is_character_string();
  // Flink's generated code passes a NULL of a primitive type (integers, FLOAT, DOUBLE) as
  // its default 0, so the type's fixed answer holds for NULL too (IS_DIGIT(CAST(NULL AS
  // INT)) is TRUE in Flink 2.3).
  const TypeKind k = t.kind();
  bool primitive = t.is_integer() || k == TypeKind::kFloat || k == TypeKind::kDouble;
  ResolvedFunction f;
  f.name = name;
  f.arg_types = {t};
  f.return_type = LogicalType::boolean().not_null();
  f.null_policy = NullPolicy::kCustom;
  f.kernel = [fn, fixed, text, primitive](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    auto* o = out.values<std::uint8_t>();
    for (std::size_t i = 0; i < ctx.rows; ++i) {
      bool r = primitive && fixed;
      if (a[0].valid(i)) {
        if (!text) {
          r = fixed;
        } else {
          std::string_view s = sv(a, 0, i);
          switch (fn) {
            case CharClassFn::kAlpha: r = all_chars_match(s, true); break;
            case CharClassFn::kDigit: r = all_chars_match(s, false); break;
            case CharClassFn::kDecimal: r = !s.empty() && (is_java_integer(s) || is_java_double(s)); break;
          }
        }
      }
      o[i] = r;
    }
    out.set_all_valid();
  };
  return f;
}

std::optional<ResolvedFunction> resolve_elt(std::span<const LogicalType> args) {
  if (args.size() < 2 || !args[0].is_integer()) return std::nullopt;
  std::vector<LogicalType> exprs(args.begin() + 1, args.end());
  auto common = find_common_type(exprs);
  if (!common || !common->is_string_like()) return std::nullopt;
  ResolvedFunction f;
  f.name = "ELT";
  f.arg_types.push_back(LogicalType::bigint().with_nullable(args[0].nullable()));
  for (std::size_t k = 1; k < args.size(); ++k) f.arg_types.push_back(common->with_nullable(args[k].nullable()));
  f.return_type = common->with_nullable(true);  // an index out of range is NULL
  f.null_policy = NullPolicy::kCustom;
  f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    const auto* index = a[0].column->values<std::int64_t>();
    auto n = static_cast<std::int64_t>(a.size() - 1);
    for (std::size_t i = 0; i < ctx.rows; ++i) {
      std::int64_t k = a[0].valid(i) ? index[a[0].row(i)] : 0;
      if (k < 1 || k > n || !a[static_cast<std::size_t>(k)].valid(i)) out.append_null();
      else out.append_string(sv(a, static_cast<std::size_t>(k), i));
    }
  };
  return f;
}

// STARTSWITH / ENDSWITH over two STRINGs or two BYTES values.
void add_affix_test(FunctionRegistry& r, const char* name, bool prefix) {
  auto kernel = [prefix](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    auto* o = out.values<std::uint8_t>();
    for (std::size_t i = 0; i < ctx.rows; ++i) {
      if (!ctx.args_valid_at(i)) continue;
      std::string_view s = sv(a, 0, i), x = sv(a, 1, i);
      o[i] = s.size() >= x.size() && (prefix ? s.substr(0, x.size()) : s.substr(s.size() - x.size())) == x;
    }
  };
  r.add_fixed(name, {str(), str()}, LogicalType::boolean(), kernel);
  r.add_fixed(name, {LogicalType::bytes(), LogicalType::bytes()}, LogicalType::boolean(), kernel);
}

}  // namespace

void register_string_flink_functions(FunctionRegistry& r) {
  // INSTR(s, sub [, start [, nth]]).
  for (int arity : {2, 3, 4}) {
    std::vector<LogicalType> params{str(), str()};
    for (int k = 2; k < arity; ++k) params.push_back(int_t());
    r.add_fixed("INSTR", params, int_t(), [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
      auto* o = out.values<std::int32_t>();
      std::string scratch[2];
      for (std::size_t i = 0; i < ctx.rows; ++i) {
        if (!ctx.args_valid_at(i) || !ctx.is_active(i)) continue;
        std::int32_t start = a.size() > 2 ? iv(a, 2, i) : 1;
        std::int32_t nth = a.size() > 3 ? iv(a, 3, i) : 1;
        o[i] = instr(sv(a, 0, i), sv(a, 1, i), start, nth, scratch);
      }
    });
  }

  // TRANSLATE(expr, from, to): NULL expr -> NULL; a NULL or empty `from` (or an empty
  // expr) returns expr unchanged; a NULL `to` deletes every character of `from`.
  r.add_scalar("TRANSLATE", "TRANSLATE(STRING, STRING, STRING)", [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
    if (args.size() != 3) return std::nullopt;
    for (const auto& t : args)
      if (!supports_implicit_cast(t, str())) return std::nullopt;
    ResolvedFunction f;
    f.name = "TRANSLATE";
    for (const auto& t : args) f.arg_types.push_back(str().with_nullable(t.nullable()));
    f.return_type = str().with_nullable(args[0].nullable());
    f.null_policy = NullPolicy::kCustom;
    f.kernel = [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
      TranslateDict dict;
      for (std::size_t i = 0; i < ctx.rows; ++i) {
        if (!a[0].valid(i)) {
          out.append_null();
          continue;
        }
        std::string_view s = sv(a, 0, i);
        std::string_view from = a[1].valid(i) ? sv(a, 1, i) : std::string_view{};
        if (s.empty() || from.empty()) {
          out.append_string(s);
          continue;
        }
        std::string_view to = a[2].valid(i) ? sv(a, 2, i) : std::string_view{};
        if (!dict.same(from, to)) {
          dict.build(from, to);
          dict.mark_built();
        }
        dict.append_translated(s, out.arena());
        out.commit_string();
      }
    };
    return f;
  });

  r.add_scalar("ELT", "ELT(integer, STRING | BYTES, ...)", resolve_elt);

  // SPLIT(s, delim) -> ARRAY<STRING>.
  r.add_fixed("SPLIT", {str(), str()}, LogicalType::array(str()), [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    out.reserve(ctx.rows);
    for (std::size_t i = 0; i < ctx.rows; ++i) {
      if (!ctx.args_valid_at(i)) {
        out.append_null();
        continue;
      }
      append_split(sv(a, 0, i), sv(a, 1, i), out.child(0));
      collections::commit_list(out);
    }
  });

  // STR_TO_MAP(text [, list_delim, kv_delim]) -> MAP<STRING, STRING>; defaults ',' and '='.
  for (int arity : {1, 3}) {
    std::vector<LogicalType> params(static_cast<std::size_t>(arity), str());
    r.add_fixed("STR_TO_MAP", params, LogicalType::map(str(), str()), [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
      JavaSplitter list, kv;
      std::vector<KeyValue> pairs;
      if (a.size() == 1) {
        list.set(",");
        kv.set("=");
      }
      out.reserve(ctx.rows);
      for (std::size_t i = 0; i < ctx.rows; ++i) {
        if (!ctx.args_valid_at(i)) {
          out.append_null();
          continue;
        }
        if (a.size() == 3) {
          list.set(sv(a, 1, i));
          kv.set(sv(a, 2, i));
        }
        append_str_to_map(sv(a, 0, i), list, kv, pairs, out);
      }
    });
  }

  add_affix_test(r, "STARTSWITH", true);
  add_affix_test(r, "ENDSWITH", false);

  r.add_scalar("IS_ALPHA", "IS_ALPHA(ANY) -> BOOLEAN NOT NULL",
               [](std::span<const LogicalType> a) { return resolve_char_class(CharClassFn::kAlpha, "IS_ALPHA", a); });
  r.add_scalar("IS_DIGIT", "IS_DIGIT(ANY) -> BOOLEAN NOT NULL",
               [](std::span<const LogicalType> a) { return resolve_char_class(CharClassFn::kDigit, "IS_DIGIT", a); });
  r.add_scalar("IS_DECIMAL", "IS_DECIMAL(ANY) -> BOOLEAN NOT NULL",
               [](std::span<const LogicalType> a) { return resolve_char_class(CharClassFn::kDecimal, "IS_DECIMAL", a); });

  // TYPEOF(x [, force_serializable]): the argument's type as Flink's summary string
  // ("INT NOT NULL"); with a TRUE second argument the serializable form (STRING spelled
  // VARCHAR(2147483647)). A constant, decided at planning.
  r.add_scalar("TYPEOF", "TYPEOF(ANY [, BOOLEAN]) -> STRING NOT NULL", [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
    if (args.empty() || args.size() > 2) return std::nullopt;
    if (args.size() == 2 && !args[1].is(TypeKind::kBoolean)) return std::nullopt;
    ResolvedFunction f;
    f.name = "TYPEOF";
    f.arg_types.assign(args.begin(), args.end());
    f.return_type = str().not_null();
    f.null_policy = NullPolicy::kCustom;
    f.accepts_scalars = true;
    f.prepare = [](std::span<const LogicalType> types, std::span<const std::optional<Value>> consts) -> std::shared_ptr<const void> {
      bool serializable = false;
      if (types.size() == 2) {
        if (!consts[1] || consts[1]->is_null()) throw SqlTypeError("TYPEOF: force_serializable must be a constant BOOLEAN");
        serializable = consts[1]->as_bool();
      }
      std::string text = types[0].to_string();
      if (serializable) {
        for (auto [from, to] : {std::pair<std::string_view, std::string_view>{"STRING", "VARCHAR(2147483647)"},
                                {"BYTES", "VARBINARY(2147483647)"}}) {
          for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
            text.replace(at, from.size(), to);
        }
      }
      return std::make_shared<std::string>(std::move(text));
    };
    f.kernel = [](KernelContext& ctx, std::span<const KernelArg>, Column& out) {
      const auto& text = *static_cast<const std::string*>(ctx.state);
      out.reserve(ctx.rows);
      for (std::size_t i = 0; i < ctx.rows; ++i) out.append_string(text);
    };
    return f;
  });
}

}  // namespace clink::sql
