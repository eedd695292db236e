#pragma once
// Flink's SQL Gateway REST endpoint (sql-gateway.endpoint.rest.*): the /v1../v4 sessions,
// statements, operations and results paths that Flink's `sql-client.sh gateway` and its
// JDBC driver speak, with Flink's JSON bodies (docs/sql-gateway.md).
//
// This layer owns the protocol: sessions by their UUID handle, each statement an
// operation run on a thread of its own, its result served page by page through result
// tokens (NOT_READY while the statement runs, PAYLOAD pages, EOS). What a statement does
// is the SessionBackend's (the coordinator plans it over its catalog, submits INSERTs to
// its Dispatcher and runs SELECTs whose rows come back as a QueryRows changelog).
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "clink/sql/common/row_kind.hpp"

namespace clink::cluster::gateway {

struct ResultColumn {
  std::string name;
  std::string type;  // clink's LogicalType text (sql::LogicalType::to_string)
};

// One changelog row; cells as clink prints them (nullopt: NULL).
struct ResultRow {
  sql::RowKind kind = sql::RowKind::kInsert;
  std::vector<std::optional<std::string>> cells;
  // ROW / ARRAY / MAP cells (not NULL) also as JSON text, by column index, as Flink's
  // RowDataToJsonConverters write them for rowFormat=JSON (cells keeps PLAIN_TEXT's).
  std::map<std::size_t, std::string> nested_json;
};

// The rows of a running SELECT, taken by the operation that serves them.
class QueryRows {
 public:
  virtual ~QueryRows() = default;
  // The rows produced since the last call (none when none are pending).
  virtual std::vector<ResultRow> take() = 0;
  // True once the job ended and every row was taken; throws the job's failure.
  virtual bool finished() = 0;
  virtual void cancel() = 0;  // the operation was cancelled or closed
};

// What a statement became.
struct StatementOutcome {
  enum class Kind {
    kOk,     // DDL, SET, USE: Flink's SUCCESS with one "OK" row
    kTable,  // SHOW / DESCRIBE / EXPLAIN: its rows
    kJob,    // INSERT / statement set: submitted, the job id as its one row
    kQuery,  // SELECT: a job whose rows `query` serves
  };
  Kind kind = Kind::kOk;
  std::vector<ResultColumn> columns;  // kTable, kQuery
  std::vector<ResultRow> rows;        // kTable
  std::string job_id;                 // kJob, kQuery (32 hex)
  std::shared_ptr<QueryRows> query;   // kQuery
};

// One gateway session's SQL state (its SETs, its current catalog and database) over
// the coordinator's catalog. Called from one operation thread at a time.
class SessionBackend {
 public:
  virtual ~SessionBackend() = default;
  // Runs one statement (a trailing ';' allowed); throws with a message naming the
  // problem and its position.
  virtual StatementOutcome execute(const std::string& statement) = 0;
  // The session's configuration: its properties and its SETs (GET /sessions/:s).
  virtual std::map<std::string, std::string> properties() const = 0;
};

// Makes a session's backend from the properties of POST /sessions.
using SessionFactory = std::function<std::unique_ptr<SessionBackend>(const std::map<std::string, std::string>& properties)>;

struct SqlGatewayOptions {
  std::string address = "127.0.0.1";  // sql-gateway.endpoint.rest.address
  int port = 8083;                     // sql-gateway.endpoint.rest.port (0: any free port)
  std::string version = "2.3.0";       // GET /info's version (the Flink release it speaks)
  int max_rows_per_page = 1000;        // rows of one PAYLOAD page
  // sql-gateway.session.idle-timeout: a session nobody touched for this long is closed
  // (its queries cancelled); 0: never.
  std::chrono::milliseconds session_idle_timeout = std::chrono::minutes(10);
};

// The rows a SELECT's gateway_collect_sink posted (collect_sink.hpp), kept until taken.
class CollectedRows {
 public:
  // Rows kept for a client that does not fetch them: beyond this, a sink's post is
  // refused (429) and retried, which backpressures the job (Flink's collect buffer).
  static constexpr std::size_t kMaxBuffered = 100'000;

  void append(std::vector<ResultRow> rows);
  std::vector<ResultRow> take();
  bool full();

 private:
  std::mutex mu_;
  std::vector<ResultRow> rows_;
};

class SqlGateway {
 public:
  SqlGateway(SessionFactory factory, SqlGatewayOptions options);
  ~SqlGateway();  // stops: closes every session (cancelling their queries)
  SqlGateway(const SqlGateway&) = delete;
  SqlGateway& operator=(const SqlGateway&) = delete;

  // Binds and serves on threads of its own; throws ClinkError naming the address when it
  // cannot bind.
  void start();
  void stop();
  int port() const;

  // Accepts the batches gateway_collect_sinks post under `result_id` (rows of
  // `columns`, timestamps shown in `time_zone`) until close_collect.
  std::shared_ptr<CollectedRows> open_collect(const std::string& result_id, const std::vector<ResultColumn>& columns,
                                              const std::string& time_zone);
  void close_collect(const std::string& result_id);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace clink::cluster::gateway
