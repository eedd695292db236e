#include "token_cursor.hpp"

#include <cctype>
#include <limits>

namespace clink::sql::detail {

namespace {
std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}
}  // namespace

bool matches(const Token& t, std::string_view k) {
  if (t.kind == TokenKind::Symbol) return t.text == k;
  return t.is(k);
}

std::string describe(const Token& t) {
  switch (t.kind) {
    case TokenKind::End: return t.text.empty() ? "end of input" : "'" + t.text + "'";
    case TokenKind::String: return "string '" + t.value + "'";
    default: return "'" + t.text + "'";
  }
}

TokenCursor::TokenCursor(const Lexed& lexed, size_t begin, size_t end, const preparse::SourceMap& map)
    : lexed_(lexed), begin_(begin), end_(std::min(end, lexed.tokens.size())), i_(begin), map_(map) {
  end_token_.kind = TokenKind::End;
  if (end_ < lexed.tokens.size()) {
    // A sub-range ends at a real token (')' or ','): name it and point at it in errors.
    end_token_.text = lexed.tokens[end_].text;
    end_token_.origin = lexed.tokens[end_].origin;
  } else if (end_ > begin_) {
    end_token_.origin = lexed.text.original_offset(lexed.tokens[end_ - 1].end);
  } else if (begin_ < lexed.tokens.size()) {
    end_token_.origin = lexed.tokens[begin_].origin;
  } else {
    end_token_.origin = lexed.text.original_offset(lexed.text.text.size());
  }
}

size_t TokenCursor::index_ahead(size_t ahead) const {
  size_t i = i_;
  for (;;) {
    while (i < end_ && lexed_.tokens[i].kind == TokenKind::Hint) ++i;
    if (i >= end_ || ahead == 0) return std::min(i, end_);
    --ahead;
    ++i;
  }
}

const Token& TokenCursor::peek(size_t ahead) const {
  size_t i = index_ahead(ahead);
  return i < end_ ? lexed_.tokens[i] : end_token_;
}

bool TokenCursor::peek_is(std::string_view k, size_t ahead) const { return matches(peek(ahead), k); }

const Token& TokenCursor::next() {
  size_t i = index_ahead(0);
  if (i >= end_) {
    i_ = end_;
    return end_token_;
  }
  i_ = i + 1;
  return lexed_.tokens[i];
}

bool TokenCursor::accept(std::string_view k) {
  if (!peek_is(k)) return false;
  next();
  return true;
}

bool TokenCursor::accept_all(std::initializer_list<std::string_view> seq) {
  size_t n = 0;
  for (auto k : seq)
    if (!peek_is(k, n++)) return false;
  for (size_t j = 0; j < seq.size(); ++j) next();
  return true;
}

const Token& TokenCursor::expect(std::string_view k) {
  if (!peek_is(k)) fail_expected("'" + std::string(k) + "'");
  return next();
}

std::vector<const Token*> TokenCursor::hints_here() {
  std::vector<const Token*> out;
  while (i_ < end_ && lexed_.tokens[i_].kind == TokenKind::Hint) out.push_back(&lexed_.tokens[i_++]);
  return out;
}

std::string TokenCursor::identifier(std::string_view what) {
  const Token& t = peek();
  if (!t.word()) fail_expected(what);
  next();
  return t.value;
}

ast::QualifiedName TokenCursor::qualified_name(std::string_view what) {
  ast::QualifiedName name{identifier(what)};
  while (peek_is(".") && peek(1).word()) {
    next();
    name.push_back(identifier(what));
  }
  return name;
}

std::string TokenCursor::string_literal(std::string_view what) {
  const Token& t = peek();
  if (t.kind != TokenKind::String) fail_expected(what);
  next();
  return t.value;
}

int TokenCursor::integer(std::string_view what) {
  const Token& t = peek();
  // Up to INT_MAX: VARCHAR(2147483647) is how Flink spells STRING (SHOW CREATE TABLE).
  if (t.kind != TokenKind::Number || t.text.find_first_not_of("0123456789") != std::string::npos ||
      t.text.size() > 10 || std::stoll(t.text) > std::numeric_limits<int>::max())
    fail_expected(what);
  next();
  return std::stoi(t.text);
}

size_t TokenCursor::matching_close(size_t open) const {
  int depth = 0;
  for (size_t i = open; i < lexed_.tokens.size(); ++i) {
    const Token& t = lexed_.tokens[i];
    if (t.sym("(") || t.sym("[")) ++depth;
    if (t.sym(")") || t.sym("]")) {
      if (--depth == 0) return i;
    }
  }
  throw ParseError(map_.position(lexed_.tokens[open].origin), "'" + lexed_.tokens[open].text + "' is never closed");
}

