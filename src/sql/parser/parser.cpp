#include "clink/sql/parser/parser.hpp"

#include <pg_query.h>
#include <pthread.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>

#include "clink/core/utf8.hpp"
#include "clink/metrics/sql_metrics.hpp"
#include "ast_builder.hpp"
#include "frontend.hpp"
#include "token_cursor.hpp"

namespace clink::sql {

namespace detail {

namespace {
struct PgResult {
  PgQueryParseResult r;
  explicit PgResult(const std::string& text) : r(pg_query_parse(text.c_str())) {}
  ~PgResult() { pg_query_free_parse_result(r); }
  PgResult(const PgResult&) = delete;
  PgResult& operator=(const PgResult&) = delete;
};

// PostgreSQL's cursor position counts characters from 1; return the byte offset.
size_t byte_offset_of_character(const std::string& text, int cursorpos) {
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (++chars == static_cast<size_t>(cursorpos)) return i;
  }
  return text.size();
}
}  // namespace

Frontend::Frontend(std::string_view original)
    : original_(original), map_(original_), lexed_(preparse::tokenize(preparse::MappedText::identity(original_), map_)) {
  // SQL text is Unicode: a byte that is not UTF-8 would reach string values, names and
  // the JobGraphSpec's JSON (found by fuzzing: a failure far from its cause).
  if (const std::size_t bad = first_invalid_utf8(original_); bad < original_.size())
    throw ParseError(map_.position(bad), "the SQL text is not valid UTF-8 here (byte " +
                                             std::to_string(static_cast<unsigned char>(original_[bad])) + ")");
  // The shim's own recursive descent (CAST, table functions, clauses) nests with the
  // brackets: bounded here, before any stage recurses, with the position of the first
  // bracket too deep (PostgreSQL's parser stops at about 10 000 with "memory exhausted").
  constexpr int kMaxBrackets = 1000;
  int depth = 0;
  for (const auto& t : lexed_.tokens) {
    if (t.sym("(") || t.sym("[")) {
      if (++depth > kMaxBrackets)
        throw ParseError(map_.position(t.origin), "parentheses or brackets nested more than " +
                                                      std::to_string(kMaxBrackets) + " deep");
    } else if (t.sym(")") || t.sym("]")) {
      depth = std::max(0, depth - 1);
    }
  }
}

SourcePosition Frontend::start_of(const preparse::Lexed& lexed, size_t begin) const {
  if (begin < lexed.tokens.size()) return map_.position(lexed.tokens[begin].origin);
  return map_.position(lexed.text.original_offset(lexed.text.text.size()));
}

namespace {

// Index of the ')' closing the '(' at `open` in a rewritten text (strings and quoted
// names skipped), or npos.
size_t closing_paren(const std::string& text, size_t open) {
  int depth = 0;
  for (size_t i = open; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\'' || c == '"') {
      for (++i; i < text.size(); ++i) {
        if (text[i] != c) continue;
        if (i + 1 < text.size() && text[i + 1] == c) {
          ++i;  // a doubled quote inside the literal
          continue;
        }
        break;
      }
    } else if (c == '(') {
      ++depth;
    } else if (c == ')' && --depth == 0) {
      return i;
    }
  }
  return std::string::npos;
}

// Flink allows a subquery or VALUES in FROM without an alias; PostgreSQL 15 does not.
// Gives it the alias __clink_anon_N (the AST builder drops it again).
bool add_missing_alias(preparse::Rewritten& text, size_t open, int n) {
  size_t close = open < text.text.text.size() && text.text.text[open] == '(' ? closing_paren(text.text.text, open)
                                                                               : std::string::npos;
  if (close == std::string::npos) return false;
  std::string alias = " AS __clink_anon_" + std::to_string(n);
  size_t at = close + 1;
  uint32_t orig = text.text.original_offset(close);
  text.text.text.insert(at, alias);
  text.text.origin.insert(text.text.origin.begin() + static_cast<std::ptrdiff_t>(at), alias.size(), orig);
  std::map<uint32_t, std::string> shifted;
  for (auto& [offset, spelling] : text.spellings)
    shifted[offset >= at ? offset + static_cast<uint32_t>(alias.size()) : offset] = spelling;
  text.spellings = std::move(shifted);
  return true;
}

// PostgreSQL's parser is iterative, but libpg_query writes the parse tree out
// recursively: a 100 000-term `+` chain overflows an 8 MB stack there. Long statements are
// parsed on a thread with a stack large enough for any depth the text can hold (reserved
// address space, touched only as deep as the tree goes).
std::unique_ptr<PgResult> parse_with_enough_stack(const std::string& text) {
  constexpr std::size_t kDirect = 16 * 1024;  // a statement this short cannot nest deep enough
  if (text.size() <= kDirect) return std::make_unique<PgResult>(text);
  std::unique_ptr<PgResult> result;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  // ~600 bytes of stack per level of a chain, a level per two characters of text at most.
  const std::size_t stack = std::clamp<std::size_t>(text.size() * 512, 64u << 20, std::size_t{4} << 30);
  pthread_attr_setstacksize(&attr, stack);
  struct Call {
    const std::string* text;
    std::unique_ptr<PgResult>* out;
  } call{&text, &result};
  pthread_t thread;
  const int rc = pthread_create(
      &thread, &attr,
      [](void* arg) -> void* {
        auto* c = static_cast<Call*>(arg);
        *c->out = std::make_unique<PgResult>(*c->text);
        return nullptr;
      },
      &call);
  pthread_attr_destroy(&attr);
  if (rc != 0) throw ParseError({}, "the statement is too large to parse (" + std::to_string(text.size()) + " bytes)");
  pthread_join(thread, nullptr);
  return result;
}

// How deep the parse tree's JSON nests, and the first byte past the depth limit; a
// linear scan (strings skipped), so that no recursive stage after it (AST builder,
// binder, optimiser, planner, expression compiler) sees a tree deeper than the limit.
// The left operand of a set operation ("larg") adds no depth: the AST builder walks a
// chain of them iteratively and balances UNION chains (ast_builder.cpp).
std::size_t first_too_deep(const std::string& json, int limit) {
  static constexpr std::string_view kLeftOperand = "\"larg\":";
  int depth = 0;
  std::vector<bool> counted;  // per open bracket: whether it added to depth
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '"') {
      for (++i; i < json.size() && json[i] != '"'; ++i)
        if (json[i] == '\\') ++i;
    } else if (c == '{' || c == '[') {
      const bool left_operand = c == '{' && i >= kLeftOperand.size() &&
                                std::string_view(json).substr(i - kLeftOperand.size(), kLeftOperand.size()) == kLeftOperand;
      counted.push_back(!left_operand);
      if (!left_operand && ++depth > limit) return i;
    } else if (c == '}' || c == ']') {
      if (!counted.empty()) {
        depth -= counted.back() ? 1 : 0;
        counted.pop_back();
      }
    }
  }
  return std::string::npos;
}

}  // namespace

