// The jdbc sink operator (include/clink/connectors/jdbc/jdbc_sink.hpp): buffering and the
// upsert reduction, flushing with retries, and the table checks at open.
#include "clink/connectors/jdbc/jdbc_sink.hpp"

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "clink/connectors/jdbc/pg_table_info.hpp"
#include "clink/sql/common/column_key.hpp"
#include "clink/sql/common/time_zone.hpp"
#include "jdbc_statements.hpp"

namespace clink::sql {

// Upsert: the buffered row of each key (its last change).
struct JdbcKeyIndex {
  explicit JdbcKeyIndex(const Schema& schema, std::vector<std::size_t> key) : encoder(schema, std::move(key)) {}
  RowKeyEncoder encoder;
  absl::flat_hash_map<std::string, std::uint32_t> last;
  std::string scratch;
};

namespace {

// Errors worth retrying: the connection broke, or the transaction lost a race
// (serialization failure, deadlock) that a second attempt does not meet again.
bool retriable(const PgError& e) {
  return e.connection_lost() || e.sqlstate() == "40001" || e.sqlstate() == "40P01";
}

}  // namespace

JdbcSinkOperator::JdbcSinkOperator(std::shared_ptr<const JdbcSinkConfig> config)
    : config_(std::move(config)), buffer_(config_->input_schema) {}

JdbcSinkOperator::~JdbcSinkOperator() = default;

std::string JdbcSinkOperator::where() const {
  return fmt::format("jdbc sink of table `{}` (PostgreSQL table '{}' at {})", config_->table, config_->table_name,
                     pg_describe(config_->connection));
}

void JdbcSinkOperator::open(RuntimeContext& ctx) {
  StreamOperator::open(ctx);
  quoted_table_ = quote_pg_table_name(config_->table_name);
  if (config_->upsert()) keys_ = std::make_unique<JdbcKeyIndex>(*config_->input_schema, config_->key_columns);
  connect_with_retries();
  check_table();
}

void JdbcSinkOperator::close() { conn_.reset(); }

void JdbcSinkOperator::connect_with_retries() {
  for (int attempt = 0;; ++attempt) {
    try {
      staging_ready_ = false;  // a new session has no temporary table
      if (conn_) conn_->reconnect();
      else conn_ = std::make_unique<PgConnection>(config_->connection);
      return;
    } catch (const PgError& e) {
      if (attempt >= config_->max_retries)
        throw ClinkError(fmt::format("{}: {} (after {} retries; check 'url', 'username' and 'password')", where(),
                                     e.what(), attempt));
      std::this_thread::sleep_for(std::chrono::milliseconds(config_->retry_backoff_ms * (attempt + 1)));
    }
  }
}

void JdbcSinkOperator::check_table() {
  auto info = describe_pg_table(*conn_, quoted_table_);
  if (!info)
    throw ClinkError(fmt::format("{}: the table does not exist (the 'table-name' option names it; PostgreSQL "
                                 "folds unquoted names to lower case)",
                                 where()));
  const Schema& in = *config_->input_schema;
  std::vector<std::string> quoted, key_names;
  for (std::size_t i = 0; i < in.size(); ++i) {
    std::string folded = quote_pg_column_name(in.name(i));
    std::string bare = folded.substr(1, folded.size() - 2);
    if (!info->column(bare))
      throw ClinkError(fmt::format("{}: column `{}` is not a column of the database table (its columns: {})",
                                   where(), in.name(i), info->column_names()));
    quoted.push_back(folded);
  }
  for (auto k : config_->key_columns) {
    std::string folded = quote_pg_column_name(in.name(k));
    key_names.push_back(folded.substr(1, folded.size() - 2));
  }
  if (config_->upsert() && !info->has_unique_key(key_names)) {
    std::string keys;
    for (const auto& k : key_names) keys += (keys.empty() ? "" : ", ") + k;
    throw ClinkError(fmt::format("{}: the PRIMARY KEY ({}) is not a PRIMARY KEY or UNIQUE constraint of the "
                                 "database table, which upserts (INSERT ... ON CONFLICT) need",
                                 where(), keys));
  }
  statements_ = std::make_unique<JdbcStatements>(quoted_table_, std::move(quoted), config_->key_columns);
}

void JdbcSinkOperator::process_batch(int, BatchPtr batch) {
  const auto& in = column_batch_cast(*batch);
  if (in.size() == 0) return;
  buffer_rows(in);
  if (config_->buffer_flush_max_rows > 0 && buffered_changes_ >= config_->buffer_flush_max_rows) {
    flush();
  } else if (config_->buffer_flush_interval_ms > 0 && !timer_armed_ && buffer_.size() > 0) {
    auto& timers = ctx().timer_service();
    timers.register_processing_time_timer(timers.current_processing_time() + config_->buffer_flush_interval_ms, {}, {});
    timer_armed_ = true;
  }
}

void JdbcSinkOperator::on_processing_time_timer(const Timer&) {
  timer_armed_ = false;
  flush();
}

void JdbcSinkOperator::buffer_rows(const ColumnBatch& in) {
  // -U carries nothing an upsert needs (the +U after it replaces the row): dropped, as
  // the changelog Flink gives a JDBC sink holds none.
  gather_.clear();
  for (std::size_t r = 0; r < in.size(); ++r)
    if (in.row_kind(r) != RowKind::kUpdateBefore) gather_.push_back(static_cast<std::uint32_t>(r));
  if (gather_.empty()) return;
  const auto base = static_cast<std::uint32_t>(buffer_.size());
  if (gather_.size() == in.size()) {
    for (std::size_t c = 0; c < in.num_columns(); ++c) buffer_.column(c).append_range(in.column(c), 0, in.size());
    buffer_.row_kinds().insert(buffer_.row_kinds().end(), in.row_kinds().begin(), in.row_kinds().end());
    buffer_.event_times().insert(buffer_.event_times().end(), in.event_times().begin(), in.event_times().end());
  } else {
    buffer_.append_gather(in, gather_.data(), gather_.size());
  }
  buffered_changes_ += static_cast<std::int64_t>(gather_.size());
  if (!keys_) return;
  for (std::uint32_t r = base; r < buffer_.size(); ++r) {
    keys_->scratch.clear();
    keys_->encoder.encode(buffer_, r, keys_->scratch);
    auto [it, inserted] = keys_->last.try_emplace(keys_->scratch, r);
    if (!inserted) it->second = r;
  }
}

void JdbcSinkOperator::build_statements() {
  sql_.clear();
  upserts_.clear();
  deletes_.clear();
  const std::size_t chunk = std::max<std::size_t>(1, config_->rows_per_statement);
  if (!keys_) {
    upserts_.resize(buffer_.size());
    for (std::uint32_t r = 0; r < buffer_.size(); ++r) upserts_[r] = r;
    if (config_->append_method == JdbcSinkConfig::AppendMethod::kCopy) {
      statements_->append_copy_rows(buffer_, upserts_.data(), upserts_.size(), sql_);
      return;
    }
    for (std::size_t i = 0; i < upserts_.size(); i += chunk)
      statements_->append_insert(buffer_, upserts_.data() + i, std::min(chunk, upserts_.size() - i), false, sql_);
    return;
  }
  // Each key's last change, in the order those changes arrived.
  gather_.clear();
  for (const auto& [key, row] : keys_->last) gather_.push_back(row);
  std::sort(gather_.begin(), gather_.end());
  for (auto r : gather_) (buffer_.row_kind(r) == RowKind::kDelete ? deletes_ : upserts_).push_back(r);
  staging_ = gather_.size() >= config_->staging_min_rows;
  if (staging_) {
    statements_->append_staging_rows(buffer_, upserts_.data(), upserts_.size(), false, sql_);
    statements_->append_staging_rows(buffer_, deletes_.data(), deletes_.size(), true, sql_);
    return;
  }
  for (std::size_t i = 0; i < upserts_.size(); i += chunk)
    statements_->append_insert(buffer_, upserts_.data() + i, std::min(chunk, upserts_.size() - i), true, sql_);
  for (std::size_t i = 0; i < deletes_.size(); i += chunk)
    statements_->append_delete(buffer_, deletes_.data() + i, std::min(chunk, deletes_.size() - i), sql_);
}

void JdbcSinkOperator::flush() {
  if (buffer_.size() == 0) return;
  build_statements();
  write_with_retries();
  rows_written_ += static_cast<std::int64_t>(upserts_.size() + deletes_.size());
  ++flushes_;
  buffer_.clear();
  buffered_changes_ = 0;
  if (keys_) keys_->last.clear();
}

void JdbcSinkOperator::write_with_retries() {
  const bool copy = !keys_ && config_->append_method == JdbcSinkConfig::AppendMethod::kCopy;
  for (int attempt = 0;; ++attempt) {
    try {
      if (!conn_ || !conn_->ok()) connect_with_retries();
      // Several statements in one simple query run as one transaction: all or nothing.
      if (copy) {
        conn_->copy_in(statements_->copy_statement(), sql_);
      } else if (keys_ && staging_) {
        if (!staging_ready_) {
          conn_->exec(statements_->staging_create());
          staging_ready_ = true;
        }
        conn_->exec("BEGIN");
        conn_->copy_in(statements_->staging_copy(), sql_);
        conn_->exec(statements_->staging_merge());
      } else {
        conn_->exec(sql_);
      }
      return;
    } catch (const PgError& e) {
      if (!retriable(e)) fail_naming_row(e);
      if (attempt >= config_->max_retries)
        throw ClinkError(fmt::format("{}: writing {} rows failed after {} retries: {}", where(),
                                     upserts_.size() + deletes_.size(), attempt, e.what()));
      std::this_thread::sleep_for(std::chrono::milliseconds(config_->retry_backoff_ms * attempt));
      try {
        conn_->reconnect();
      } catch (const PgError&) {
        // The server is still away: the next attempt reconnects (or fails) again.
      }
    }
  }
}

// The flush was refused as a whole: find the first row the database refuses alone (each
// tried in a transaction rolled back at the end, so nothing is written) and name it.
void JdbcSinkOperator::fail_naming_row(const PgError& error) {
  std::string one;
  try {
    conn_->exec("ROLLBACK");  // a staging flush's transaction (none: a warning, ignored)
    conn_->exec("BEGIN");
    auto try_row = [&](std::uint32_t r, bool del) {
      one.clear();
      if (del) statements_->append_delete(buffer_, &r, 1, one);
      else if (keys_) statements_->append_insert(buffer_, &r, 1, true, one);
      else statements_->append_insert(buffer_, &r, 1, false, one);
      try {
        conn_->exec(one);
      } catch (const PgError& e) {
        if (e.connection_lost()) throw;
        conn_->exec("ROLLBACK");
        throw ClinkError(fmt::format("{}: the database refused the row {}: {}", where(),
                                     format_row(buffer_, r, *TimeZone::utc()), e.what()));
      }
    };
    for (auto r : upserts_) try_row(r, false);
    for (auto r : deletes_) try_row(r, true);
    conn_->exec("ROLLBACK");
  } catch (const PgError&) {
    // Diagnosing failed too: report the flush's own error.
  }
  throw ClinkError(fmt::format("{}: writing {} rows failed: {}", where(), upserts_.size() + deletes_.size(),
                               error.what()));
}

}  // namespace clink::sql
