#pragma once
#include <string>

#include "clink/core/error.hpp"

namespace clink {

// How a record is written as, or read from, one line of a file.
enum class LineFormat {
  kText,  // the record's text form (format_value); reading yields the line as a string
  kJson,  // one JSON value per line (JSON Lines)
};

inline const char* line_format_name(LineFormat f) { return f == LineFormat::kText ? "text" : "json"; }

// File extension of part files in this format.
inline const char* line_format_extension(LineFormat f) { return f == LineFormat::kText ? "txt" : "jsonl"; }

inline LineFormat parse_line_format(const std::string& name) {
  if (name == "text") return LineFormat::kText;
  if (name == "json") return LineFormat::kJson;
  throw ClinkError("unknown line format '" + name + "' (known: text, json)");
}

}  // namespace clink
