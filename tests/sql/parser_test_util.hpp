#pragma once
// Helpers shared by the parser tests: exact dumps of parsed SQL and of errors.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "clink/sql/parser/parser.hpp"

namespace clink::test {

// The canonical text of the single statement in `sql`.
inline std::string dump(std::string_view sql) {
  sql::ast::Script s = sql::parse(sql);
  if (s.statements.size() != 1) return "<" + std::to_string(s.statements.size()) + " statements>";
  return sql::ast::to_string(s.statements[0]);
}

inline std::string expr(std::string_view sql) { return sql::ast::to_string(sql::parse_expression(sql)); }

// "ParseError: line L, column C: message" / "TranslationError: ..." / "no error".
template <class F>
std::string error_of_call(F&& f) {
  try {
    f();
    return "no error";
  } catch (const sql::ParseError& e) {
    return std::string("ParseError: ") + e.what();
  } catch (const sql::TranslationError& e) {
    return std::string("TranslationError: ") + e.what();
  }
}
inline std::string error_of(std::string_view sql) {
  return error_of_call([&] { sql::parse(sql); });
}
inline std::string expr_error_of(std::string_view sql) {
  return error_of_call([&] { sql::parse_expression(sql); });
}

struct Case {
  const char* sql;
  const char* expected;
};

}  // namespace clink::test
