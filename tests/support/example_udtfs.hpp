#pragma once
// Example user table functions (table_function.hpp) the SQL tests call:
//   split_words(s STRING, sep STRING) -> (word STRING, len INT)
//       one row per non-empty piece of s between separators (the first character of sep);
//       no rows for a NULL s
//   repeat_n(n BIGINT) -> (i BIGINT)   rows 1..n (none for NULL or n < 1)
// register_example_udtfs() adds them to TableFunctionRegistry::process() (once).
#include <cstdint>
#include <string_view>

#include "clink/sql/function/table_function.hpp"

namespace clink::test {

inline bool register_example_udtfs() {
  static const bool done = [] {
    using sql::LogicalType;
    auto& r = sql::TableFunctionRegistry::process();
    sql::TableFunctionDef split;
    split.params = {LogicalType::string(), LogicalType::string()};
    split.columns = {{"word", LogicalType::string()}, {"len", LogicalType::int_type()}};
    split.eval = [](const sql::TableFunctionArgs& in, sql::TableFunctionOutput& out) {
      if (in.is_null(0)) return;
      std::string_view s = in.string_at(0);
      const char sep = in.is_null(1) || in.string_at(1).empty() ? ' ' : in.string_at(1)[0];
      std::size_t start = 0;
      while (start <= s.size()) {
        std::size_t end = s.find(sep, start);
        if (end == std::string_view::npos) end = s.size();
        if (end > start) {
          out.add_row();
          out.set_string(0, s.substr(start, end - start));
          out.set_int(1, static_cast<std::int32_t>(end - start));
        }
        start = end + 1;
      }
    };
    r.add("split_words", std::move(split));
    sql::TableFunctionDef repeat;
    repeat.params = {LogicalType::bigint()};
    repeat.columns = {{"i", LogicalType::bigint()}};
    repeat.eval = [](const sql::TableFunctionArgs& in, sql::TableFunctionOutput& out) {
      if (in.is_null(0)) return;
      for (std::int64_t i = 1; i <= in.bigint_at(0); ++i) {
        out.add_row();
        out.set_bigint(0, i);
      }
    };
    r.add("repeat_n", std::move(repeat));
    return true;
  }();
  return done;
}

}  // namespace clink::test
