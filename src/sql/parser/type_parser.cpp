// Parses Flink SQL data types (parser level: see type_syntax.hpp) and prints them.
#include <cctype>

#include "token_cursor.hpp"

namespace clink::sql {

namespace {
using detail::TokenCursor;
using detail::Token;
using detail::TokenKind;

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

void params(TokenCursor& c, TypeName& t, size_t max) {
  if (!c.accept("(")) return;
  do t.params.push_back(c.integer("an integer type parameter"));
  while (t.params.size() < max && c.accept(","));
  c.expect(")");
}

// (WITHOUT TIME ZONE | WITH LOCAL TIME ZONE) after TIME / TIMESTAMP.
void time_zone(TokenCursor& c, TypeName& t) {
  if (c.accept_all({"WITHOUT", "TIME", "ZONE"})) return;
  if (t.name == "TIMESTAMP" && c.accept_all({"WITH", "LOCAL", "TIME", "ZONE"})) {
    t.name = "TIMESTAMP_LTZ";
    return;
  }
  if (c.peek_is("WITH") && c.peek_is("TIME", 1))
    c.unsupported(c.peek(), t.name + " WITH TIME ZONE is not supported (use TIMESTAMP_LTZ / WITH LOCAL TIME ZONE)");
}

TypeName element(TokenCursor& c, const char* close) {
  TypeName t = detail::parse_type(c);
  if (!c.peek_is(close) && !c.peek_is(",")) c.fail_expected(std::string("'") + close + "'");
  return t;
}

void row_fields(TokenCursor& c, TypeName& t, const char* close) {
  if (c.accept(close)) return;
  do {
    RowFieldType f;
    f.name = c.identifier("a ROW field name");
    f.type.push_back(detail::parse_type(c));
    if (c.accept("COMMENT")) f.comment = c.string_literal("a comment string");
    t.fields.push_back(std::move(f));
  } while (c.accept(","));
  c.expect(close);
}

TypeName base_type(TokenCursor& c) {
  TypeName t;
  t.pos = c.position();
  const Token& w = c.peek();
  if (w.kind != TokenKind::Word) c.fail_expected("a data type");
  t.spelling = w.text;
  std::string n = upper(w.text);
  c.next();
  auto simple = [&](const char* name) { t.name = name; };
  if (n == "BOOLEAN" || n == "BOOL") simple("BOOLEAN");
  else if (n == "TINYINT") simple("TINYINT");
  else if (n == "SMALLINT") simple("SMALLINT");
  else if (n == "INT" || n == "INTEGER") simple("INT");
  else if (n == "BIGINT") simple("BIGINT");
  else if (n == "FLOAT" || n == "REAL") simple("FLOAT");
  else if (n == "DOUBLE") {
    c.accept("PRECISION");
    simple("DOUBLE");
  } else if (n == "DECIMAL" || n == "DEC" || n == "NUMERIC") {
    simple("DECIMAL");
    params(c, t, 2);
  } else if (n == "CHAR" || n == "CHARACTER") {
    if (c.accept("VARYING")) {
      simple("VARCHAR");
    } else {
      simple("CHAR");
    }
    params(c, t, 1);
  } else if (n == "VARCHAR") {
    simple("VARCHAR");
    params(c, t, 1);
  } else if (n == "STRING") simple("STRING");
  else if (n == "BINARY") {
    if (c.accept("VARYING")) {
      simple("VARBINARY");
    } else {
      simple("BINARY");
    }
    params(c, t, 1);
  } else if (n == "VARBINARY") {
    simple("VARBINARY");
    params(c, t, 1);
  } else if (n == "BYTES") simple("BYTES");
  else if (n == "DATE") simple("DATE");
  else if (n == "TIME" || n == "TIMESTAMP") {
    simple(n == "TIME" ? "TIME" : "TIMESTAMP");
    params(c, t, 1);
    time_zone(c, t);
  } else if (n == "TIMESTAMP_LTZ") {
    simple("TIMESTAMP_LTZ");
    params(c, t, 1);
  } else if (n == "INTERVAL") {
    simple("INTERVAL");
    t.interval_from = detail::time_unit(c.peek());
    if (t.interval_from.empty()) c.fail_expected("an interval unit");
    c.next();
    params(c, t, 1);
    if (c.accept("TO")) {
      t.interval_to = detail::time_unit(c.peek());
      if (t.interval_to.empty()) c.fail_expected("an interval unit");
      c.next();
      if (c.accept("(")) {
        if (t.params.empty()) t.params.push_back(-1);  // no leading precision written
        t.params.push_back(c.integer("a precision"));
        c.expect(")");
      }
    }
  } else if ((n == "ARRAY" || n == "MULTISET") && c.peek_is("<")) {
    simple(n == "ARRAY" ? "ARRAY" : "MULTISET");
    c.next();
    t.elements.push_back(element(c, ">"));
    c.expect(">");
  } else if (n == "MAP" && c.peek_is("<")) {
    simple("MAP");
    c.next();
    t.elements.push_back(element(c, ","));
    c.expect(",");
    t.elements.push_back(element(c, ">"));
    c.expect(">");
  } else if (n == "ROW" && c.peek_is("<>")) {  // ROW<> lexes as the <> operator
    simple("ROW");
    c.next();
  } else if (n == "ROW" && (c.peek_is("<") || c.peek_is("("))) {
    simple("ROW");
    bool angle = c.next().sym("<");
    row_fields(c, t, angle ? ">" : ")");
  } else if (n == "NULL") {
    simple("NULL");
  } else if (n == "RAW") {
    c.unsupported(w, "the RAW data type is not supported");
  } else {
    c.unsupported(w, "unknown data type '" + w.text + "'");
  }
  return t;
}
}  // namespace

namespace detail {

TypeName parse_type(TokenCursor& c) {
  // ROW<...> / ARRAY<...> / MAP<...> recurse once per level: bounded (a ROW nested
  // 100 000 deep overflowed the stack).
  constexpr int kMaxTypeDepth = 1000;
  static thread_local int depth = 0;
  struct Level {
    Level() { ++depth; }
    ~Level() { --depth; }
  } level;
  if (depth > kMaxTypeDepth) c.fail(c.peek(), "a type nested more than " + std::to_string(kMaxTypeDepth) + " deep");
  TypeName t = base_type(c);
  for (;;) {
    if (c.peek_is("NOT") && c.peek_is("NULL", 1)) {
      c.next();
      c.next();
      t.nullable = false;
    } else if (c.peek_is("NULL") && t.name != "NULL") {
      c.next();
      t.nullable = true;
    } else if (c.peek_is("ARRAY") || c.peek_is("MULTISET") || (c.peek_is("[") && c.peek_is("]", 1))) {
      // `T ARRAY` / `T MULTISET` (Flink's suffix forms) and `T[]` (PostgreSQL's, which the
      // seed's scripts use): the collection of T.
      TypeName outer;
      outer.pos = t.pos;
      if (c.peek_is("[")) {
        c.next();
        c.next();
        outer.name = "ARRAY";
      } else {
        outer.name = upper(c.next().text);
      }
      outer.spelling = outer.name;
      outer.elements.push_back(std::move(t));
      t = std::move(outer);
    } else {
      return t;
    }
  }
}

}  // namespace detail

std::string to_string(const TypeName& t) {
  std::string s;
  auto list = [&](const std::vector<int>& ps) {
    std::string out = "(";
    for (size_t i = 0; i < ps.size(); ++i) out += (i ? ", " : "") + std::to_string(ps[i]);
    return out + ")";
  };
  if (t.name == "INTERVAL") {
    s = "INTERVAL " + t.interval_from;
    if (!t.params.empty() && t.params[0] >= 0) s += "(" + std::to_string(t.params[0]) + ")";
    if (!t.interval_to.empty()) {
      s += " TO " + t.interval_to;
      if (t.params.size() > 1) s += "(" + std::to_string(t.params[1]) + ")";
    }
  } else if (t.name == "ARRAY" || t.name == "MULTISET") {
    s = t.name + "<" + to_string(t.elements.at(0)) + ">";
  } else if (t.name == "MAP") {
    s = "MAP<" + to_string(t.elements.at(0)) + ", " + to_string(t.elements.at(1)) + ">";
  } else if (t.name == "ROW") {
    s = "ROW<";
    for (size_t i = 0; i < t.fields.size(); ++i) {
      const auto& f = t.fields[i];
      s += (i ? ", " : "") + ast::quote_identifier(f.name) + " " + to_string(f.type.at(0));
      if (!f.comment.empty()) s += " COMMENT " + ast::quote_string(f.comment);
    }
    s += ">";
  } else {
    s = t.name;
    if (!t.params.empty()) s += list(t.params);
  }
  if (!t.nullable) s += " NOT NULL";
  return s;
}

}  // namespace clink::sql
