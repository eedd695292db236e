// LIKE (with ESCAPE), SIMILAR TO, REGEXP, REGEXP_EXTRACT, REGEXP_REPLACE. A constant
// pattern is compiled once when the expression is compiled (the function's prepared
// state); a pattern that varies per row is compiled when it changes. LIKE uses its own
// matcher (prefix/suffix/contains fast paths, '_' counts code points); the regex
// functions use RE2, whose syntax is Java's minus backreferences and lookaround. As in
// Flink, REGEXP_EXTRACT and REGEXP_REPLACE give NULL for an invalid regex, and
// REGEXP_REPLACE inserts the replacement literally (Matcher.quoteReplacement).
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <re2/re2.h>

#include "clink/sql/function/string_util.hpp"
#include "kernel_util.hpp"

namespace clink::sql {

namespace {

LogicalType str() { return LogicalType::string(); }

// A compiled LIKE pattern: segments of literal text between '%', where '_' inside a
// segment matches any one code point.
class LikeMatcher {
 public:
  LikeMatcher(std::string_view pattern, std::optional<char> escape) {
    std::string cur;
    std::vector<bool> cur_any;  // per byte of cur: '_' placeholder
    auto flush = [&] {
      segments_.push_back({cur, cur_any});
      cur.clear();
      cur_any.clear();
    };
    for (std::size_t i = 0; i < pattern.size(); ++i) {
      char c = pattern[i];
      if (escape && c == *escape) {
        if (i + 1 >= pattern.size())
          throw SqlRuntimeError(fmt::format("Invalid escape sequence at the end of LIKE pattern '{}'", pattern));
        char n = pattern[i + 1];
        if (n != '%' && n != '_' && n != *escape)
          throw SqlRuntimeError(fmt::format("Invalid escape sequence '{}{}' in LIKE pattern '{}'", c, n, pattern));
        cur += n;
        cur_any.push_back(false);
        ++i;
      } else if (c == '%') {
        flush();
        stars_ = true;
      } else if (c == '_') {
        cur += '_';
        cur_any.push_back(true);
        has_any_ = true;
      } else {
        cur += c;
        cur_any.push_back(false);
      }
    }
    flush();
  }

  bool matches(std::string_view s) const {
    if (!stars_) return match_at(segments_[0], s, 0) == static_cast<std::ptrdiff_t>(s.size());
    // First segment anchors the start, the last the end, middle ones match leftmost.
    const Segment& first = segments_.front();
    std::ptrdiff_t pos = match_at(first, s, 0);
    if (pos < 0) return false;
    const Segment& last = segments_.back();
    std::size_t last_chars = last.any.empty() ? 0 : count_chars(last);
    std::size_t begin = static_cast<std::size_t>(pos);
    for (std::size_t k = 1; k + 1 < segments_.size(); ++k) {
      std::ptrdiff_t found = find(segments_[k], s, begin);
      if (found < 0) return false;
      begin = static_cast<std::size_t>(found);
    }
    // The last segment must match a suffix starting at or after `begin`.
    if (last.text.empty()) return true;
    if (!has_any_) return s.size() >= begin + last.text.size() && s.substr(s.size() - last.text.size()) == last.text;
    std::size_t total = utf8_length(s.substr(begin));
    if (total < last_chars) return false;
    std::size_t start = begin + utf8_offset(s.substr(begin), total - last_chars);
    return match_at(last, s, start) == static_cast<std::ptrdiff_t>(s.size());
  }

 private:
  struct Segment {
    std::string text;
    std::vector<bool> any;
  };
  static std::size_t count_chars(const Segment& seg) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < seg.text.size(); ++i)
      if (seg.any[i] || (static_cast<unsigned char>(seg.text[i]) & 0xC0) != 0x80) ++n;
    return n;
  }
  // Matches `seg` at byte `at` of s; the end offset, or -1.
  static std::ptrdiff_t match_at(const Segment& seg, std::string_view s, std::size_t at) {
    std::size_t i = at;
    for (std::size_t k = 0; k < seg.text.size(); ++k) {
      if (i >= s.size()) return -1;
      if (seg.any[k]) {
        i += utf8_char_len(static_cast<unsigned char>(s[i]));
        if (i > s.size()) return -1;
      } else {
        if (s[i] != seg.text[k]) return -1;
        ++i;
      }
    }
    return static_cast<std::ptrdiff_t>(i);
  }
  // Leftmost match of seg at or after `from`; the end offset, or -1.
  std::ptrdiff_t find(const Segment& seg, std::string_view s, std::size_t from) const {
    if (!has_any_) {
      std::size_t hit = s.find(seg.text, from);
      return hit == std::string_view::npos ? -1 : static_cast<std::ptrdiff_t>(hit + seg.text.size());
    }
    for (std::size_t i = from; i <= s.size(); i += (i < s.size() ? utf8_char_len(static_cast<unsigned char>(s[i])) : 1)) {
      std::ptrdiff_t end = match_at(seg, s, i);
      if (end >= 0) return end;
    }
    return -1;
  }

