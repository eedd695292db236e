#pragma once
#include <string>

#include "clink/core/error.hpp"

namespace clink::sql {

// A 1-based position in the ORIGINAL SQL text the user wrote (before the preparse
// shim rewrote it). Columns count characters (UTF-8 code points), not bytes.
struct SourcePosition {
  int line = 0;
  int column = 0;
  bool known() const { return line > 0; }
  friend bool operator==(const SourcePosition&, const SourcePosition&) = default;
};

// Base of every error raised while compiling SQL; the message starts with
// "line L, column C: " when the position is known.
class SqlError : public ClinkError {
 public:
  SqlError(SourcePosition pos, const std::string& detail)
      : ClinkError(format(pos, detail)), pos_(pos), detail_(detail) {}
  SourcePosition position() const { return pos_; }
  int line() const { return pos_.line; }
  int column() const { return pos_.column; }
  // The message without the position prefix.
  const std::string& detail() const { return detail_; }

 private:
  static std::string format(SourcePosition pos, const std::string& detail) {
    if (!pos.known()) return detail;
    return "line " + std::to_string(pos.line) + ", column " + std::to_string(pos.column) + ": " +
           detail;
  }
  SourcePosition pos_;
  std::string detail_;
};

// The text is not valid SQL (Flink's dialect as clink accepts it).
class ParseError : public SqlError {
 public:
  using SqlError::SqlError;
};

// The text is valid SQL but uses something outside clink's supported subset
// (raised by the parser for unsupported statements and by the binder).
class TranslationError : public SqlError {
 public:
  using SqlError::SqlError;
};

}  // namespace clink::sql
