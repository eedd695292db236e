// REGEXP_COUNT, REGEXP_EXTRACT_ALL, REGEXP_INSTR and REGEXP_SUBSTR as Flink's
// Regexp*Function classes: Java's Matcher.find() loop (after an empty match the next
// search starts one character later), RE2 for the matching. An invalid regex gives NULL,
// except for REGEXP_EXTRACT_ALL, which fails the query (Flink throws there too). A
// constant pattern compiles once; a per-row pattern recompiles only when it changes.
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <re2/re2.h>

#include "clink/sql/function/string_util.hpp"
#include "collection_util.hpp"
#include "kernel_util.hpp"

namespace clink::sql {

namespace {

using kernels::sv;

LogicalType str() { return LogicalType::string(); }

struct CompiledPattern {
  std::shared_ptr<RE2> re;  // null: the pattern is invalid
  std::string error;
};

CompiledPattern compile(std::string_view pattern) {
  RE2::Options opts;
  opts.set_log_errors(false);
  auto re = std::make_shared<RE2>(pattern, opts);
  if (!re->ok()) return {nullptr, re->error()};
  return {std::move(re), {}};
}

std::shared_ptr<const void> prepare_pattern(std::span<const LogicalType>, std::span<const std::optional<Value>> consts) {
  if (!consts[1] || consts[1]->is_null()) return nullptr;
  return std::make_shared<CompiledPattern>(compile(consts[1]->as_string()));
}

// The pattern of row i: the prepared one, or compiled from the row (cached while equal).
class RowPattern {
 public:
  explicit RowPattern(const void* state) : prepared_(static_cast<const CompiledPattern*>(state)) {}
  const CompiledPattern& get(std::span<const KernelArg> a, std::size_t i) {
    if (prepared_ != nullptr) return *prepared_;
    std::string_view p = sv(a, 1, i);
    if (!valid_ || p != last_) {
      last_.assign(p);
      current_ = compile(p);
      valid_ = true;
    }
    return current_;
  }

 private:
  const CompiledPattern* prepared_;
  std::string last_;
  CompiledPattern current_;
  bool valid_ = false;
};

// Calls f(groups) for each match as Matcher.find() finds them; `groups` holds n + 1
// submatches. f returns false to stop.
template <class F>
void for_each_match(const RE2& re, std::string_view s, std::vector<re2::StringPiece>& groups, F f) {
  int n = re.NumberOfCapturingGroups() + 1;
  groups.resize(static_cast<std::size_t>(n));
  std::size_t pos = 0;
  while (pos <= s.size()) {
    if (!re.Match(s, pos, s.size(), RE2::UNANCHORED, groups.data(), n)) return;
    if (!f(groups)) return;
    auto begin = static_cast<std::size_t>(groups[0].data() - s.data());
    std::size_t end = begin + groups[0].size();
    if (end == begin) end += end < s.size() ? utf8_char_len(static_cast<unsigned char>(s[end])) : 1;
    pos = end;
  }
}

// Java chars (UTF-16 units) in s: a 4-byte UTF-8 sequence is a surrogate pair.
std::size_t utf16_units(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += ((c & 0xC0) != 0x80) + (c >= 0xF0);
  return n;
}

}  // namespace

void register_regex_more_functions(FunctionRegistry& r) {
  // REGEXP_COUNT(s, re): the number of matches; NULL for an invalid regex.
  r.add_fixed("REGEXP_COUNT", {str(), str()}, LogicalType::int_type(), [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    RowPattern rp(ctx.state);
    std::vector<re2::StringPiece> groups;
    auto* o = out.values<std::int32_t>();
    for (std::size_t i = 0; i < ctx.rows; ++i) {
      if (!ctx.args_valid_at(i)) continue;
      const CompiledPattern& p = rp.get(a, i);
      if (!p.re) {
        out.set_valid(i, false);
        continue;
      }
      std::int32_t count = 0;
      for_each_match(*p.re, sv(a, 0, i), groups, [&](auto&) { return ++count, true; });
      o[i] = count;
    }
  }, NullPolicy::kPropagate, true, prepare_pattern);

  // REGEXP_INSTR(s, re): the 1-based (Java char) position of the first match, 0 if none.
  r.add_fixed("REGEXP_INSTR", {str(), str()}, LogicalType::int_type(), [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    RowPattern rp(ctx.state);
    auto* o = out.values<std::int32_t>();
    for (std::size_t i = 0; i < ctx.rows; ++i) {
      if (!ctx.args_valid_at(i)) continue;
      const CompiledPattern& p = rp.get(a, i);
      if (!p.re) {
        out.set_valid(i, false);
        continue;
      }
      std::string_view s = sv(a, 0, i);
      re2::StringPiece m;
      o[i] = p.re->Match(s, 0, s.size(), RE2::UNANCHORED, &m, 1)
                 ? static_cast<std::int32_t>(utf16_units(s.substr(0, static_cast<std::size_t>(m.data() - s.data()))) + 1)
                 : 0;
    }
  }, NullPolicy::kPropagate, true, prepare_pattern);

  // REGEXP_SUBSTR(s, re): the first match, NULL if none or the regex is invalid.
  r.add_fixed("REGEXP_SUBSTR", {str(), str()}, str(), [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    RowPattern rp(ctx.state);
    kernels::for_each_valid_row(ctx, out, [&](std::size_t i) {
      const CompiledPattern& p = rp.get(a, i);
      std::string_view s = sv(a, 0, i);
      re2::StringPiece m;
      if (p.re && p.re->Match(s, 0, s.size(), RE2::UNANCHORED, &m, 1)) out.append_string(std::string_view(m.data(), m.size()));
      else out.append_null();
    });
  }, NullPolicy::kPropagate, true, prepare_pattern);

  // REGEXP_EXTRACT_ALL(s, re [, group]) -> ARRAY<STRING>: group (default 1) of every
  // match, NULL for a group that did not participate. An invalid regex or a group out of
  // [0, group count] gives NULL (as Flink 2.3, which logs and returns null).
  for (int arity : {2, 3}) {
    std::vector<LogicalType> params{str(), str()};
    if (arity == 3) params.push_back(LogicalType::int_type());
    r.add_fixed("REGEXP_EXTRACT_ALL", params, LogicalType::array(str()), [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
      RowPattern rp(ctx.state);
      std::vector<re2::StringPiece> groups;
      out.reserve(ctx.rows);
      Column& child = out.child(0);
      for (std::size_t i = 0; i < ctx.rows; ++i) {
        if (!ctx.args_valid_at(i) || !ctx.is_active(i)) {
          out.append_null();
          continue;
        }
        const CompiledPattern& p = rp.get(a, i);
        const std::int32_t group = a.size() > 2 ? kernels::iv(a, 2, i) : 1;
        if (!p.re || group < 0 || group > p.re->NumberOfCapturingGroups()) {
          out.append_null();
          continue;
        }
        for_each_match(*p.re, sv(a, 0, i), groups, [&](auto& g) {
          const auto& m = g[static_cast<std::size_t>(group)];
          if (m.data() == nullptr) child.append_null();
          else child.append_string(std::string_view(m.data(), m.size()));
          return true;
        });
        collections::commit_list(out);
      }
    }, NullPolicy::kPropagate, true, prepare_pattern);
  }
}

}  // namespace clink::sql