std::string Frontend::run_postgres(preparse::Rewritten& text, const preparse::Lexed& lexed) {
  for (int anonymous = 0;; ++anonymous) {
    auto parsed = parse_with_enough_stack(text.text.text);
    PgResult& res = *parsed;
    if (!res.r.error) {
      // About 1 500 levels of expression nesting (a `+` chain of 1 500 terms, CAST 1 500
      // deep, 1 000 nested ARRAYs): PostgreSQL's max_stack_depth idea, as a bound on the
      // tree every later stage walks recursively.
      constexpr int kMaxJsonDepth = 3200;
      const std::string tree = res.r.parse_tree;
      if (auto at = first_too_deep(tree, kMaxJsonDepth); at != std::string::npos) {
        // The statement's position of the node where the limit was passed ("location"
        // is a byte offset of the text PostgreSQL parsed).
        SourcePosition pos = start_of(lexed, 0);
        auto loc = tree.find("\"location\":", at);
        if (loc != std::string::npos) {
          long offset = std::strtol(tree.c_str() + loc + 11, nullptr, 10);
          if (offset >= 0 && static_cast<std::size_t>(offset) <= text.text.text.size())
            pos = map_.position(text.text.original_offset(static_cast<std::size_t>(offset)));
        }
        throw ParseError(pos, "the statement nests too deeply (expressions, types or set operations more than "
                              "about 1500 levels deep); split it up, e.g. into views");
      }
      return tree;
    }
    const PgQueryError* err = res.r.error;
    size_t at = err->cursorpos > 0 ? byte_offset_of_character(text.text.text, err->cursorpos) : text.text.text.size();
    std::string raw = err->message ? err->message : "";
    if (raw.find("in FROM must have an alias") != std::string::npos && anonymous < 1000 &&
        add_missing_alias(text, at, anonymous))
      continue;
    uint32_t orig = text.text.original_offset(at);
    std::string message = err->message ? err->message : "syntax error";
    // PostgreSQL quotes the token of the rewritten text; name the one the user wrote.
    const std::string near = "at or near \"";
    size_t q = message.find(near);
    if (q != std::string::npos) {
      for (const auto& t : lexed.tokens)
        if (t.origin == orig && t.kind != preparse::TokenKind::Hint) {
          message = message.substr(0, q) + near + t.text + "\"";
          break;
        }
    }
    throw ParseError(map_.position(orig), message);
  }
}