  std::vector<Segment> segments_;
  bool stars_ = false;
  bool has_any_ = false;
};

std::optional<char> escape_of(std::string_view e) {
  if (e.size() != 1) throw SqlRuntimeError(fmt::format("LIKE escape must be one character, got '{}'", e));
  return e[0];
}

std::string similar_to_regex(std::string_view p, std::optional<char> escape) {
  std::string re;
  for (std::size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (escape && c == *escape) {
      if (i + 1 >= p.size()) throw SqlRuntimeError(fmt::format("Invalid escape at the end of SIMILAR TO pattern '{}'", p));
      re += RE2::QuoteMeta(std::string(1, p[++i]));
    } else if (c == '%') {
      re += "(?s:.*)";
    } else if (c == '_') {
      re += "(?s:.)";
    } else if (c == '.' || c == '\\' || c == '^' || c == '$') {
      re += '\\';
      re += c;
    } else {
      re += c;
    }
  }
  return re;
}

// The prepared state of a pattern function: the compiled constant pattern, if any.
struct PatternState {
  std::shared_ptr<LikeMatcher> like;
  std::shared_ptr<RE2> regex;
  bool regex_invalid = false;
};

std::shared_ptr<RE2> compile_regex(const std::string& pattern, bool anchored) {
  RE2::Options opts;
  opts.set_log_errors(false);
  opts.set_dot_nl(false);
  auto re = std::make_shared<RE2>(anchored ? "(?:" + pattern + ")\\z" : pattern, opts);
  if (!re->ok()) return nullptr;
  return re;
}

// LIKE / SIMILAR TO share a shape: (s, pattern [, escape]) -> BOOLEAN.
void add_pattern_predicate(FunctionRegistry& r, const char* name, bool similar) {
  auto kernel = [similar](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    const auto* st = static_cast<const PatternState*>(ctx.state);
    auto* o = out.values<std::uint8_t>();
    std::string last_pattern, last_escape;
    std::shared_ptr<LikeMatcher> like = st ? st->like : nullptr;
    std::shared_ptr<RE2> re = st ? st->regex : nullptr;
    bool constant = like || re;
    for (std::size_t i = 0; i < ctx.rows; ++i) {
      if (!ctx.args_valid_at(i)) continue;
      std::string_view s = a[0].column->string_at(a[0].row(i));
      if (!constant) {
        std::string_view p = a[1].column->string_at(a[1].row(i));
        std::string_view e = a.size() > 2 ? a[2].column->string_at(a[2].row(i)) : std::string_view();
        if (!(like || re) || p != last_pattern || e != last_escape) {
          last_pattern = p;
          last_escape = e;
          std::optional<char> esc = a.size() > 2 ? escape_of(e) : std::nullopt;
          if (similar) {
            re = compile_regex(similar_to_regex(p, esc), true);
            if (!re) throw SqlRuntimeError(fmt::format("Invalid SIMILAR TO pattern '{}'", p));
          } else {
            like = std::make_shared<LikeMatcher>(p, esc);
          }
        }
      }
      o[i] = similar ? RE2::FullMatch(s, *re) : like->matches(s);
    }
  };
  auto prepare = [similar](std::span<const LogicalType>, std::span<const std::optional<Value>> consts) -> std::shared_ptr<const void> {
    if (!consts[1] || consts[1]->is_null()) return nullptr;
    if (consts.size() > 2 && (!consts[2] || consts[2]->is_null())) return nullptr;
    std::optional<char> esc = consts.size() > 2 ? escape_of(consts[2]->as_string()) : std::nullopt;
    auto st = std::make_shared<PatternState>();
    if (similar) {
      st->regex = compile_regex(similar_to_regex(consts[1]->as_string(), esc), true);
      if (!st->regex) throw SqlTypeError(fmt::format("Invalid SIMILAR TO pattern '{}'", consts[1]->as_string()));
    } else {
      st->like = std::make_shared<LikeMatcher>(consts[1]->as_string(), esc);
    }
    return st;
  };
  for (int arity : {2, 3}) {
    r.add_scalar(name, fmt::format("{}(STRING, STRING{})", name, arity == 3 ? ", STRING" : ""),
                 [=](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
                   if (static_cast<int>(args.size()) != arity) return std::nullopt;
                   ResolvedFunction f;
                   f.name = name;
                   bool nullable = false;
                   for (const auto& t : args) {
                     if (!supports_implicit_cast(t, str())) return std::nullopt;
                     f.arg_types.push_back(str().with_nullable(t.nullable()));
                     nullable = nullable || t.nullable();
                   }
                   f.return_type = LogicalType::boolean().with_nullable(nullable);
                   f.kernel = kernel;
                   f.prepare = prepare;
                   f.accepts_scalars = true;
                   return f;
                 });
  }
}

