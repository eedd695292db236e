#pragma once
// A record a source could not decode. Sources configured with on_error = dead_letter
// send these to the side output "dead-letter" instead of failing the job, so a bad
// line is never dropped silently: it is kept with its reason and position.
#include <cstdint>
#include <string>

#include "clink/core/format_value.hpp"
#include "clink/core/output_tag.hpp"
#include "clink/core/type_name.hpp"
#include "clink/formats/json_escape.hpp"

namespace clink {

struct DeadLetter {
  std::string source;     // id of the source operator
  std::string file;       // input file (empty for sources without files)
  std::int64_t line = 0;  // 1-based line number in `file`
  std::string reason;     // why decoding failed
  std::string raw;        // the input line as read, without its line terminator
  friend bool operator==(const DeadLetter&, const DeadLetter&) = default;
};

// One line, JSON-shaped, because `raw` and `reason` may contain anything (commas,
// quotes, parentheses) that the tuple-style text form could not show unambiguously.
inline void to_string_into(const DeadLetter& d, std::string& out) {
  out.append("{\"source\":");
  append_json_string(d.source, out);
  out.append(",\"file\":");
  append_json_string(d.file, out);
  out.append(",\"line\":");
  format_value(d.line, out);
  out.append(",\"reason\":");
  append_json_string(d.reason, out);
  out.append(",\"raw\":");
  append_json_string(d.raw, out);
  out.push_back('}');
}

template <>
struct TypeName<DeadLetter> {
  static std::string get() { return "dead_letter"; }
};

}  // namespace clink