ast::ExprPtr Frontend::parse_expression(const preparse::Lexed& lexed, size_t begin, size_t end) {
  TokenCursor c(lexed, begin, end, map_);
  if (c.at_end()) c.fail_expected("an expression");
  preparse::Rewritten body = preparse::rewrite_for_postgres(lexed, begin, end, map_, placeholders_, *this);
  // "SELECT " maps to the expression's first byte.
  preparse::Rewritten text;
  text.text.origin = {body.text.original_offset(0)};
  text.text.append("SELECT ", body.text.original_offset(0));
  uint32_t shift = static_cast<uint32_t>(text.text.text.size());
  text.text.append_from(body.text, 0, body.text.text.size());
  for (auto& [offset, spelling] : body.spellings) text.spellings[offset + shift] = spelling;
  std::string json = run_postgres(text, lexed);
  return build_expression(json, PgContext{text, map_, placeholders_, start_of(lexed, begin)});
}

ast::QueryPtr Frontend::parse_query(const preparse::Lexed& lexed, size_t begin, size_t end) {
  TokenCursor c(lexed, begin, end, map_);
  if (c.at_end()) c.fail_expected("a query");
  preparse::Rewritten text = preparse::rewrite_for_postgres(lexed, begin, end, map_, placeholders_, *this);
  std::string json = run_postgres(text, lexed);
  std::string kind = statement_node_name(json);
  if (kind != "SelectStmt") throw ParseError(start_of(lexed, begin), "expected a query (SELECT, VALUES or WITH)");
  return build_query(json, PgContext{text, map_, placeholders_, start_of(lexed, begin)});
}

std::string Frontend::postgres_statement_kind(const preparse::Lexed& lexed, size_t begin, size_t end) {
  preparse::Rewritten text = preparse::rewrite_for_postgres(lexed, begin, end, map_, placeholders_, *this);
  return statement_node_name(run_postgres(text, lexed));
}

void Frontend::check_hints_used() const {
  for (const auto& t : lexed_.tokens)
    if (t.kind == preparse::TokenKind::Hint && !placeholders_.used_hints.count(t.origin))
      throw TranslationError(map_.position(t.origin),
                             "a /*+ OPTIONS(...) */ hint is only supported directly after a table name");
  for (const auto& [origin, expr] : placeholders_.system_time)
    if (!placeholders_.used_system_time.count(origin))
      throw TranslationError(map_.position(origin), "FOR SYSTEM_TIME AS OF is only supported after a table name in FROM");
}

}  // namespace detail

ast::Script parse(std::string_view sql) {
  metrics::sql::StageTimer timer(metrics::sql::counters().parse);
  detail::Frontend fe(sql);
  ast::Script script = detail::parse_statements(fe);
  fe.check_hints_used();
  return script;
}

ast::ExprPtr parse_expression(std::string_view sql) {
  detail::Frontend fe(sql);
  ast::ExprPtr e = fe.parse_expression(fe.lexed(), 0, fe.lexed().tokens.size());
  fe.check_hints_used();
  return e;
}

ast::QueryPtr parse_query(std::string_view sql) {
  detail::Frontend fe(sql);
  size_t n = fe.lexed().tokens.size();
  while (n > 0 && fe.lexed().tokens[n - 1].sym(";")) --n;
  ast::QueryPtr q = fe.parse_query(fe.lexed(), 0, n);
  fe.check_hints_used();
  return q;
}

}  // namespace clink::sql
