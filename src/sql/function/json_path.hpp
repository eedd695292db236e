// SQL/JSON path expressions (private to src/sql): compiled once per constant path
// argument, evaluated over simdjson DOM values.
//   [lax | strict] $ ( .key | ."key" | ['key'] | [n] | [*] | .* )*
// lax (the default): a missing member or index selects nothing (the ON EMPTY case);
// strict: it is an error (the ON ERROR case).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

namespace clink::sql {

class JsonPath {
 public:
  // Throws SqlTypeError naming the offending position.
  explicit JsonPath(std::string_view text);

  // Appends the selected values to `out`; returns false for a strict-mode structural
  // error (missing member, index out of range, member of a non-object).
  bool evaluate(simdjson::dom::element root, std::vector<simdjson::dom::element>& out) const;
  // False when the path has a wildcard: its result is then a list (a JSON array of the
  // selected values, possibly empty), as Jayway's JsonPath returns for Calcite/Flink.
  bool definite() const { return definite_; }

 private:
  struct Step {
    enum Kind { kMember, kIndex, kAnyMember, kAnyIndex } kind;
    std::string name;
    std::size_t index = 0;
  };
  bool walk(simdjson::dom::element e, std::size_t step, std::vector<simdjson::dom::element>& out) const;

  bool strict_ = false;
  bool definite_ = true;
  std::vector<Step> steps_;
};

// Appends `e` as compact JSON text (Jackson's spelling of doubles: Java's Double.toString,
// 1.0, 1.0E10).
void append_json(simdjson::dom::element e, std::string& out);
// Appends `s` as a quoted JSON string.
void append_json_string(std::string_view s, std::string& out);

}  // namespace clink::sql
