#pragma once
// Internal: recognising a process table function call in FROM (Flink 2.x's
// `f(TABLE t PARTITION BY k [ORDER BY ts], name => value, ...)`). PostgreSQL has no table
// arguments; the preparse rewriter turns the call into a __clink_tvf_N placeholder whose
// node is an ast::WindowTvf naming the function (the binder tells the two apart).
#include <cstddef>
#include <string_view>

namespace clink::sql::detail {

class TokenCursor;

// The cursor is on a word followed by '(': whether some argument is a table (`TABLE t`,
// a parenthesised query `(SELECT ...)`, or either after `name =>`) and the name is not one of the built-in table
// functions with their own syntax (window TVFs, ML_PREDICT, VECTOR_SEARCH).
bool starts_process_table_function_call(const TokenCursor& cur);

// Whether the token `ahead` of the cursor opens a parenthesised query: `(SELECT ...)`,
// `((VALUES ...))`, `(WITH ...)`, the form Flink's parser takes for a query as a table
// argument (it rejects `TABLE (SELECT ...)`).
bool starts_query_argument(const TokenCursor& cur, std::size_t ahead);

// Window TVF names (TUMBLE, HOP, CUMULATE, SESSION), upper case.
bool is_window_function_name(std::string_view upper_name);

}  // namespace clink::sql::detail
