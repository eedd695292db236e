#pragma once
// Flink's `jdbc` table sink for PostgreSQL (flink-connector-jdbc's JdbcOutputFormat with
// the PostgreSQL dialect), over libpq.
//
// Append mode (the table declares no PRIMARY KEY; the query is insert-only): rows are
// buffered and written with COPY (or multi-row INSERTs). At least once, as Flink: rows
// written after the last checkpoint are written again when the job restores from it.
// Upsert mode (a PRIMARY KEY): +I/+U become INSERT ... ON CONFLICT (key) DO UPDATE, -D a
// DELETE by the key, -U is dropped; a buffer keeps only each key's last change (Flink's
// TableBufferReducedStatementExecutor), written in key-arrival order. Writes are
// idempotent, so replaying after a restore leaves the table as a failure-free run does
// ("effectively exactly-once", as Flink documents).
//
// The buffer is written when it holds sink.buffer-flush.max-rows changes, every
// sink.buffer-flush.interval, at each checkpoint barrier (snapshot_state) and at the end
// of the input; each write is one transaction in one round trip. A write that fails
// because the connection broke (a restarted server, a terminated backend) is retried up
// to sink.max-retries times, reconnecting, after i seconds before retry i (Flink's
// backoff); one the database refuses fails the job, naming the row it refused.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "clink/connectors/jdbc/pg_connection.hpp"
#include "clink/runtime/operator.hpp"
#include "clink/sql/common/column_batch.hpp"

namespace clink::sql {

class JdbcStatements;
struct JdbcKeyIndex;

struct JdbcSinkConfig {
  PgConnectOptions connection;  // url, username, password
  std::string table_name;       // the 'table-name' option as written ("orders", "public.orders")
  std::string table;            // the SQL table (for messages)
  SchemaPtr input_schema;
  std::vector<std::size_t> key_columns;  // the PRIMARY KEY's input columns: upsert mode; empty: append
  std::int64_t buffer_flush_max_rows = 100;      // 0: not by count
  std::int64_t buffer_flush_interval_ms = 1000;  // 0: not by time
  int max_retries = 3;
  std::int64_t retry_backoff_ms = 1000;  // before retry i: i * this
  // How append mode writes (both one round trip per flush); COPY measured faster.
  enum class AppendMethod { kCopy, kInsert };
  AppendMethod append_method = AppendMethod::kCopy;
  // Rows per INSERT statement (a flush of more sends several in its one round trip).
  std::size_t rows_per_statement = 1000;
  // Upsert flushes of at least this many keys go through a staging table (COPY, then
  // INSERT ... SELECT ... ON CONFLICT): three round trips, but no literals to parse.
  std::size_t staging_min_rows = 64;

  bool upsert() const { return !key_columns.empty(); }
};

class JdbcSinkOperator final : public StreamOperator {
 public:
  explicit JdbcSinkOperator(std::shared_ptr<const JdbcSinkConfig> config);
  ~JdbcSinkOperator() override;

  // Connects (with the retries) and checks the table: it exists, has every input
  // column, and (upsert) a PRIMARY KEY or UNIQUE constraint on the key's columns.
  void open(RuntimeContext& ctx) override;
  void process_batch(int input, BatchPtr batch) override;
  void process_watermark(Watermark) override {}
  void on_processing_time_timer(const Timer& timer) override;
  void finish() override { flush(); }
  void snapshot_state(std::int64_t) override { flush(); }
  void close() override;

  // Writes the buffer now (also what the barrier, the interval and the end do).
  void flush();
  std::int64_t rows_written() const { return rows_written_; }
  std::int64_t flushes() const { return flushes_; }

 private:
  void connect_with_retries();
  void check_table();
  void buffer_rows(const ColumnBatch& in);
  void build_statements();
  void write_with_retries();
  [[noreturn]] void fail_naming_row(const PgError& error);
  std::string where() const;  // "table `t` (PostgreSQL table 'x')"

  std::shared_ptr<const JdbcSinkConfig> config_;
  std::unique_ptr<PgConnection> conn_;
  std::unique_ptr<JdbcStatements> statements_;
  std::string quoted_table_;

  ColumnBatch buffer_;            // rows since the last flush, in arrival order
  std::int64_t buffered_changes_ = 0;  // Flink's batchCount: every change added
  // Upsert: each key's last row in buffer_ (the reduction), and the key's bytes scratch.
  std::unique_ptr<JdbcKeyIndex> keys_;
  std::vector<std::uint32_t> upserts_, deletes_, gather_;
  std::string sql_;   // the flush's statements (or COPY data)
  bool timer_armed_ = false;
  bool staging_ = false;        // this flush goes through the staging table
  bool staging_ready_ = false;  // the connection has the staging table
  std::int64_t rows_written_ = 0;
  std::int64_t flushes_ = 0;
};

}  // namespace clink::sql
