#pragma once
// Column cells <-> PostgreSQL's text forms, for the jdbc sink (statements and COPY), the
// jdbc source and lookups (query results) and postgres-cdc (pgoutput's text tuples).
// The forms assume the session settings PgConnection sets (DateStyle ISO, TimeZone UTC,
// IntervalStyle iso_8601, bytea_output hex).
//
// The type mapping (Flink's JDBC PostgreSQL dialect, plus what PostgreSQL has beyond it):
//   BOOLEAN boolean | TINYINT, SMALLINT smallint | INT integer | BIGINT bigint
//   FLOAT real | DOUBLE double precision | DECIMAL(p, s) numeric(p, s)
//   CHAR(n) char(n) | VARCHAR(n) varchar(n) | STRING text (also json, jsonb, uuid, ... as text)
//   BINARY, VARBINARY, BYTES bytea (hex: \x0a1b)
//   DATE date | TIME(p) time(p) | TIMESTAMP(p) timestamp(p) | TIMESTAMP_LTZ(p) timestamptz(p)
//   INTERVAL DAY TO SECOND, INTERVAL YEAR TO MONTH interval (ISO 8601: P1Y2M, P1DT2H3M4.5S)
//   ARRAY<T> T[] ({1,2,NULL}; nested arrays are PostgreSQL's multi-dimensional arrays)
//   ROW<...> a composite type ((1,"a b",))
//   MAP<K, V> hstore ("k"=>"v", "n"=>NULL; the extension must be installed)
// Dates before year 1 are written as PostgreSQL's BC years; TIMESTAMP values keep
// microseconds (PostgreSQL's precision); TIME keeps milliseconds (clink's).
#include <cstddef>
#include <string>
#include <string_view>

#include "clink/core/error.hpp"
#include "clink/sql/common/column.hpp"

namespace clink::sql {

// A PostgreSQL text value that is not a valid value of the column's type.
class PgValueError : public ClinkError {
 public:
  using ClinkError::ClinkError;
};

// ---- writing (a cell of a ColumnBatch column)

// A non-NULL cell as PostgreSQL's text input form of its type (a statement parameter).
void append_pg_text(const Column& col, std::size_t row, std::string& out);
// A cell as a field of COPY's text format: the text form with backslash, tab, newline and
// carriage return escaped; NULL as \N.
void append_pg_copy_field(const Column& col, std::size_t row, std::string& out);
// A cell as a SQL literal for a statement's text: NULL, or the text form quoted ('it''s'),
// whose type PostgreSQL takes from the target column.
void append_pg_literal(const Column& col, std::size_t row, std::string& out);

// ---- reading (a value a query or pgoutput returned)

// Appends PostgreSQL's text form of a non-NULL value to `col` (of the column's clink
// type); NULLs are col.append_null(). Throws PgValueError ("'abc' is not a valid INT")
// without appending; callers add where the value came from (table, column, row).
void append_pg_text_value(Column& col, std::string_view text);

// ---- types

// The PostgreSQL type a clink type maps to ("integer", "numeric(10, 2)", "timestamp(3)",
// "text[]", "bytea", ...), for DDL in tests and messages. Throws PgValueError for a type
// PostgreSQL cannot hold (a ROW: its composite type has to be created by name).
std::string pg_type_name(const LogicalType& type);

}  // namespace clink::sql
