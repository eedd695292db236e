#pragma once
// Filter pushdown for the jdbc source: a clink predicate as PostgreSQL SQL, only where
// PostgreSQL evaluates it exactly as clink does (Flink's JdbcFilterPushdownPreparedStatement
// Visitor takes a similar set). Taken: column refs of BOOLEAN, integer, DECIMAL, VARCHAR,
// DATE, TIMESTAMP and TIMESTAMP_LTZ columns; non-NULL literals; = <> < <= > >= (strings only
// = and <>: PostgreSQL orders text by its collation, clink by code point); IS [NOT] NULL;
// NOT; AND; OR; [NOT] IN of literals; LIKE with a literal pattern without backslashes;
// widening casts of integer columns. Not taken: FLOAT and DOUBLE (NaN orders differently),
// CHAR(n) (padding), functions, and anything else: such a conjunct is not sent, and the
// filter above the scan applies it (it applies every conjunct again anyway).
#include <optional>
#include <string>
#include <vector>

#include "clink/sql/expression/expr.hpp"

namespace clink::sql {

// `e` over the scan's output columns, whose SQL names are `columns` (quoted); nullopt when
// any part of it is not taken.
std::optional<std::string> jdbc_filter_sql(const Expr& e, const std::vector<std::string>& columns);

}  // namespace clink::sql
