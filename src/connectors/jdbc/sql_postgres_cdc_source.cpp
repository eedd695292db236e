#include "clink/connectors/jdbc/sql_postgres_cdc_source.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "clink/connectors/jdbc/pg_values.hpp"
#include "clink/core/error.hpp"
#include "clink/runtime/runtime_context.hpp"
#include "pg_replication.hpp"

namespace clink::sql {

std::string PostgresCdcPosition::encode() const {
  return fmt::format("pgcdc1 {} {} {} {}", started ? 1 : 0, format_pg_lsn(lsn), format_pg_lsn(txn_commit_lsn),
                     txn_changes);
}

PostgresCdcPosition PostgresCdcPosition::decode(const std::string& text) {
  std::istringstream in(text);
  std::string tag, lsn, commit;
  int started = 0;
  PostgresCdcPosition p;
  in >> tag >> started >> lsn >> commit >> p.txn_changes;
  if (!in || tag != "pgcdc1") throw ClinkError("postgres-cdc: malformed checkpoint position '" + text + "'");
  p.started = started != 0;
  p.lsn = parse_pg_lsn(lsn);
  p.txn_commit_lsn = parse_pg_lsn(commit);
  return p;
}

namespace {

using Clock = std::chrono::steady_clock;

struct CapturedTable {
  std::string schema, name;
  std::string quoted() const { return quote_pg_identifier(schema) + "." + quote_pg_identifier(name); }
  std::string text() const { return schema + "." + name; }
  auto operator<=>(const CapturedTable&) const = default;
};

// A relation of the stream: whether it is captured, and where each output column is
// in its tuples.
struct StreamRelation {
  bool captured = false;
  std::string text;             // schema.table, for messages
  std::vector<int> source_of;   // per output column: the tuple column
  std::vector<std::string> names;  // the relation's column names, for messages
};

std::int64_t pg_now_micros() {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch());
  return us.count() - kPgEpochOffsetMicros;
}

// Flink CDC's PostgresValueValidator message, for a change without its old row.
std::string replica_identity_message(const std::string& table) {
  auto dot = table.find('.');
  return fmt::format(
      "The \"before\" field of UPDATE/DELETE message is null, please check the Postgres table has been set REPLICA "
      "IDENTITY to FULL level. You can update the setting by running the command in Postgres 'ALTER TABLE {}.{} "
      "REPLICA IDENTITY FULL'. (Or read the table with 'changelog-mode' = 'upsert' and a PRIMARY KEY.)",
      table.substr(0, dot), table.substr(dot + 1));
}

class PostgresCdcReader final : public SqlSourceReader {
 public:
  PostgresCdcReader(const PostgresCdcConfig& c, int subtask) : c_(c), subtask_(subtask) {}

  void open(RuntimeContext& ctx) override {
    ctx_ = &ctx;
    // A fresh start reads on subtask 0 (the planner runs the source at parallelism 1);
    // after a restore, the subtask the split went to.
    active_ = !ctx.is_restored() && subtask_ == 0;
  }

  std::vector<std::string> snapshot_splits() const override {
    if (!active_) return {};
    return {position().encode()};
  }
  void restore_splits(std::vector<std::string> splits) override {
    if (splits.size() > 1) throw ClinkError(c_.what + ": a checkpoint with " + std::to_string(splits.size()) + " positions (one slot has one)");
    active_ = !splits.empty();
    if (active_) restored_ = PostgresCdcPosition::decode(splits[0]);
  }
  void snapshot_taken(std::int64_t checkpoint_id) override {
    if (active_ && (started_ || restored_)) pending_flush_[checkpoint_id] = position().lsn;
  }
  // The slot's confirmed_flush_lsn follows completed checkpoints, `lsn_commit_delay`
  // checkpoints late (Flink CDC's PostgresSourceReader): a restore from any of the last
  // few checkpoints still finds its changes on the server.
  void notify_checkpoint_complete(std::int64_t checkpoint_id) override {
    if (!active_) return;
    completed_.insert(checkpoint_id);
    if (static_cast<int>(completed_.size()) <= c_.lsn_commit_delay) return;
    const std::int64_t id = *completed_.begin();
    completed_.erase(completed_.begin());
    auto it = pending_flush_.find(id);
    if (it == pending_flush_.end()) return;
    flushed_ = std::max(flushed_, it->second);
    pending_flush_.erase(pending_flush_.begin(), std::next(it));
    if (stream_ && stream_->streaming()) send_status(false);
  }

