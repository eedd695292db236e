#pragma once
#include <string>
#include <vector>

#include "clink/sql/common/sql_error.hpp"

namespace clink::sql {

// A data type as written in SQL (parser level, not the runtime type system).
// `name` is the canonical upper-case spelling of the base type:
//   BOOLEAN TINYINT SMALLINT INT BIGINT FLOAT DOUBLE DECIMAL CHAR VARCHAR STRING
//   BINARY VARBINARY BYTES DATE TIME TIMESTAMP TIMESTAMP_LTZ INTERVAL ARRAY MAP
//   MULTISET ROW RAW NULL
// Synonyms are folded: INTEGER -> INT, REAL -> FLOAT, DOUBLE PRECISION -> DOUBLE,
// DEC/NUMERIC -> DECIMAL, TIMESTAMP WITH LOCAL TIME ZONE -> TIMESTAMP_LTZ.
// `spelling` keeps what the user wrote for messages.
struct TypeName;

struct RowFieldType {
  std::string name;
  std::vector<TypeName> type;  // exactly one element (a vector breaks the recursion)
  std::string comment;         // empty when none
};

struct TypeName {
  std::string name;
  std::string spelling;
  std::vector<int> params;            // DECIMAL(p, s), VARCHAR(n), TIMESTAMP(p), ...
  std::vector<TypeName> elements;     // ARRAY / MULTISET: 1 element; MAP: key, value
  std::vector<RowFieldType> fields;   // ROW
  // INTERVAL qualifier: start and end unit (end empty for single-unit intervals);
  // precisions live in params ({leading precision, fractional precision} as written).
  std::string interval_from;
  std::string interval_to;
  bool nullable = true;
  SourcePosition pos;
};

// Canonical SQL text of the type, e.g. "DECIMAL(10, 2) NOT NULL", "MAP<STRING, INT>",
// "ROW<`a` INT, `b` STRING>", "TIMESTAMP_LTZ(3)".
std::string to_string(const TypeName& type);

}  // namespace clink::sql
