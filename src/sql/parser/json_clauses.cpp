// The SQL/JSON clauses of JSON_VALUE / JSON_QUERY / JSON_EXISTS (PostgreSQL 15's
// grammar has none of them; the preparse shim cuts them out and records them).
#include "token_cursor.hpp"

namespace clink::sql::detail {

namespace {

bool behavior_word(const TokenCursor& c, size_t ahead) {
  for (const char* w : {"NULL", "ERROR", "TRUE", "FALSE", "UNKNOWN"})
    if (c.peek_is(w, ahead)) return true;
  return false;
}

// behavior ON {EMPTY | ERROR}; DEFAULT's value runs up to the ON.
void behavior(TokenCursor& c, ast::JsonClauses& out, preparse::ExpressionSource& exprs) {
  ast::JsonBehavior b;
  const Token& first = c.peek();
  if (c.accept("NULL")) b.kind = ast::JsonBehavior::Kind::Null;
  else if (c.accept("ERROR")) b.kind = ast::JsonBehavior::Kind::Error;
  else if (c.accept("TRUE")) b.kind = ast::JsonBehavior::Kind::True;
  else if (c.accept("FALSE")) b.kind = ast::JsonBehavior::Kind::False;
  else if (c.accept("UNKNOWN")) b.kind = ast::JsonBehavior::Kind::Unknown;
  else if (c.accept_all({"EMPTY", "ARRAY"})) b.kind = ast::JsonBehavior::Kind::EmptyArray;
  else if (c.accept_all({"EMPTY", "OBJECT"})) b.kind = ast::JsonBehavior::Kind::EmptyObject;
  else if (c.accept("DEFAULT")) {
    b.kind = ast::JsonBehavior::Kind::Default;
    size_t begin = c.index_ahead(0);
    size_t on = begin;
    for (TokenCursor scan = c; !scan.at_end(); scan.next()) {
      if (scan.peek_is("ON") && (scan.peek_is("EMPTY", 1) || scan.peek_is("ERROR", 1))) {
        on = scan.index_ahead(0);
        break;
      }
    }
    if (on == begin) c.fail_expected("a DEFAULT value followed by ON EMPTY or ON ERROR");
    b.default_value = exprs.parse_expression(c.lexed(), begin, on);
    c.seek(on);
  } else {
    c.fail_expected("RETURNING, a WRAPPER clause or NULL / ERROR / DEFAULT ... ON EMPTY / ON ERROR");
  }
  c.expect("ON");
  if (c.accept("EMPTY")) {
    if (out.on_empty) c.fail(first, "ON EMPTY is given twice");
    out.on_empty = std::move(b);
  } else {
    c.expect("ERROR");
    if (out.on_error) c.fail(first, "ON ERROR is given twice");
    out.on_error = std::move(b);
  }
}

}  // namespace

bool at_json_clause(const TokenCursor& c) {
  if (c.peek_is("RETURNING") || c.peek_is("WITHOUT") || c.peek_is("DEFAULT")) return true;
  if (c.peek_is("WITH") && (c.peek_is("CONDITIONAL", 1) || c.peek_is("UNCONDITIONAL", 1) ||
                            c.peek_is("ARRAY", 1) || c.peek_is("WRAPPER", 1)))
    return true;
  if (c.peek_is("EMPTY") && (c.peek_is("ARRAY", 1) || c.peek_is("OBJECT", 1))) return true;
  return behavior_word(c, 0) && c.peek_is("ON", 1);
}

ast::JsonClauses parse_json_clauses(TokenCursor& c, preparse::ExpressionSource& exprs) {
  ast::JsonClauses out;
  if (c.accept("RETURNING")) out.returning = parse_type(c);
  if (c.accept("WITHOUT")) {
    out.wrapper = ast::JsonClauses::Wrapper::Without;
    c.accept("ARRAY");
    c.expect("WRAPPER");
  } else if (c.peek_is("WITH") && !c.peek_is("TIME", 1)) {
    c.next();
    out.wrapper = c.accept("CONDITIONAL") ? ast::JsonClauses::Wrapper::Conditional
                                          : ast::JsonClauses::Wrapper::Unconditional;
    c.accept("UNCONDITIONAL");
    c.accept("ARRAY");
    c.expect("WRAPPER");
  }
  while (!c.at_end()) behavior(c, out, exprs);
  return out;
}

}  // namespace clink::sql::detail
