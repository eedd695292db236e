#pragma once
// The `postgres-cdc` table source (the Flink CDC project's connector): a consistent
// snapshot of the captured tables, then their changes from PostgreSQL's logical
// replication (pgoutput), as a changelog.
//
// One replication slot, so one reader (parallelism 1, as Flink CDC's legacy source).
// Startup ('initial'): the slot is created with an exported snapshot; the tables are
// read in a transaction on that snapshot (SET TRANSACTION SNAPSHOT), then the stream
// starts at the slot's consistent point, so every change is either in the snapshot or in
// the stream, never both. The snapshot is read within one poll of the reader, so no
// checkpoint falls inside it (Flink CDC's legacy source holds its checkpoint lock over
// the snapshot the same way: checkpoints wait until it is read).
//
// Changes are emitted as they arrive (transactions are never buffered whole). The
// checkpointed position is the end LSN of the last transaction emitted whole plus, when
// a checkpoint falls inside a transaction, that transaction's commit LSN and how many of
// its changes were emitted: a restore streams again from the position and skips exactly
// those. The slot's confirmed_flush_lsn advances only when a checkpoint completes (to
// that checkpoint's position, `scan.lsn-commit.checkpoints-num-delay` checkpoints late,
// as Flink CDC), so the server keeps every change a restore may need.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "clink/connectors/jdbc/pg_connection.hpp"
#include "clink/connectors/jdbc/pgoutput.hpp"
#include "clink/connectors/sql/sql_source.hpp"

namespace clink::sql {

struct PostgresCdcConfig {
  PgConnectOptions connect;     // hostname, port, database-name, username, password
  std::string schema_pattern;   // schema-name: a regular expression (Flink CDC's)
  std::string table_pattern;    // table-name: a regular expression
  std::string slot_name;        // slot.name
  std::string publication = "dbz_publication";  // debezium.publication.name
  enum class Startup { kInitial, kLatestOffset } startup = Startup::kInitial;
  // changelog-mode: all (-U/+U and whole -D rows: needs REPLICA IDENTITY FULL) or
  // upsert (+U and key-only -D, normalised by the PRIMARY KEY downstream).
  bool upsert = false;
  int fetch_size = 1024;               // scan.snapshot.fetch.size: rows per FETCH of the snapshot
  int lsn_commit_delay = 3;            // scan.lsn-commit.checkpoints-num-delay
  std::int64_t status_interval_ms = 10000;  // heartbeat.interval.ms: standby status updates
  SchemaPtr output_schema;             // the table's physical columns
  std::vector<std::string> primary_key;
  std::string what;  // "postgres-cdc source of table `orders`"
};

class PostgresCdcSqlSource final : public SqlSource {
 public:
  explicit PostgresCdcSqlSource(PostgresCdcConfig config) : config_(std::move(config)) {}
  std::unique_ptr<SqlSourceReader> create_reader(int subtask, int parallelism) const override;
  const SchemaPtr& output_schema() const override { return config_.output_schema; }
  std::string factory_name() const override { return "sql_postgres_cdc_source"; }
  const PostgresCdcConfig& config() const { return config_; }

 private:
  PostgresCdcConfig config_;
};

// The checkpointed position of the reader (one split), exposed for tests.
struct PostgresCdcPosition {
  bool started = false;   // false: nothing read yet (a restore starts afresh)
  PgLsn lsn = 0;  // stream from here: the end of the last transaction emitted whole
  PgLsn txn_commit_lsn = 0;  // a transaction emitted in part: its commit LSN ...
  std::int64_t txn_changes = 0;   // ... and how many of its changes were emitted
  std::string encode() const;
  static PostgresCdcPosition decode(const std::string& text);  // throws ClinkError
};

}  // namespace clink::sql
