#pragma once
// The jdbc connector's lookups (Flink's JdbcRowDataLookupFunction, batched): the rows of a
// PostgreSQL table whose key columns equal one of a batch of keys, in one prepared query
// per batch:
//   one key column:  SELECT c1, c2 FROM t WHERE k = ANY($1)            ($1: the keys as an array)
//   several:         SELECT t.c1, t.c2 FROM t JOIN unnest($1::T1[], $2::T2[]) AS k(k1, k2)
//                    ON t.k1 = k.k1 AND t.k2 = k.k2
// Column and table names as Flink's PostgreSQL dialect writes them (unquoted: folded to
// lower case). A broken connection is dropped on reset() and reopened by the next lookup.
#include <memory>

#include "clink/connectors/sql/lookup_source.hpp"

namespace clink::sql {

// The factory registered as "jdbc" (the jdbc row's lookup_factory). Throws ClinkError
// naming the option for bad options (Flink's JdbcDynamicTableFactory checks).
std::unique_ptr<LookupSource> make_jdbc_lookup_source(const LookupSourceContext& ctx);

}  // namespace clink::sql
