#pragma once
// A PostgreSQL client connection over libpq, for the jdbc connectors (sink, source,
// lookups) and postgres-cdc. libpq stays inside src/ (this header names its structs only
// by their tags), so the rest of the project does not see libpq-fe.h.
//
// URLs are JDBC's: jdbc:postgresql://host[:port][/database][?user=..&password=..&...]
// (PgJDBC's form; the parameters that libpq also has are passed on: user, password,
// sslmode, connectTimeout -> connect_timeout, ApplicationName -> application_name,
// options; others are ignored as PgJDBC's driver-only settings). Every session runs with
// DateStyle ISO, TimeZone UTC, IntervalStyle iso_8601, bytea_output hex and
// extra_float_digits 3, the forms pg_values.hpp reads and writes.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "clink/core/error.hpp"

struct pg_conn;    // libpq's PGconn
struct pg_result;  // libpq's PGresult

namespace clink::sql {

// A failed connection attempt or statement. The message names the server (connecting)
// or the statement (its first 200 characters) and PostgreSQL's own message.
class PgError : public ClinkError {
 public:
  PgError(std::string message, std::string sqlstate, bool connection_lost)
      : ClinkError(std::move(message)), sqlstate_(std::move(sqlstate)), connection_lost_(connection_lost) {}
  // PostgreSQL's SQLSTATE ("23505" unique_violation, "42703" undefined_column, ...);
  // empty when the error came from the client (the connection broke).
  const std::string& sqlstate() const { return sqlstate_; }
  // The connection is gone or unusable (a failed connect, a terminated backend, a
  // restarting server: SQLSTATE class 08, 57P01..57P03): reconnect and try again.
  // Otherwise the statement itself was refused and repeating it fails the same way.
  bool connection_lost() const { return connection_lost_; }

 private:
  std::string sqlstate_;
  bool connection_lost_;
};

// A JDBC URL taken apart. Throws ClinkError naming the URL when it is not
// jdbc:postgresql://host[:port][/database][?params].
struct PgUrl {
  std::string host = "localhost";
  int port = 5432;
  std::string database;  // empty: libpq's default (the user's name)
  std::vector<std::pair<std::string, std::string>> params;  // percent-decoded, in order
  std::optional<std::string> param(std::string_view key) const;
};
bool is_postgres_jdbc_url(std::string_view url);
PgUrl parse_postgres_jdbc_url(std::string_view url);

struct PgConnectOptions {
  std::string url;                       // the JDBC URL
  std::optional<std::string> username;   // the 'username' option: overrides the URL's user
  std::optional<std::string> password;   // the 'password' option: overrides the URL's password
  std::string application_name = "clink";
  bool replication = false;  // a logical replication connection (replication=database)
  int connect_timeout_s = 10;
};

// The libpq conninfo string ("host='127.0.0.1' port='15432' ...") for `options`.
std::string pg_conninfo(const PgConnectOptions& options);
// "user@host:port/database", for messages (never the password).
std::string pg_describe(const PgConnectOptions& options);

// A statement's result (RAII over PGresult), values in PostgreSQL's text form.
class PgResult {
 public:
  PgResult() = default;
  explicit PgResult(pg_result* r) : r_(r) {}
  PgResult(PgResult&& o) noexcept : r_(std::exchange(o.r_, nullptr)) {}
  PgResult& operator=(PgResult&& o) noexcept {
    std::swap(r_, o.r_);
    return *this;
  }
  PgResult(const PgResult&) = delete;
  PgResult& operator=(const PgResult&) = delete;
  ~PgResult();

  int rows() const;
  int columns() const;
  bool is_null(int row, int col) const;
  std::string_view value(int row, int col) const;  // "" for NULL
  std::string column_name(int col) const;
  std::uint32_t column_type(int col) const;  // the type's OID
  int column_index(std::string_view name) const;  // -1 when absent
  std::int64_t affected_rows() const;  // INSERT/UPDATE/DELETE/COPY's count; 0 otherwise
  pg_result* raw() const { return r_; }

 private:
  pg_result* r_ = nullptr;
};

// One connection (RAII over PGconn). Not thread-safe: one per thread. Statements throw
// PgError naming the statement; connection_lost() on it says whether to reconnect.
class PgConnection {
 public:
  // Connects (blocking); throws PgError (connection_lost) naming the server.
  explicit PgConnection(PgConnectOptions options);
  PgConnection(PgConnection&& o) noexcept;
  PgConnection& operator=(PgConnection&& o) noexcept;
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;
  ~PgConnection();

  const PgConnectOptions& options() const { return options_; }
  std::string describe() const { return pg_describe(options_); }
  // The connection is open and not known to be broken.
  bool ok() const;
  // Drops the connection and opens a new one with the same options (the server's
  // prepared statements are gone: prepare() again).
  void reconnect();
  int backend_pid() const;  // for pg_terminate_backend in tests
  int server_version() const;  // 150018 for 15.18

  // Runs `sql` (one or more statements, no parameters); the last result.
  PgResult exec(std::string_view sql);
  // One statement with text parameters $1..$n (nullptr: NULL).
  PgResult exec_params(std::string_view sql, int n, const char* const* values, const int* lengths = nullptr);
  PgResult exec_params(std::string_view sql, const std::vector<std::optional<std::string>>& values);
  // A named server-side prepared statement with `n` text parameters of inferred types.
  void prepare(const std::string& name, std::string_view sql, int n);
  PgResult exec_prepared(const std::string& name, int n, const char* const* values, const int* lengths = nullptr);

  // COPY ... FROM STDIN (text format): begin, then any number of put()s of whole or
  // partial lines, then end(), which returns the rows copied and throws when the server
  // refused the data (naming the COPY statement and the server's line number).
  void copy_in_begin(std::string_view copy_sql);
  void copy_in_put(std::string_view data);
  std::int64_t copy_in_end();
  // The whole COPY in one call.
  std::int64_t copy_in(std::string_view copy_sql, std::string_view data);

  // Low level, for protocols this class does not wrap (logical replication's COPY BOTH):
  // the socket to poll, the PGconn for a .cpp that includes libpq-fe.h.
  int socket() const;
  pg_conn* raw() const { return conn_; }

  // A PgError for the connection's current error, naming `what` (a statement, ...).
  PgError error(std::string_view what, const pg_result* result = nullptr) const;

 private:
  void open();
  void close();
  PgResult check(pg_result* r, std::string_view sql, int ok_status) const;

  PgConnectOptions options_;
  pg_conn* conn_ = nullptr;
  std::string copy_sql_;  // the COPY under way (for its errors)
};

// "name" with embedded quotes doubled: a PostgreSQL identifier as written. A
// schema-qualified table ("public.orders") is quoted part by part: quote_pg_table_name.
std::string quote_pg_identifier(std::string_view name);
// 'text' with embedded quotes doubled (standard_conforming_strings, PostgreSQL's default).
std::string quote_pg_literal(std::string_view text);
void append_pg_literal_text(std::string_view text, std::string& out);
// Flink's PostgreSQL dialect sends table and column names unquoted, so PostgreSQL folds
// them to lower case. These give the same names, quoted (reserved words such as "user"
// then work too): a name folded to lower case (ASCII) and quoted; a table-name option
// ("orders", "public.orders") part by part, a part already in double quotes kept as written.
std::string quote_pg_column_name(std::string_view name);
std::string quote_pg_table_name(std::string_view table_name);

}  // namespace clink::sql