size_t TokenCursor::find_top_level(std::initializer_list<std::string_view> stops) const {
  int depth = 0;
  for (size_t i = i_; i < end_; ++i) {
    const Token& t = lexed_.tokens[i];
    if (t.kind == TokenKind::Hint) continue;
    if (depth == 0)
      for (auto s : stops)
        if (matches(t, s)) return i;
    if (t.sym("(") || t.sym("[")) ++depth;
    if (t.sym(")") || t.sym("]")) --depth;
  }
  return end_;
}

void TokenCursor::fail(const Token& at, const std::string& message) const {
  throw ParseError(position(at), message);
}

void TokenCursor::fail_expected(std::string_view what) const {
  fail(peek(), "expected " + std::string(what) + " but found " + describe(peek()));
}

void TokenCursor::unsupported(const Token& at, const std::string& message) const {
  throw TranslationError(position(at), message);
}

// ---------------------------------------------------------------- properties

namespace {
std::string property_value(TokenCursor& c) {
  const Token& t = c.peek();
  if (t.kind == TokenKind::String) return c.string_literal("a value");
  if (t.kind == TokenKind::Number) {
    c.next();
    return t.text;
  }
  if (c.peek_is("-") && c.peek(1).kind == TokenKind::Number) {
    c.next();
    return "-" + c.next().text;
  }
  if (t.word()) {
    std::string v = c.identifier("a value");
    while (c.peek_is(".") && c.peek(1).word()) {
      c.next();
      v += "." + c.identifier("a value");
    }
    return v;
  }
  c.fail_expected("a value");
}
}  // namespace

ast::Property parse_property(TokenCursor& c) {
  ast::Property p;
  p.pos = c.position();
  if (c.peek().kind == TokenKind::String) {
    p.key = c.string_literal("an option key");
  } else {
    p.key = c.identifier("an option key (a quoted string)");
    while (c.peek_is(".") && c.peek(1).word()) {
      c.next();
      p.key += "." + c.identifier("an option key");
    }
  }
  c.expect("=");
  p.value = property_value(c);
  return p;
}

std::vector<ast::Property> parse_property_list(TokenCursor& c) {
  c.expect("(");
  std::vector<ast::Property> out;
  if (c.accept(")")) return out;
  do out.push_back(parse_property(c));
  while (c.accept(","));
  c.expect(")");
  return out;
}

// ---------------------------------------------------------------- intervals

std::string time_unit(const Token& w) {
  if (w.kind != TokenKind::Word) return "";
  static const char* kUnits[] = {"YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND",
                                 "MILLISECOND", "MICROSECOND", "NANOSECOND", "MILLENNIUM", "CENTURY",
                                 "DECADE", "DOW", "DOY", "ISODOW", "ISOYEAR", "EPOCH"};
  std::string u = upper(w.text);
  for (const char* unit : kUnits) {
    std::string s(unit);
    if (u == s || u == s + "S") return s;
  }
  if (u == "CENTURIES") return "CENTURY";
  if (u == "MILLENNIA") return "MILLENNIUM";
  return "";
}

namespace {
// YEAR .. SECOND and the sub-second units are the units an INTERVAL literal takes.
bool interval_unit(const std::string& u) {
  return u == "YEAR" || u == "QUARTER" || u == "MONTH" || u == "WEEK" || u == "DAY" || u == "HOUR" ||
         u == "MINUTE" || u == "SECOND" || u == "MILLISECOND" || u == "MICROSECOND" || u == "NANOSECOND";
}

std::optional<int> optional_precision(TokenCursor& c) {
  if (!c.peek_is("(")) return std::nullopt;
  c.next();
  int p = c.integer("a precision");
  c.expect(")");
  return p;
}

std::string expect_interval_unit(TokenCursor& c) {
  std::string u = time_unit(c.peek());
  if (u.empty() || !interval_unit(u)) c.fail_expected("a time unit (YEAR, MONTH, DAY, HOUR, MINUTE, SECOND, ...)");
  c.next();
  return u;
}
}  // namespace

ast::ExprPtr parse_interval_literal(TokenCursor& c) {
  SourcePosition pos = c.position();
  c.expect("INTERVAL");
  ast::IntervalLiteral lit;
  if (c.accept("-")) {
    lit.negative = true;
  } else {
    c.accept("+");
  }
  lit.value = c.string_literal("the interval value (a quoted string)");
  lit.from_unit = expect_interval_unit(c);
  lit.from_precision = optional_precision(c);
  if (c.accept("TO")) {
    lit.to_unit = expect_interval_unit(c);
    lit.to_precision = optional_precision(c);
  }
  return ast::make_expr(pos, std::move(lit));
}

}  // namespace clink::sql::detail