  std::int64_t wait_hint_ms() const override { return 2; }

  void close() override {
    stream_.reset();
    meta_.reset();
  }

  Status poll(ColumnBatch& out, std::size_t max_rows) override {
    if (!active_) return Status::kNothingAvailable;
    if (!started_) {
      start(out, max_rows);
      return Status::kMore;
    }
    const auto now = Clock::now();
    if (now >= next_status_) send_status(false);
    bool progressed = false;
    std::string_view bytes;
    while (out.size() + 1 < max_rows && stream_->next(bytes)) {
      progressed = true;
      parse_replication_message(bytes, msg_);
      if (msg_.kind == ReplicationMessage::Kind::kKeepalive) {
        received_ = std::max(received_, msg_.wal_end);
        // Outside a transaction the server has sent every transaction that committed
        // before wal_end: a restore may start there (keeps the slot moving while the
        // captured tables are quiet).
        if (!in_txn_ && skip_left_ == 0) lsn_ = std::max(lsn_, msg_.wal_end);
        if (msg_.reply_requested) send_status(false);
        continue;
      }
      received_ = std::max(received_, msg_.wal_start);
      decode_pgoutput(msg_.data, change_);
      handle(out);
    }
    return progressed ? Status::kMore : Status::kNothingAvailable;
  }

 private:
  PostgresCdcPosition position() const {
    // Not started yet after a restore: still the restored position (a checkpoint before
    // the first poll must not turn into a fresh start).
    if (!started_ && restored_) return *restored_;
    PostgresCdcPosition p;
    p.started = started_;
    p.lsn = lsn_;
    if (in_txn_ && txn_changes_ > 0) {
      p.txn_commit_lsn = txn_commit_;
      p.txn_changes = txn_changes_;
    } else if (skip_left_ > 0) {
      // Restored inside a transaction the stream has not sent again yet.
      p.txn_commit_lsn = skip_commit_;
      p.txn_changes = skip_left_;
    }
    return p;
  }

  // ---- startup: tables, publication, slot, snapshot, stream --------------------------

  void start(ColumnBatch& out, std::size_t max_rows) {
    meta_ = std::make_unique<PgConnection>(c_.connect);
    {
      PgResult r = meta_->exec("SHOW wal_level");
      std::string level(r.value(0, 0));
      if (level != "logical")
        throw ClinkError(fmt::format("{}: the server's wal_level is '{}', logical decoding needs wal_level = logical "
                                     "(set it in postgresql.conf and restart the server)",
                                     c_.what, level));
    }
    find_tables();
    ensure_publication();
    try {
      stream_ = std::make_unique<PgReplicationConnection>(c_.connect);
    } catch (const PgError& e) {
      throw ClinkError(fmt::format("{}: cannot open a replication connection (the user needs the REPLICATION "
                                   "attribute or superuser: ALTER ROLE ... REPLICATION): {}",
                                   c_.what, e.what()));
    }
    const std::optional<SlotInfo> slot = find_slot();
    PgLsn from = 0;
    if (restored_ && restored_->started) {
      if (!slot)
        throw ClinkError(fmt::format("{}: the replication slot '{}' does not exist any more, so the changes after {} "
                                     "that the checkpoint needs are gone (start the job afresh)",
                                     c_.what, c_.slot_name, format_pg_lsn(restored_->lsn)));
      from = restored_->lsn;
      skip_commit_ = restored_->txn_commit_lsn;
      skip_left_ = restored_->txn_changes;
    } else if (c_.startup == PostgresCdcConfig::Startup::kInitial) {
      // The snapshot must be consistent with the slot: only a slot created now exports one.
      if (slot) meta_->exec_params("SELECT pg_drop_replication_slot($1)", {c_.slot_name});
      auto created = create_slot(true);
      read_snapshot(created.snapshot_name, out, max_rows);
      from = created.consistent_point;
    } else if (slot) {
      // latest-offset with an existing slot: the changes from now on (the server skips
      // the transactions that committed before the start position).
      from = parse_pg_lsn(meta_->exec("SELECT pg_current_wal_lsn()").value(0, 0));
    } else {
      from = create_slot(false).consistent_point;
    }
    lsn_ = from;
    received_ = from;
    started_ = true;
    try {
      stream_->start(c_.slot_name, from, c_.publication);
    } catch (const PgError& e) {
      throw ClinkError(c_.what + ": " + e.what());
    }
    next_status_ = Clock::now() + std::chrono::milliseconds(c_.status_interval_ms);
  }

