#pragma once
// What the database says about a table: its columns and unique keys, read from the
// catalog (pg_attribute, pg_index). The jdbc sink checks its columns and its upsert key
// against it when it opens; the source and lookups can check their columns the same way.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "clink/connectors/jdbc/pg_connection.hpp"

namespace clink::sql {

struct PgColumnInfo {
  std::string name;  // as stored (unquoted names are lower case)
  std::string type;  // format_type(): "integer", "numeric(10,2)", "timestamp(3) without time zone"
  bool not_null = false;
};

struct PgTableInfo {
  std::vector<PgColumnInfo> columns;  // in the table's order
  // The primary key (first, when there is one) and every other unique index without a
  // predicate or expressions: their columns, in index order.
  std::vector<std::vector<std::string>> unique_keys;
  bool has_primary_key = false;

  const PgColumnInfo* column(std::string_view name) const;
  // "id, name, price"
  std::string column_names() const;
  // Whether a unique key has exactly these columns (any order): ON CONFLICT needs one.
  bool has_unique_key(const std::vector<std::string>& columns) const;
};

// The table `quoted_table` (as quote_pg_table_name writes it) describes; nullopt when no
// such table (or view) exists. Throws PgError when the catalog cannot be read.
std::optional<PgTableInfo> describe_pg_table(PgConnection& conn, const std::string& quoted_table);

}  // namespace clink::sql
