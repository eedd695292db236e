#include "ptf_call_parse.hpp"

#include <algorithm>
#include <cctype>
#include <exception>
#include <iterator>
#include <string>

#include "token_cursor.hpp"

namespace clink::sql::detail {

namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// Table functions that take TABLE arguments but have their own syntax and binding.
const char* const kOwnSyntax[] = {"ML_PREDICT", "ML_EVALUATE", "VECTOR_SEARCH"};

}  // namespace

bool is_window_function_name(std::string_view upper_name) {
  for (const char* w : {"TUMBLE", "HOP", "CUMULATE", "SESSION"})
    if (upper_name == w) return true;
  return false;
}

bool starts_query_argument(const TokenCursor& cur, std::size_t ahead) {
  std::size_t k = ahead;
  while (cur.peek_is("(", k)) ++k;
  return k > ahead && (cur.peek_is("SELECT", k) || cur.peek_is("WITH", k) || cur.peek_is("VALUES", k));
}

bool starts_process_table_function_call(const TokenCursor& cur) {
  const Token& name = cur.peek();
  if (!name.word() || !cur.peek_is("(", 1)) return false;
  const std::string n = upper(name.value);
  // IN (TABLE t), EXISTS (TABLE t), FROM (TABLE t): keywords, not function names.
  if (is_window_function_name(n) || (name.kind == TokenKind::Word && preparse::is_reserved_keyword(name.text)))
    return false;
  if (std::find(std::begin(kOwnSyntax), std::end(kOwnSyntax), n) != std::end(kOwnSyntax)) return false;
  // Some top-level argument is TABLE t or (SELECT ...), or name => either ("TABLE(" would
  // be a nested table function call).
  const std::size_t open = cur.index_ahead(1);
  std::size_t close = 0;
  try {
    close = cur.matching_close(open);
  } catch (const std::exception&) {
    return false;  // unbalanced: the parser reports it where it belongs
  }
  TokenCursor args(cur.lexed(), open + 1, close, cur.map());
  while (!args.at_end()) {
    std::size_t at = 0;
    if (args.peek().word() && args.peek_is("=>", 1)) at = 2;
    if (args.peek_is("TABLE", at) && !args.peek_is("(", at + 1) && args.peek(at + 1).word()) return true;
    if (starts_query_argument(args, at) || (args.peek_is("TABLE", at) && starts_query_argument(args, at + 1)))
      return true;
    const std::size_t comma = args.find_top_level({","});
    if (comma >= close) break;
    args.seek(comma + 1);
  }
  return false;
}

}  // namespace clink::sql::detail
