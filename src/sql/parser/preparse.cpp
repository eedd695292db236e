#include "clink/sql/parser/preparse.hpp"

#include <algorithm>
#include <cctype>

#include "match_recognize_parse.hpp"
#include "ptf_call_parse.hpp"
#include "token_cursor.hpp"

// PostgreSQL's keyword table, exported by libpg_query (same grammar version as the parser).
extern "C" {
struct ScanKeywordList;
extern const ScanKeywordList ScanKeywords;
int ScanKeywordLookup(const char* text, const ScanKeywordList* keywords);
extern const uint8_t ScanKeywordCategories[];  // 0 = UNRESERVED_KEYWORD (parser/keywords.h)
}

namespace clink::sql::preparse {

MappedText MappedText::identity(std::string_view text) {
  MappedText m;
  m.text.assign(text);
  m.origin.resize(text.size() + 1);
  for (size_t i = 0; i <= text.size(); ++i) m.origin[i] = static_cast<uint32_t>(i);
  return m;
}

void MappedText::append(std::string_view s, uint32_t orig) {
  origin.pop_back();
  text.append(s);
  origin.insert(origin.end(), s.size(), orig);
  origin.push_back(orig);
}

void MappedText::append_from(const MappedText& from, size_t b, size_t e) {
  origin.pop_back();
  text.append(from.text, b, e - b);
  origin.insert(origin.end(), from.origin.begin() + static_cast<std::ptrdiff_t>(b),
                from.origin.begin() + static_cast<std::ptrdiff_t>(e));
  origin.push_back(from.original_offset(e));
}

SourceMap::SourceMap(std::string_view original) : original_(original) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < original.size(); ++i) {
    if (original[i] == '\n') line_starts_.push_back(i + 1);
    if ((static_cast<unsigned char>(original[i]) & 0xC0) == 0x80) continuation_bytes_.push_back(i);
  }
}

SourcePosition SourceMap::position(size_t offset) const {
  offset = std::min(offset, original_.size());
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  size_t line = static_cast<size_t>(it - line_starts_.begin());  // 1-based
  size_t start = line_starts_[line - 1];
  // Code points: the bytes from the line's start less the continuation bytes among them.
  const auto continuations = std::lower_bound(continuation_bytes_.begin(), continuation_bytes_.end(), offset) -
                             std::lower_bound(continuation_bytes_.begin(), continuation_bytes_.end(), start);
  return {static_cast<int>(line), static_cast<int>(offset - start - static_cast<size_t>(continuations)) + 1};
}

bool Token::is(std::string_view keyword) const {
  if (kind != TokenKind::Word || text.size() != keyword.size()) return false;
  for (size_t i = 0; i < text.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(text[i])) != std::toupper(static_cast<unsigned char>(keyword[i])))
      return false;
  return true;
}

bool is_postgres_keyword(std::string_view word) {
  std::string w(word);
  return ScanKeywordLookup(w.c_str(), &ScanKeywords) >= 0;
}

bool is_reserved_keyword(std::string_view word) {
  std::string w(word);
  int index = ScanKeywordLookup(w.c_str(), &ScanKeywords);
  return index >= 0 && ScanKeywordCategories[index] != 0;
}

namespace {

bool word_start(unsigned char c) { return std::isalpha(c) || c == '_' || c >= 0x80; }
bool word_char(unsigned char c) { return std::isalnum(c) || c == '_' || c == '$' || c >= 0x80; }

}  // namespace

