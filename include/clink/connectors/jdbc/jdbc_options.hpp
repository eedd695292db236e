#pragma once
// The `jdbc` connector's table options (Flink's JdbcConnectorOptions), shared by its sink,
// source and lookups: the keys a jdbc table may hold, and the connection options read
// and checked as Flink's JdbcDynamicTableFactory checks them.
#include <string>
#include <vector>

#include "clink/connectors/jdbc/pg_connection.hpp"
#include "clink/connectors/sql/sql_connector_params.hpp"

namespace clink::sql {

// Every option a jdbc table may hold (a table can be scanned, looked up and written, so
// each factory accepts all of them and reads its own).
const std::vector<std::string>& jdbc_option_keys();
// Fails (naming the option) for a key outside jdbc_option_keys().
void check_jdbc_options(const SqlConnectorParams& p);

// What every jdbc factory reads: where the table is.
struct JdbcTableOptions {
  PgConnectOptions connection;  // 'url' (PostgreSQL only), 'username', 'password'
  std::string table_name;       // 'table-name' as written
};

// 'url' and 'table-name' are required; 'username' and 'password' come together or not at
// all (Flink's checkAllOrNone); 'driver', when given, must be org.postgresql.Driver (the
// only dialect here); 'connection.max-retry-timeout' (>= 1 s) bounds connecting.
JdbcTableOptions read_jdbc_table_options(const SqlConnectorParams& p);

}  // namespace clink::sql