  // The tables schema-name and table-name match (regular expressions over the whole
  // name), each holding every column of the table.
  void find_tables() {
    PgResult r = meta_->exec(
        "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
        "AND n.nspname NOT LIKE 'pg_toast%' ORDER BY 1, 2");
    std::regex schema_re, table_re;
    try {
      schema_re = std::regex(c_.schema_pattern);
      table_re = std::regex(c_.table_pattern);
    } catch (const std::regex_error& e) {
      throw ClinkError(fmt::format("{}: 'schema-name' / 'table-name' is not a regular expression: {}", c_.what, e.what()));
    }
    for (int i = 0; i < r.rows(); ++i) {
      std::string schema(r.value(i, 0)), name(r.value(i, 1));
      if (std::regex_match(schema, schema_re) && std::regex_match(name, table_re)) tables_.push_back({schema, name});
    }
    if (tables_.empty())
      throw ClinkError(fmt::format("{}: no table of database {} matches 'schema-name' = '{}' and 'table-name' = '{}'",
                                   c_.what, meta_->describe(), c_.schema_pattern, c_.table_pattern));
    for (const auto& t : tables_) {
      PgResult cols = meta_->exec_params(
          "SELECT attname FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped "
          "ORDER BY attnum",
          {t.quoted()});
      std::vector<std::string> names;
      for (int i = 0; i < cols.rows(); ++i) names.emplace_back(cols.value(i, 0));
      for (const auto& f : c_.output_schema->fields())
        if (find_column(names, f.name) < 0)
          throw ClinkError(fmt::format("{}: the PostgreSQL table {} has no column `{}` (its columns: {})", c_.what,
                                       t.text(), f.name, fmt::join(names, ", ")));
    }
  }