Lexed tokenize(MappedText input, const SourceMap& map) {
  Lexed out;
  out.text = std::move(input);
  const std::string& s = out.text.text;
  size_t i = 0, n = s.size();
  auto fail = [&](size_t at, const std::string& msg) -> void {
    throw ParseError(map.position(out.text.original_offset(at)), msg);
  };
  auto push = [&](TokenKind kind, size_t b, size_t e, std::string value) {
    Token t;
    t.kind = kind;
    t.text = s.substr(b, e - b);
    t.value = std::move(value);
    t.begin = static_cast<uint32_t>(b);
    t.end = static_cast<uint32_t>(e);
    t.origin = out.text.original_offset(b);
    out.tokens.push_back(std::move(t));
  };
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (std::isspace(c)) {
      ++i;
    } else if (c == '-' && i + 1 < n && s[i + 1] == '-') {
      while (i < n && s[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      size_t close = s.find("*/", i + 2);
      if (close == std::string::npos) fail(i, "unterminated comment");
      if (i + 2 < n && s[i + 2] == '+') push(TokenKind::Hint, i, close + 2, s.substr(i + 3, close - i - 3));
      i = close + 2;
    } else if (c == '\'' || c == '"' || c == '`') {
      char q = static_cast<char>(c);
      std::string value;
      size_t j = i + 1;
      for (;;) {
        if (j >= n) fail(i, q == '\'' ? "unterminated string literal" : "unterminated quoted identifier");
        if (s[j] == q) {
          if (j + 1 < n && s[j + 1] == q) {
            value += q;
            j += 2;
            continue;
          }
          break;
        }
        value += s[j++];
      }
      if (q != '\'' && value.empty()) fail(i, "empty quoted identifier");
      push(q == '\'' ? TokenKind::String : TokenKind::QuotedWord, i, j + 1, value);
      out.tokens.back().backtick = q == '`';
      i = j + 1;
    } else if (std::isdigit(c) || (c == '.' && i + 1 < n && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      size_t j = i;
      while (j < n && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
      if (j < n && s[j] == '.') {
        ++j;
        while (j < n && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
      }
      if (j < n && (s[j] == 'e' || s[j] == 'E')) {
        size_t k = j + 1;
        if (k < n && (s[k] == '+' || s[k] == '-')) ++k;
        if (k < n && std::isdigit(static_cast<unsigned char>(s[k]))) {
          j = k;
          while (j < n && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
        }
      }
      push(TokenKind::Number, i, j, s.substr(i, j - i));
      i = j;
    } else if (word_start(c)) {
      size_t j = i + 1;
      while (j < n && word_char(static_cast<unsigned char>(s[j]))) ++j;
      push(TokenKind::Word, i, j, s.substr(i, j - i));
      i = j;
    } else {
      static const char* kTwo[] = {"<>", "<=", ">=", "!=", "||", "=>", "::"};
      size_t len = 1;
      for (const char* op : kTwo)
        if (s.compare(i, 2, op) == 0) len = 2;
      push(TokenKind::Symbol, i, i + len, s.substr(i, len));
      i += len;
    }
  }
  return out;
}

// ---------------------------------------------------------------- rewriting

namespace {

using detail::TokenCursor;

const char* const kWindowFunctions[] = {"TUMBLE", "HOP", "CUMULATE", "SESSION"};

// The rewritten text stands in placeholders named __clink_... for what PostgreSQL's grammar
// cannot parse; a name of the script spelled like one would be taken for it.
bool is_reserved_name(std::string_view name) {
  constexpr std::string_view kPrefix = "__clink_";
  if (name.size() < kPrefix.size()) return false;
  for (std::size_t i = 0; i < kPrefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(name[i])) != kPrefix[i]) return false;
  return true;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

class Rewriter {
 public:
  Rewriter(const Lexed& lx, const SourceMap& map, Placeholders& ph, ExpressionSource& exprs)
      : lx_(lx), map_(map), ph_(ph), exprs_(exprs) {}

  Rewritten run(size_t b, size_t e) {
    rewrite(b, e);
    return std::move(out_);
  }

 private:
  const Token& tok(size_t i) const { return lx_.tokens[i]; }

  void separate(uint32_t orig) {
    if (!out_.text.text.empty()) out_.text.append(" ", orig);
  }
  void emit(std::string_view s, uint32_t orig) {
    separate(orig);
    out_.text.append(s, orig);
  }
  void emit_token(const Token& t) {
    separate(t.origin);
    if (t.kind == TokenKind::Number) out_.spellings[static_cast<uint32_t>(out_.text.text.size())] = t.text;
    out_.text.append_from(lx_.text, t.begin, t.end);
  }
  void emit_identifier(const Token& t) {
    separate(t.origin);
    out_.spellings[static_cast<uint32_t>(out_.text.text.size())] = t.value;
    if (t.kind == TokenKind::Word && is_postgres_keyword(t.text)) {
      out_.text.append_from(lx_.text, t.begin, t.end);
      return;
    }
    std::string quoted = "\"";
    for (char c : t.value) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    quoted += '"';
    out_.text.append(quoted, t.origin);
  }

  void rewrite(size_t b, size_t e) {
    TokenCursor cur(lx_, b, e, map_);
    size_t i = b;
    while (i < e) {
      const Token& t = tok(i);
      cur.seek(i);
      if (t.kind == TokenKind::Hint) {
        attach_hint(b, i);
        ++i;
        continue;
      }
      if (t.word() && is_reserved_name(t.kind == TokenKind::Word ? t.text : t.value))
        cur.fail(t, "'" + (t.kind == TokenKind::Word ? t.text : t.value) +
                        "': names starting with __clink_ are reserved for clink's own use");
      if (t.kind != TokenKind::Word) {
        if (t.kind == TokenKind::QuotedWord) {
          emit_identifier(t);
        } else {
          emit_token(t);
        }
        ++i;
        continue;
      }
      const Token& next = cur.peek(1);
      if ((t.is("CAST") || t.is("TRY_CAST")) && next.sym("(")) {
        i = rewrite_cast(cur, e);
      } else if (t.is("TABLE") && next.sym("(")) {
        i = rewrite_table_function(cur);
      } else if (t.is("ML_PREDICT") && next.sym("(") && cur.peek_is("TABLE", 2)) {
        // ML_PREDICT(TABLE t, MODEL m, DESCRIPTOR(c, ...) [, config]) written straight in FROM.
        size_t open = cur.index_ahead(1);
        i = emit_table_function(t, "ML_PREDICT", open, cur.matching_close(open));
      } else if (t.is("INTERVAL") && (next.kind == TokenKind::String || next.sym("-") || next.sym("+"))) {
        ph_.literals.push_back(detail::parse_interval_literal(cur));
        emit("__clink_lit_" + std::to_string(ph_.literals.size() - 1), t.origin);
        i = cur.index();
      } else if ((t.is("DATE") || t.is("TIME") || t.is("TIMESTAMP")) && next.kind == TokenKind::String) {
        ast::Literal lit;
        lit.kind = t.is("DATE") ? ast::Literal::Kind::Date
                   : t.is("TIME") ? ast::Literal::Kind::Time : ast::Literal::Kind::Timestamp;
        lit.text = next.value;
        ph_.literals.push_back(ast::make_expr(map_.position(t.origin), lit));
        emit("__clink_lit_" + std::to_string(ph_.literals.size() - 1), t.origin);
        cur.next();
        cur.next();
        i = cur.index();
      } else if (t.is("X") && next.kind == TokenKind::String && next.begin == t.end) {
        if (next.value.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos || next.value.size() % 2 != 0)
          cur.fail(next, "a binary literal X'...' needs an even number of hex digits");
        ph_.literals.push_back(ast::make_expr(map_.position(t.origin), ast::Literal{ast::Literal::Kind::Binary, next.value}));
        emit("__clink_lit_" + std::to_string(ph_.literals.size() - 1), t.origin);
        i = cur.index_ahead(2);
      } else if ((t.is("MAP") || t.is("ARRAY")) && next.sym("[")) {
        // MAP[k, v] is ARRAY[k, v] to PostgreSQL; a subscript right after the constructor
        // needs parentheses there: (ARRAY[1, 2])[1].
        size_t open = cur.index_ahead(1);
        size_t close = cur.matching_close(open);
        TokenCursor after(lx_, close + 1, e, map_);
        bool subscripted = after.peek_is("[");
        if (t.is("MAP")) ph_.map_constructors.insert(t.origin);
        if (subscripted) emit("(", t.origin);
        emit("ARRAY", t.origin);
        rewrite(open, close + 1);
        if (subscripted) emit(")", tok(close).origin);
        i = close + 1;
      } else if ((t.is("JSON_VALUE") || t.is("JSON_QUERY") || t.is("JSON_EXISTS")) && next.sym("(")) {
        i = rewrite_json_function(cur);
      } else if ((t.is("JSON_OBJECT") || t.is("JSON_ARRAY")) && next.sym("(")) {
        i = rewrite_json_constructor(cur);
      } else if (t.is("ARRAY_AGG") && next.sym("(")) {
        i = rewrite_null_treatment(cur);
      } else if ((t.is("FLOOR") || t.is("CEIL") || t.is("CEILING")) && next.sym("(")) {
        i = rewrite_floor_ceil(cur);
      } else if (t.is("IS") && (next.is("JSON") || (next.is("NOT") && cur.peek_is("JSON", 2)))) {
        // x IS [NOT] JSON [VALUE | SCALAR | ARRAY | OBJECT]: PostgreSQL 15 sees IS [NOT] NULL.
        cur.next();
        bool negated = cur.accept("NOT");
        cur.next();
        std::string kind = "VALUE";
        for (const char* k : {"VALUE", "SCALAR", "ARRAY", "OBJECT"})
          if (cur.accept(k)) kind = k;
        ph_.is_json[t.origin] = kind;
        emit("IS", t.origin);
        if (negated) emit("NOT", t.origin);
        emit("NULL", t.origin);
        i = cur.index_ahead(0);
      } else if (t.is("LATERAL") && next.is("TABLE") && cur.peek_is("(", 2) && cur.peek_is("VECTOR_SEARCH", 3) &&
                 cur.peek_is("(", 4)) {
        // Flink's LATERAL TABLE(VECTOR_SEARCH(TABLE vt, ...)): the search over the FROM item
        // on its left, which the binder takes as its input (docs/vector-search.md).
        cur.next();
        i = rewrite_table_function(cur);
      } else if (t.is("LATERAL") && next.is("TABLE") && cur.peek_is("(", 2)) {
        // LATERAL TABLE(f(args)): PostgreSQL writes the table function as LATERAL f(args).
        size_t open = cur.index_ahead(2);
        size_t close = cur.matching_close(open);
        if (close >= e) cur.fail(cur.peek(2), "missing ')' for LATERAL TABLE(");
        emit("LATERAL", t.origin);
        rewrite(open + 1, close);
        i = close + 1;
      } else if (t.is("VECTOR_SEARCH") && next.sym("(")) {
        // VECTOR_SEARCH(TABLE t, ...) written straight in FROM (the seed's form).
        size_t open = cur.index_ahead(1);
        i = emit_table_function(t, "VECTOR_SEARCH", open, cur.matching_close(open));
      } else if (next.sym("(") && detail::starts_process_table_function_call(cur)) {
        // f(TABLE t PARTITION BY k, ...): a process table function -> __clink_tvf_N.
        size_t open = cur.index_ahead(1);
        i = emit_table_function(t, t.value, open, cur.matching_close(open)) ;
      } else if (t.is("MATCH_RECOGNIZE") && next.sym("(")) {
        // `input MATCH_RECOGNIZE (...) [AS] alias` -> `input "__clink_mr_N"` (an alias to
        // PostgreSQL, which the AST builder turns back into the clause over the input).
        Placeholders::MatchRecognizeClause clause;
        i = detail::parse_match_recognize(cur, exprs_, clause);
        ph_.match_recognize.push_back(std::move(clause));
        std::string name = "__clink_mr_" + std::to_string(ph_.match_recognize.size() - 1);
        separate(t.origin);
        out_.spellings[static_cast<uint32_t>(out_.text.text.size())] = name;
        out_.text.append("\"" + name + "\"", t.origin);
      } else if (t.is("FOR") && next.is("SYSTEM_TIME")) {
        i = rewrite_system_time(cur, b);
      } else {
        emit_identifier(t);
        ++i;
      }
    }
  }

  // `t [/*+ hints */] FOR SYSTEM_TIME AS OF <expr> [AS] alias` (a temporal join's versioned
  // side): PostgreSQL sees `t [AS] alias`; the expression is remembered for the table name.
  size_t rewrite_system_time(TokenCursor& cur, size_t range_begin) {
    const size_t for_index = cur.index();
    const Token& for_kw = cur.next();
    cur.next();  // SYSTEM_TIME
    cur.expect("AS");
    cur.expect("OF");
    // The table name: the (dotted) name before FOR, hints skipped.
    size_t name_end = for_index;
    while (name_end > range_begin && tok(name_end - 1).kind == TokenKind::Hint) --name_end;
    if (name_end == range_begin || !tok(name_end - 1).word())
      cur.fail(for_kw, "FOR SYSTEM_TIME AS OF must follow a table name");
    size_t start = name_end - 1;
    while (start >= range_begin + 2 && tok(start - 1).sym(".") && tok(start - 2).word()) start -= 2;
    // The expression runs to the alias or the clause after it.
    static const char* const kStops[] = {"AS", "ON", "USING", "WHERE", "JOIN", "LEFT", "RIGHT", "FULL", "INNER",
                                         "CROSS", "NATURAL", "GROUP", "ORDER", "HAVING", "WINDOW", "UNION",
                                         "LIMIT", "EXCEPT", "INTERSECT", "FETCH", "OFFSET", ",", ")", ";"};
    const size_t b = cur.index_ahead(0);
    size_t e = b;
    int depth = 0;
    for (; e < cur.end_index(); ++e) {
      const Token& x = tok(e);
      if (x.kind == TokenKind::Hint) continue;
      if (depth == 0 && std::any_of(std::begin(kStops), std::end(kStops), [&](const char* k) { return x.is(k) || x.sym(k); }))
        break;
      if (x.sym("(") || x.sym("[")) ++depth;
      if (x.sym(")") || x.sym("]")) --depth;
    }
    // `... AS OF o.ts r`: an alias without AS follows a complete operand; a keyword there
    // ends the expression instead (`INTERVAL '1' SECOND`).
    const bool explicit_alias = e < cur.end_index() && tok(e).is("AS");
    if (!explicit_alias && e >= b + 2 &&
        (tok(e - 1).kind == TokenKind::QuotedWord ||
         (tok(e - 1).kind == TokenKind::Word && !is_postgres_keyword(tok(e - 1).text))) &&
        (tok(e - 2).word() || tok(e - 2).kind == TokenKind::String || tok(e - 2).kind == TokenKind::Number ||
         tok(e - 2).sym(")")))
      --e;
    if (e == b) cur.fail(cur.peek(), "expected an expression after FOR SYSTEM_TIME AS OF but found " + detail::describe(cur.peek()));
    ph_.system_time[tok(start).origin] = exprs_.parse_expression(lx_, b, e);
    return e;
  }

  // CAST(x AS type) / TRY_CAST(x AS type): the type becomes __clink_ctype_N.
  size_t rewrite_cast(TokenCursor& cur, size_t e) {
    const Token& name = cur.next();
    size_t open = cur.index_ahead(0);
    size_t close = cur.matching_close(open);
    if (close >= e) cur.fail(cur.peek(), "missing ')' for " + upper(name.text));
    TokenCursor inner(lx_, open + 1, close, map_);
    size_t as = inner.find_top_level({"AS"});
    if (as == close) cur.fail(tok(close), "expected AS <type> in " + upper(name.text));
    if (name.is("TRY_CAST")) ph_.try_casts.insert(name.origin);
    emit("CAST", name.origin);
    emit("(", tok(open).origin);
    rewrite(open + 1, as);
    emit("AS", tok(as).origin);
    TokenCursor type_cursor(lx_, as + 1, close, map_);
    if (type_cursor.at_end()) type_cursor.fail_expected("a data type");
    ph_.types.push_back(detail::parse_type(type_cursor));
    if (!type_cursor.at_end()) type_cursor.fail(type_cursor.peek(), "unexpected " + detail::describe(type_cursor.peek()) + " after the data type");
    emit("__clink_ctype_" + std::to_string(ph_.types.size() - 1), tok(as + 1).origin);
    emit(")", tok(close).origin);
    return close + 1;
  }

  // JSON_VALUE(j, path RETURNING t ... ON EMPTY ...): PostgreSQL sees JSON_VALUE(j, path);
  // the clauses are remembered.
  size_t rewrite_json_function(TokenCursor& cur) {
    const Token& name = tok(cur.index());
    size_t open = cur.index_ahead(1);
    size_t close = cur.matching_close(open);
    TokenCursor args(lx_, open + 1, close, map_);
    size_t comma = args.find_top_level({","});
    size_t clauses = close;
    if (comma < close) {
      // The clauses follow the path: the first top-level clause keyword after the comma.
      TokenCursor scan(lx_, comma + 1, close, map_);
      int depth = 0;
      while (!scan.at_end()) {
        if (depth == 0 && detail::at_json_clause(scan)) {
          clauses = scan.index_ahead(0);
          break;
        }
        if (scan.peek_is("(") || scan.peek_is("[")) ++depth;
        if (scan.peek_is(")") || scan.peek_is("]")) --depth;
        scan.next();
      }
    }
    if (clauses == close) {
      emit_identifier(name);
      return cur.index() + 1;
    }
    TokenCursor clause_cursor(lx_, clauses, close, map_);
    ph_.json_clauses[name.origin] =
        std::make_shared<const ast::JsonClauses>(detail::parse_json_clauses(clause_cursor, exprs_));
    emit_identifier(name);
    emit("(", tok(open).origin);
    rewrite(open + 1, clauses);
    emit(")", tok(close).origin);
    return close + 1;
  }

  // JSON_OBJECT([KEY] k VALUE v, ... [{NULL | ABSENT} ON NULL]) / JSON_ARRAY(v, ... [... ON
  // NULL]): PostgreSQL 15 has no grammar for them; it sees JSON_OBJECT(k, v, ...) and the
  // ON NULL choice is remembered.
  size_t rewrite_json_constructor(TokenCursor& cur) {
    const Token& name = tok(cur.index());
    const bool object = name.is("JSON_OBJECT");
    size_t open = cur.index_ahead(1);
    size_t close = cur.matching_close(open);
    std::vector<std::pair<size_t, size_t>> members;  // token ranges between top-level commas
    size_t start = open + 1;
    int depth = 0;
    for (size_t k = open + 1; k < close; ++k) {
      const Token& x = tok(k);
      if (x.sym("(") || x.sym("[")) ++depth;
      else if (x.sym(")") || x.sym("]")) --depth;
      else if (depth == 0 && x.sym(",")) {
        members.emplace_back(start, k);
        start = k + 1;
      }
    }
    members.emplace_back(start, close);
    auto& last = members.back();
    if (last.second - last.first >= 3 && tok(last.second - 1).is("NULL") && tok(last.second - 2).is("ON") &&
        (tok(last.second - 3).is("NULL") || tok(last.second - 3).is("ABSENT"))) {
      ph_.json_on_null[name.origin] = upper(tok(last.second - 3).text);
      last.second -= 3;
    }
    if (members.size() == 1 && members[0].first == members[0].second) members.clear();
    emit_identifier(name);
    emit("(", tok(open).origin);
    for (size_t m = 0; m < members.size(); ++m) {
      auto [b, e] = members[m];
      if (m > 0) emit(",", tok(b - 1).origin);
      if (b == e) cur.fail(tok(e), "expected a value in " + upper(name.text) + " but found " + detail::describe(tok(e)));
      size_t value = e;
      if (object) {
        TokenCursor member(lx_, b, e, map_);
        value = member.find_top_level({"VALUE"});
        if (value == e) value = member.find_top_level({":"});
      }
      if (value == e) {
        rewrite(b, e);
        continue;
      }
      ph_.json_key_value.insert(name.origin);
      if (tok(b).is("KEY") && b + 1 < value) ++b;
      if (b == value) cur.fail(tok(value), "expected a key before VALUE in JSON_OBJECT");
      if (value + 1 == e) cur.fail(tok(e), "expected a value after VALUE in JSON_OBJECT but found " + detail::describe(tok(e)));
      rewrite(b, value);
      emit(",", tok(value).origin);
      rewrite(value + 1, e);
    }
    emit(")", tok(close).origin);
    return close + 1;
  }

  // ARRAY_AGG(x {IGNORE | RESPECT} NULLS): PostgreSQL sees ARRAY_AGG(x); the choice is remembered.
  size_t rewrite_null_treatment(TokenCursor& cur) {
    const Token& name = tok(cur.index());
    size_t open = cur.index_ahead(1);
    size_t close = cur.matching_close(open);
    size_t end = close;
    if (close >= open + 3 && tok(close - 1).is("NULLS") && (tok(close - 2).is("IGNORE") || tok(close - 2).is("RESPECT"))) {
      ph_.null_treatment[name.origin] = upper(tok(close - 2).text);
      end = close - 2;
    }
    emit_identifier(name);
    emit("(", tok(open).origin);
    rewrite(open + 1, end);
    emit(")", tok(close).origin);
    return close + 1;
  }

  // FLOOR(x TO unit) / CEIL(x TO unit): PostgreSQL sees FLOOR(x); the unit is remembered.
  size_t rewrite_floor_ceil(TokenCursor& cur) {
    const Token& name = tok(cur.index());
    size_t open = cur.index_ahead(1);
    size_t close = cur.matching_close(open);
    TokenCursor inner(lx_, open + 1, close, map_);
    size_t to = inner.find_top_level({"TO"});
    if (to == close) {
      emit_identifier(name);
      return cur.index() + 1;
    }
    TokenCursor unit_cursor(lx_, to + 1, close, map_);
    const Token& unit = unit_cursor.next();
    std::string canonical = detail::time_unit(unit);
    if (canonical.empty()) unit_cursor.fail(unit, "expected a time unit after TO but found " + detail::describe(unit));
    if (!unit_cursor.at_end()) unit_cursor.fail(unit_cursor.peek(), "expected ')' but found " + detail::describe(unit_cursor.peek()));
    ph_.floor_ceil_units[name.origin] = canonical;
    emit_identifier(name);
    emit("(", tok(open).origin);
    rewrite(open + 1, to);
    emit(")", tok(close).origin);
    return close + 1;
  }

  // TABLE(TUMBLE(TABLE t, DESCRIPTOR(c), size)) -> __clink_tvf_N
  // GCC 12 reports a false -Wmaybe-uninitialized inside std::variant<...>'s move here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
  size_t rewrite_table_function(TokenCursor& cur) {
    const Token& table_kw = cur.next();
    size_t outer_open = cur.index_ahead(0);
    size_t outer_close = cur.matching_close(outer_open);
    cur.next();
    const Token& fn = cur.peek();
    if (!fn.word() || !cur.peek_is("(", 1))
      cur.unsupported(fn, "TABLE(...) in FROM supports only the window functions TUMBLE, HOP, CUMULATE and SESSION, "
                          "VECTOR_SEARCH, ML_PREDICT and process table functions");
    std::string fname = upper(fn.value);
    // TABLE(f(TABLE t PARTITION BY k)): a process table function in Flink's older spelling.
    const bool ptf = !detail::is_window_function_name(fname) && detail::starts_process_table_function_call(cur);
    if (!ptf && fname != "VECTOR_SEARCH" && fname != "ML_PREDICT" &&
        std::find(std::begin(kWindowFunctions), std::end(kWindowFunctions), fname) == std::end(kWindowFunctions))
      cur.unsupported(fn, "table function " + fn.value +
                              " is not supported (supported: TUMBLE, HOP, CUMULATE, SESSION, VECTOR_SEARCH, ML_PREDICT, "
                              "and process table functions with a TABLE argument)");
    cur.next();
    size_t inner_open = cur.index_ahead(0);
    size_t inner_close = cur.matching_close(inner_open);
    TokenCursor after(lx_, inner_close + 1, outer_close, map_);
    if (!after.at_end()) after.fail(after.peek(), "expected ')' but found " + detail::describe(after.peek()));
    emit_table_function(table_kw, ptf ? fn.value : fname, inner_open, inner_close);
    return outer_close + 1;
  }

  // The call `function(args)` (its parentheses at open / close) -> __clink_tvf_N; returns
  // the index after it.
  size_t emit_table_function(const Token& at, const std::string& fname, size_t inner_open, size_t inner_close) {
    TokenCursor cur(lx_, inner_open, inner_close + 1, map_);
    ast::WindowTvf tvf;
    tvf.function = fname;
    size_t arg_begin = inner_open + 1;
    while (arg_begin < inner_close) {
      TokenCursor range(lx_, arg_begin, inner_close, map_);
      size_t comma = range.find_top_level({","});
      tvf.args.push_back(parse_tvf_arg(arg_begin, comma));
      arg_begin = comma + 1;
      if (comma < inner_close && arg_begin >= inner_close) range.fail(tok(comma), "expected an argument after ','");
    }
    if (tvf.args.empty()) cur.fail(tok(inner_close), fname + " needs arguments");
    ph_.table_functions.push_back(
        ast::TableRef{map_.position(at.origin), ast::TableRef::Node(std::in_place_type<ast::WindowTvf>, std::move(tvf)),
                      std::nullopt, {}});
    emit("__clink_tvf_" + std::to_string(ph_.table_functions.size() - 1), at.origin);
    return inner_close + 1;
  }
#pragma GCC diagnostic pop

  // A table argument's [PARTITION BY k | (k, ...)] [ORDER BY c [ASC|DESC] | (c, ...)].
  void parse_table_clauses(TokenCursor& c, ast::TvfArg& arg) {
    if (c.accept("PARTITION")) {
      c.expect("BY");
      bool paren = c.accept("(");
      do arg.partition_by.push_back(c.qualified_name("a partition column"));
      while (paren && c.accept(","));
      if (paren) c.expect(")");
    }
    if (c.peek_is("ORDER") && c.peek_is("BY", 1)) {  // a process table function's ORDER BY
      arg.order_by_pos = c.position();
      c.next();
      c.next();
      bool paren = c.accept("(");
      do {
        arg.order_by.push_back(c.qualified_name("an order column"));
        bool desc = false;
        if (c.accept("DESC")) desc = true;
        else c.accept("ASC");
        arg.order_descending.push_back(desc);
      } while (paren && c.accept(","));
      if (paren) c.expect(")");
    }
  }

  ast::TvfArg parse_tvf_arg(size_t b, size_t e) {
    TokenCursor c(lx_, b, e, map_);
    ast::TvfArg arg;
    if (c.at_end()) c.fail_expected("an argument");
    arg.pos = c.position();
    if (c.peek().word() && c.peek_is("=>", 1)) {
      arg.name = upper(c.identifier("an argument name"));
      c.next();
    }
    if (c.peek_is("TABLE")) {
      c.next();
      arg.kind = ast::TvfArg::Kind::Table;
      if (detail::starts_query_argument(c, 0))  // Flink's parser rejects it too
        c.fail(c.peek(), "TABLE takes a table name; pass a query as the table argument in parentheses, without "
                         "TABLE: f((SELECT ...) PARTITION BY k)");
      arg.table = c.qualified_name("a table name");
      if (!c.hints_here().empty())
        c.unsupported(tok(c.index() - 1), "hints on the input of a window table function are not supported");
      parse_table_clauses(c, arg);
    } else if (detail::starts_query_argument(c, 0)) {
      // (SELECT ...) [PARTITION BY ...] [ORDER BY ...]: a query as the table argument,
      // kept as its scalar-subquery expression (the binder binds it as a derived table).
      const size_t close = c.matching_close(c.index_ahead(0));
      arg.kind = ast::TvfArg::Kind::Table;
      arg.expr = exprs_.parse_expression(lx_, c.index_ahead(0), close + 1);
      if (!std::holds_alternative<ast::ScalarSubquery>(arg.expr->node))
        c.fail(c.peek(), "expected a query in parentheses as the table argument");
      c.seek(close + 1);
      parse_table_clauses(c, arg);
    } else if (c.peek_is("MODEL") && c.peek(1).word()) {
      c.next();
      arg.kind = ast::TvfArg::Kind::Model;
      arg.table = c.qualified_name("a model name");
    } else if (c.peek_is("DESCRIPTOR") && c.peek_is("(", 1)) {
      c.next();
      c.next();
      arg.kind = ast::TvfArg::Kind::Descriptor;
      do arg.columns.push_back(c.identifier("a column name"));
      while (c.accept(","));
      c.expect(")");
    } else if (c.peek_is("DEFAULT") && c.index_ahead(1) >= e) {
      c.next();
      arg.kind = ast::TvfArg::Kind::Expression;  // expr null: DEFAULT
    } else {
      arg.kind = ast::TvfArg::Kind::Expression;
      arg.expr = exprs_.parse_expression(lx_, c.index_ahead(0), e);
      return arg;
    }
    if (!c.at_end()) c.fail(c.peek(), "unexpected " + detail::describe(c.peek()) + " in a table function argument");
    return arg;
  }

  // A /*+ OPTIONS(...) */ hint belongs to the table name just before it.
  void attach_hint(size_t range_begin, size_t hint_index) {
    const Token& hint = tok(hint_index);
    size_t j = hint_index;
    while (j > range_begin && tok(j - 1).kind == TokenKind::Hint) --j;
    if (j == range_begin || !tok(j - 1).word())
      throw TranslationError(map_.position(hint.origin), "a /*+ ... */ hint is only supported after a table name");
    size_t start = j - 1;
    if (tok(start).is("SELECT"))
      throw TranslationError(map_.position(hint.origin), "query hints (/*+ ... */ after SELECT) are not supported yet");
    while (start >= range_begin + 2 && tok(start - 1).sym(".") && tok(start - 2).word()) start -= 2;
    auto& hints = ph_.hints[tok(start).origin];
    for (auto& h : parse_hints(lx_, hint, map_)) hints.push_back(std::move(h));
    ph_.hint_tokens[tok(start).origin].push_back(hint.origin);
  }

 public:
  static std::vector<ast::TableHint> parse_hints(const Lexed& lx, const Token& hint, const SourceMap& map) {
    MappedText body;
    body.append_from(lx.text, hint.begin + 3, hint.end - 2);
    Lexed inner = tokenize(std::move(body), map);
    TokenCursor c(inner, 0, inner.tokens.size(), map);
    std::vector<ast::TableHint> out;
    do {
      ast::TableHint h;
      h.pos = c.position();
      const Token& name = c.peek();
      h.name = upper(c.identifier("a hint name"));
      if (h.name != "OPTIONS") c.unsupported(name, "table hint " + h.name + " is not supported (only OPTIONS)");
      h.options = detail::parse_property_list(c);
      out.push_back(std::move(h));
    } while (c.accept(","));
    if (!c.at_end()) c.fail(c.peek(), "unexpected " + detail::describe(c.peek()) + " in a hint");
    return out;
  }

 private:
  const Lexed& lx_;
  const SourceMap& map_;
  Placeholders& ph_;
  ExpressionSource& exprs_;
  Rewritten out_;
};

}  // namespace

Rewritten rewrite_for_postgres(const Lexed& lexed, size_t begin, size_t end, const SourceMap& map,
                               Placeholders& placeholders, ExpressionSource& expressions) {
  return Rewriter(lexed, map, placeholders, expressions).run(begin, end);
}

std::vector<ast::TableHint> parse_hint_token(const Lexed& lexed, const Token& hint, const SourceMap& map) {
  return Rewriter::parse_hints(lexed, hint, map);
}

}  // namespace clink::sql::preparse
