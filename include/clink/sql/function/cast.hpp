#pragma once
#include "clink/sql/function/function_registry.hpp"

namespace clink::sql {

// The kernel of CAST(from AS to) / TRY_CAST, following Flink 1.15+'s cast rules:
//   string -> number/boolean/temporal: trimmed, Flink's formats; invalid text fails the
//     CAST (SqlRuntimeError naming value and types) and gives NULL under TRY_CAST
//   number -> narrower integer: wraps like Java's narrowing (as Flink)
//   DOUBLE/FLOAT/DECIMAL -> integer: truncates toward zero; -> DECIMAL: HALF_UP, NULL on overflow
//   integer <-> TIMESTAMP(_LTZ): epoch seconds; TIMESTAMP <-> TIMESTAMP_LTZ via the session zone
//   anything -> CHAR(n)/VARCHAR(n): the CAST AS STRING text, padded (CHAR) or truncated to n
// Null policy: propagate (NULL in, NULL out).
ScalarKernel make_cast_kernel(const LogicalType& from, const LogicalType& to, bool try_cast);

// Casts one value (constant folding, tests).
Value cast_value(const Value& v, const LogicalType& from, const LogicalType& to, const SessionContext& session,
                 bool try_cast = false);

}  // namespace clink::sql