// Prepares an unanchored regex from a constant second argument.
std::shared_ptr<const void> prepare_regex(std::span<const LogicalType>, std::span<const std::optional<Value>> consts) {
  if (!consts[1] || consts[1]->is_null()) return nullptr;
  auto st = std::make_shared<PatternState>();
  st->regex = compile_regex(consts[1]->as_string(), false);
  st->regex_invalid = st->regex == nullptr;
  return st;
}

// The regex for row i: the prepared one, or compiled from the row (cached while equal).
struct RowRegex {
  const PatternState* st;
  std::string last;
  std::shared_ptr<RE2> re;
  const RE2* get(std::span<const KernelArg> a, std::size_t i) {
    if (st != nullptr) return st->regex.get();
    std::string_view p = a[1].column->string_at(a[1].row(i));
    if (!re || p != last) {
      last = p;
      re = compile_regex(last, false);
    }
    return re.get();
  }
};

}  // namespace

void register_regex_functions(FunctionRegistry& r) {
  add_pattern_predicate(r, "LIKE", false);
  add_pattern_predicate(r, "SIMILAR TO", true);

  // REGEXP(s, re): TRUE when re matches a substring (Java's Matcher.find()).
  r.add_fixed("REGEXP", {str(), str()}, LogicalType::boolean(), [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    RowRegex rr{static_cast<const PatternState*>(ctx.state), {}, nullptr};
    auto* o = out.values<std::uint8_t>();
    for (std::size_t i = 0; i < ctx.rows; ++i) {
      if (!ctx.args_valid_at(i)) continue;
      const RE2* re = rr.get(a, i);
      if (re == nullptr) {
        out.set_valid(i, false);
        continue;
      }
      o[i] = RE2::PartialMatch(a[0].column->string_at(a[0].row(i)), *re);
    }
  }, NullPolicy::kPropagate, true, prepare_regex);

  // REGEXP_EXTRACT(s, re [, group]): the group of the first match (group 0 by default).
  for (int arity : {2, 3}) {
    std::vector<LogicalType> params = {str(), str()};
    if (arity == 3) params.push_back(LogicalType::int_type());
    r.add_fixed("REGEXP_EXTRACT", params, str(), [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
      RowRegex rr{static_cast<const PatternState*>(ctx.state), {}, nullptr};
      std::vector<re2::StringPiece> groups;
      kernels::for_each_valid_row(ctx, out, [&](std::size_t i) {
        const RE2* re = rr.get(a, i);
        int group = a.size() > 2 ? a[2].column->values<std::int32_t>()[a[2].row(i)] : 0;
        if (re == nullptr || group < 0 || group > re->NumberOfCapturingGroups()) {
          out.append_null();
          return;
        }
        std::string_view s = a[0].column->string_at(a[0].row(i));
        groups.assign(static_cast<std::size_t>(group) + 1, {});
        if (!re->Match(s, 0, s.size(), RE2::UNANCHORED, groups.data(), group + 1) || groups[static_cast<std::size_t>(group)].data() == nullptr) {
          out.append_null();
          return;
        }
        out.append_string(std::string_view(groups[static_cast<std::size_t>(group)].data(), groups[static_cast<std::size_t>(group)].size()));
      });
    }, NullPolicy::kPropagate, true, prepare_regex);
  }

  // REGEXP_REPLACE(s, re, replacement): every match replaced by the literal replacement.
  r.add_fixed("REGEXP_REPLACE", {str(), str(), str()}, str(), [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    RowRegex rr{static_cast<const PatternState*>(ctx.state), {}, nullptr};
    std::string buf, rewrite;
    kernels::for_each_valid_row(ctx, out, [&](std::size_t i) {
      const RE2* re = rr.get(a, i);
      if (re == nullptr) {
        out.append_null();
        return;
      }
      buf.assign(a[0].column->string_at(a[0].row(i)));
      std::string_view repl = a[2].column->string_at(a[2].row(i));
      rewrite.clear();
      for (char c : repl) {  // RE2 treats '\' in a rewrite as special: escape it
        if (c == '\\') rewrite += '\\';
        rewrite += c;
      }
      RE2::GlobalReplace(&buf, *re, rewrite);
      out.append_string(buf);
    });
  }, NullPolicy::kPropagate, true, prepare_regex);
}

}  // namespace clink::sql
