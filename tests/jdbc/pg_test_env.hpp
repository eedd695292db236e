#pragma once
// The PostgreSQL server the jdbc tests run against: ctest starts one (the `postgres`
// fixture in tests/CMakeLists.txt) and passes its JDBC URL in CLINK_POSTGRES_URL. Running
// a test binary by hand: `scripts/postgres start` and export the URL it prints
// (CLINK_POSTGRES_URL='jdbc:postgresql://127.0.0.1:15432/postgres?user=postgres').
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "clink/connectors/jdbc/pg_connection.hpp"

namespace clink::test {

inline std::string postgres_url() {
  const char* u = std::getenv("CLINK_POSTGRES_URL");
  if (!u || !*u)
    throw std::runtime_error(
        "CLINK_POSTGRES_URL is not set: run the jdbc tests through ctest (it starts a server), or run "
        "`scripts/postgres start` and export the URL it prints");
  return u;
}

// The port of postgres_url() (for `scripts/postgres restart PORT`).
inline int postgres_port() { return sql::parse_postgres_jdbc_url(postgres_url()).port; }

// A new connection to the test server.
inline sql::PgConnection pg_connect() { return sql::PgConnection(sql::PgConnectOptions{.url = postgres_url()}); }

// The test thread's connection to the test server, reopened when it broke (a test that
// restarts the server or terminates backends).
inline sql::PgConnection& pg_test_connection() {
  thread_local std::unique_ptr<sql::PgConnection> conn;
  if (!conn || !conn->ok()) conn = std::make_unique<sql::PgConnection>(pg_connect());
  return *conn;
}

// Runs one or more statements (no result).
inline void pg_exec(const std::string& sql) { pg_test_connection().exec(sql); }

// A query's rows, each as its values in PostgreSQL's text form joined by '|' (NULL as
// "NULL"): "1|abc|NULL". Sorted unless `sorted` is false (then in the query's order).
inline std::vector<std::string> pg_query_rows(const std::string& sql, bool sorted = true) {
  sql::PgResult r = pg_test_connection().exec(sql);
  std::vector<std::string> rows;
  for (int i = 0; i < r.rows(); ++i) {
    std::string line;
    for (int c = 0; c < r.columns(); ++c) {
      if (c) line += '|';
      line += r.is_null(i, c) ? std::string("NULL") : std::string(r.value(i, c));
    }
    rows.push_back(std::move(line));
  }
  if (sorted) std::sort(rows.begin(), rows.end());
  return rows;
}

// The single value of a query returning one row and column ("NULL" for NULL).
inline std::string pg_query_value(const std::string& sql) {
  sql::PgResult r = pg_test_connection().exec(sql);
  if (r.rows() != 1 || r.columns() != 1)
    throw std::runtime_error("expected one value from: " + sql + " (got " + std::to_string(r.rows()) + " rows)");
  return r.is_null(0, 0) ? "NULL" : std::string(r.value(0, 0));
}

// A table name no other test (or earlier run against the same server) uses:
// "<base>_<pid>_<n>", lower case (PostgreSQL folds unquoted names).
inline std::string unique_pg_table(const std::string& base) {
  static std::atomic<int> n{0};
  std::string name = base + "_" + std::to_string(::getpid()) + "_" + std::to_string(n++);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  return name;
}

}  // namespace clink::test