  static int find_column(const std::vector<std::string>& names, const std::string& name) {
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return static_cast<int>(i);
    auto lower = [](std::string s) {
      std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return std::tolower(ch); });
      return s;
    };
    for (std::size_t i = 0; i < names.size(); ++i)
      if (lower(names[i]) == lower(name)) return static_cast<int>(i);
    return -1;
  }

  // The publication (Debezium's publication.name): created FOR the captured tables when
  // missing; an existing one must publish them.
  void ensure_publication() {
    PgResult pub = meta_->exec_params("SELECT puballtables FROM pg_publication WHERE pubname = $1", {c_.publication});
    if (pub.rows() == 0) {
      std::string list;
      for (const auto& t : tables_) list += (list.empty() ? "" : ", ") + t.quoted();
      meta_->exec(fmt::format("CREATE PUBLICATION {} FOR TABLE {}", quote_pg_identifier(c_.publication), list));
      return;
    }
    if (pub.value(0, 0) == "t") return;
    PgResult has = meta_->exec_params("SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = $1",
                                      {c_.publication});
    std::set<CapturedTable> published;
    for (int i = 0; i < has.rows(); ++i) published.insert({std::string(has.value(i, 0)), std::string(has.value(i, 1))});
    for (const auto& t : tables_)
      if (!published.count(t))
        throw ClinkError(fmt::format("{}: the publication '{}' does not publish the table {} (ALTER PUBLICATION {} ADD "
                                     "TABLE {}, or name another publication with 'debezium.publication.name')",
                                     c_.what, c_.publication, t.text(), quote_pg_identifier(c_.publication), t.quoted()));
  }

  struct SlotInfo {
    std::string plugin;
  };
  std::optional<SlotInfo> find_slot() {
    PgResult r = meta_->exec_params(
        "SELECT plugin, active, active_pid, database FROM pg_replication_slots WHERE slot_name = $1", {c_.slot_name});
    if (r.rows() == 0) return std::nullopt;
    SlotInfo s{std::string(r.value(0, 0))};
    if (s.plugin != "pgoutput")
      throw ClinkError(fmt::format("{}: the replication slot '{}' decodes with '{}'; postgres-cdc reads pgoutput (drop "
                                   "the slot or choose another 'slot.name')",
                                   c_.what, c_.slot_name, s.plugin));
    if (r.value(0, 1) == "t")
      throw ClinkError(fmt::format("{}: replication slot \"{}\" is active for PID {} (another reader uses it: give each "
                                   "job its own 'slot.name')",
                                   c_.what, c_.slot_name, r.value(0, 2)));
    return s;
  }

  PgReplicationConnection::CreatedSlot create_slot(bool export_snapshot) {
    try {
      return stream_->create_slot(c_.slot_name, export_snapshot);
    } catch (const PgError& e) {
      throw ClinkError(fmt::format("{}: cannot create the replication slot '{}': {}", c_.what, c_.slot_name, e.what()));
    }
  }

  // The captured tables as of the slot's consistent point, as +I rows. Full batches go
  // out at once (this runs inside one poll, so no checkpoint falls inside the snapshot);
  // the last one is the poll's own.
  void read_snapshot(const std::string& snapshot, ColumnBatch& out, std::size_t max_rows) {
    meta_->exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    meta_->exec("SET TRANSACTION SNAPSHOT " + quote_pg_literal(snapshot));
    const std::size_t cap = std::max<std::size_t>(max_rows, 1);
    auto batch = std::make_unique<ColumnBatch>(c_.output_schema, cap);
    std::string select_list;
    for (const auto& t : tables_) {
      // The columns by the table's own spelling (a DDL name matched case-insensitively).
      PgResult cols = meta_->exec_params(
          "SELECT attname FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped",
          {t.quoted()});
      std::vector<std::string> names;
      for (int i = 0; i < cols.rows(); ++i) names.emplace_back(cols.value(i, 0));
      select_list.clear();
      for (const auto& f : c_.output_schema->fields())
        select_list += (select_list.empty() ? "" : ", ") + quote_pg_identifier(names[static_cast<std::size_t>(find_column(names, f.name))]);
      meta_->exec(fmt::format("DECLARE clink_cdc_snapshot NO SCROLL CURSOR FOR SELECT {} FROM {}", select_list, t.quoted()));
      const std::string fetch = fmt::format("FETCH FORWARD {} FROM clink_cdc_snapshot", c_.fetch_size);
      std::int64_t row_number = 0;
      for (;;) {
        PgResult rows = meta_->exec(fetch);
        if (rows.rows() == 0) break;
        for (int i = 0; i < rows.rows(); ++i) {
          ++row_number;
          for (int col = 0; col < rows.columns(); ++col) {
            Column& dst = batch->column(static_cast<std::size_t>(col));
            if (rows.is_null(i, col)) {
              dst.append_null();
              continue;
            }
            try {
              append_pg_text_value(dst, rows.value(i, col));
            } catch (const PgValueError& e) {
              throw ClinkError(fmt::format("{}: snapshot of {}, row {}, column `{}`: {}", c_.what, t.text(), row_number,
                                           c_.output_schema->field(static_cast<std::size_t>(col)).name, e.what()));
            }
          }
          batch->commit_rows(1, RowKind::kInsert);
          if (batch->size() >= cap) {
            ctx_->output().emit(std::move(batch));
            batch = std::make_unique<ColumnBatch>(c_.output_schema, cap);
          }
        }
      }
      meta_->exec("CLOSE clink_cdc_snapshot");
    }
    meta_->exec("COMMIT");
    // The rows after the last full batch go out with the poll.
    if (batch->size() > 0) {
      for (std::size_t c = 0; c < out.num_columns(); ++c) out.column(c).append_range(batch->column(c), 0, batch->size());
      out.commit_rows(batch->size(), RowKind::kInsert);
    }
  }

  // ---- the stream --------------------------------------------------------------------

  void send_status(bool reply) {
    stream_->send(standby_status_update(received_, flushed_, flushed_, pg_now_micros(), reply));
    next_status_ = Clock::now() + std::chrono::milliseconds(c_.status_interval_ms);
  }

  void handle(ColumnBatch& out) {
    using K = PgoutputMessage::Kind;
    const PgoutputMessage& m = change_;
    switch (m.kind) {
      case K::kBegin:
        in_txn_ = true;
        txn_commit_ = m.commit_lsn;
        txn_changes_ = 0;
        if (skip_left_ > 0 && m.commit_lsn != skip_commit_)
          throw ClinkError(fmt::format("{}: the checkpoint ends inside the transaction that commits at {}, but the slot "
                                       "streams the one committing at {} first",
                                       c_.what, format_pg_lsn(skip_commit_), format_pg_lsn(m.commit_lsn)));
        return;
      case K::kCommit:
        in_txn_ = false;
        lsn_ = std::max(lsn_, m.end_lsn);
        received_ = std::max(received_, m.end_lsn);
        txn_changes_ = 0;
        skip_left_ = 0;
        return;
      case K::kRelation: relation(m.relation); return;
      case K::kInsert:
      case K::kUpdate:
      case K::kDelete:
        ++txn_changes_;
        if (skip_left_ > 0) {
          --skip_left_;  // emitted before the checkpoint this run restored
          return;
        }
        change(out);
        return;
      case K::kTruncate:
        // Flink CDC (Debezium's default) skips TRUNCATE: the rows it removed stay downstream.
        ++txn_changes_;
        if (skip_left_ > 0) --skip_left_;
        ++truncates_skipped_;
        return;
      case K::kOrigin:
      case K::kType:
      case K::kMessage: return;
    }
  }

  void relation(const PgoutputRelation& rel) {
    StreamRelation& r = relations_[rel.oid];
    r.text = rel.schema + "." + rel.name;
    r.captured = std::find(tables_.begin(), tables_.end(), CapturedTable{rel.schema, rel.name}) != tables_.end();
    r.names.clear();
    for (const auto& col : rel.columns) r.names.push_back(col.name);
    r.source_of.clear();
    if (!r.captured) return;
    for (const auto& f : c_.output_schema->fields()) {
      int at = find_column(r.names, f.name);
      if (at < 0)
        throw ClinkError(fmt::format("{}: the PostgreSQL table {} no longer has the column `{}` (its columns: {})",
                                     c_.what, r.text, f.name, fmt::join(r.names, ", ")));
      r.source_of.push_back(at);
    }
  }

  void change(ColumnBatch& out) {
    using K = PgoutputMessage::Kind;
    const PgoutputMessage& m = change_;
    auto it = relations_.find(m.relation_oid);
    if (it == relations_.end())
      throw ClinkError(fmt::format("{}: a change of relation {} before its Relation message", c_.what, m.relation_oid));
    const StreamRelation& rel = it->second;
    if (!rel.captured) return;
    const bool full_old = m.old_kind == 'O';
    switch (m.kind) {
      case K::kInsert: append(out, rel, m.new_tuple, nullptr, RowKind::kInsert); return;
      case K::kUpdate:
        if (c_.upsert) {
          append(out, rel, m.new_tuple, full_old ? &m.old_tuple : nullptr, RowKind::kUpdateAfter);
          return;
        }
        if (!full_old) throw ClinkError(c_.what + ": " + replica_identity_message(rel.text));
        append(out, rel, m.old_tuple, nullptr, RowKind::kUpdateBefore);
        append(out, rel, m.new_tuple, &m.old_tuple, RowKind::kUpdateAfter);
        return;
      case K::kDelete:
        // Upsert mode: the key ('K' holds the identity's columns, the others NULL).
        if (!full_old && !c_.upsert) throw ClinkError(c_.what + ": " + replica_identity_message(rel.text));
        append(out, rel, m.old_tuple, nullptr, RowKind::kDelete);
        return;
      default: return;
    }
  }

  // One row from a tuple; an unchanged TOASTed value ('u') comes from the old row.
  void append(ColumnBatch& out, const StreamRelation& rel, const PgoutputTuple& tuple, const PgoutputTuple* old,
              RowKind kind) {
    for (std::size_t i = 0; i < rel.source_of.size(); ++i) {
      const auto at = static_cast<std::size_t>(rel.source_of[i]);
      Column& dst = out.column(i);
      if (at >= tuple.size()) {
        dst.append_null();
        continue;
      }
      const PgoutputCell* cell = &tuple[at];
      if (cell->kind == 'u') {
        if (!old || at >= old->size() || (*old)[at].kind == 'u')
          throw ClinkError(fmt::format("{}: the update of {} at {} leaves column `{}` unchanged and TOASTed, so its "
                                       "value is not in the stream: set REPLICA IDENTITY FULL on the table",
                                       c_.what, rel.text, format_pg_lsn(txn_commit_), rel.names[at]));
        cell = &(*old)[at];
      }
      if (cell->kind == 'n') {
        dst.append_null();
        continue;
      }
      try {
        append_pg_text_value(dst, cell->value);
      } catch (const PgValueError& e) {
        throw ClinkError(fmt::format("{}: {} column `{}` in the transaction committing at {}: {}", c_.what, rel.text,
                                     rel.names[at], format_pg_lsn(txn_commit_), e.what()));
      }
    }
    out.commit_rows(1, kind);
  }

  const PostgresCdcConfig& c_;
  const int subtask_;
  RuntimeContext* ctx_ = nullptr;
  bool active_ = false;
  bool started_ = false;
  std::optional<PostgresCdcPosition> restored_;
  std::unique_ptr<PgConnection> meta_;
  std::unique_ptr<PgReplicationConnection> stream_;
  std::vector<CapturedTable> tables_;
  std::map<std::uint32_t, StreamRelation> relations_;
  ReplicationMessage msg_;
  PgoutputMessage change_;
  // The position: lsn_ = where a restore streams from; the transaction under way.
  PgLsn lsn_ = 0;
  bool in_txn_ = false;
  PgLsn txn_commit_ = 0;
  std::int64_t txn_changes_ = 0;
  // A restore inside a transaction: its commit LSN and the changes still to skip.
  PgLsn skip_commit_ = 0;
  std::int64_t skip_left_ = 0;
  PgLsn received_ = 0;  // the stream's position (status updates: written)
  PgLsn flushed_ = 0;   // confirmed to the slot (completed checkpoints only)
  Clock::time_point next_status_{};
  std::map<std::int64_t, PgLsn> pending_flush_;  // checkpoint -> its position
  std::set<std::int64_t> completed_;             // completed, not yet confirmed
  std::int64_t truncates_skipped_ = 0;
};

}  // namespace

std::unique_ptr<SqlSourceReader> PostgresCdcSqlSource::create_reader(int subtask, int) const {
  return std::make_unique<PostgresCdcReader>(config_, subtask);
}

}  // namespace clink::sql
