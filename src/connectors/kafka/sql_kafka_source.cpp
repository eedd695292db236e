#include "clink/connectors/kafka/sql_kafka_source.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "clink/connectors/sql/sql_dead_letters.hpp"
#include "clink/core/error.hpp"
#include "clink/runtime/runtime_context.hpp"

namespace clink::sql {

namespace {

using kafka::KafkaMessage;

// Decodes the messages of the shared partition reader into the table's columns.
class KafkaSqlReader final : public SqlSourceReader {
 public:
  KafkaSqlReader(const KafkaSourceConfig& c, int subtask, int parallelism) : c_(c), partitions_(c.reader, subtask, parallelism) {
    for (std::size_t j = 0; j < c_.formats.value_columns.size(); ++j) {
      auto it = std::find(c_.formats.key_columns.begin(), c_.formats.key_columns.end(), c_.formats.value_columns[j]);
      value_key_.push_back(it == c_.formats.key_columns.end() ? -1 : static_cast<int>(it - c_.formats.key_columns.begin()));
    }
    for (std::size_t k = 0; k < c_.formats.key_columns.size(); ++k)
      if (std::find(value_key_.begin(), value_key_.end(), static_cast<int>(k)) == value_key_.end()) key_only_.push_back(k);
  }

  void open(RuntimeContext& ctx) override {
    ctx_ = &ctx;
    partitions_.open();
    partitions_.report_backlog_to(&ctx.metrics().pending_records, &ctx.metrics().records_lag_max);
    if (!c_.formats.key_format.empty()) {
      key_decoder_ = make_record_decoder(c_.formats.key_format, c_.formats.key_fields, c_.formats.key_options);
      for (const auto& f : c_.formats.key_fields->fields()) key_scratch_.emplace_back(f.type);
      for (auto& col : key_scratch_) key_ptrs_.push_back(&col);
    }
    value_decoder_ = make_record_decoder(c_.formats.value_format, c_.formats.value_fields, c_.formats.value_options);
  }

  Status poll(ColumnBatch& out, std::size_t max_rows) override {
    const Status status = partitions_.poll(max_rows);
    row_splits_.clear();
    const auto records = partitions_.records();
    if (!records.empty()) {
      value_ptrs_.clear();
      for (std::size_t i : c_.formats.value_columns) value_ptrs_.push_back(&out.column(i));
      for (const KafkaMessage& m : records) decode(m, out);
    }
    if (!dead_letters_.empty()) dead_letters_.flush(*ctx_);
    return status;
  }

  std::int64_t wait_hint_ms() const override { return 5; }
  const std::vector<std::uint64_t>& row_splits() const override { return row_splits_; }
  const std::vector<std::uint64_t>& held_splits() const override { return partitions_.held_splits(); }
  void close() override { partitions_.close(); }

  std::vector<std::string> snapshot_splits() const override { return partitions_.snapshot_splits(); }
  void restore_splits(std::vector<std::string> items) override { partitions_.restore_splits(items); }
  std::vector<std::string> snapshot_shared() const override { return partitions_.snapshot_shared(); }
  void restore_shared(std::vector<std::string> items) override { partitions_.restore_shared(items); }
  void snapshot_taken(std::int64_t checkpoint_id) override { partitions_.snapshot_taken(checkpoint_id); }
  void notify_checkpoint_complete(std::int64_t checkpoint_id) override {
    partitions_.notify_checkpoint_complete(checkpoint_id);
  }

 private:
  void decode(const KafkaMessage& m, ColumnBatch& out) {
    kinds_.clear();
    // The key first, into scratch columns: the value may still fail, or hold 0 or 2 rows.
    if (key_decoder_) {
      for (auto& col : key_scratch_) col.clear();
      if (!m.key) {
        for (auto& col : key_scratch_) col.append_null();
      } else {
        key_kinds_.clear();
        int k = key_decoder_->decode(*m.key, key_ptrs_, key_kinds_, reason_);
        if (k != 1) {
          if (k < 0) reject(m, "key: " + reason_);
          return;
        }
      }
    }
    int rows = 0;
    if (m.value) {
      rows = value_decoder_->decode(*m.value, value_ptrs_, kinds_, reason_);
      if (rows < 0) {
        reject(m, reason_);
        return;
      }
    } else if (c_.upsert) {
      // A tombstone deletes the key's row: the key's columns, the others NULL.
      for (std::size_t j = 0; j < value_ptrs_.size(); ++j) {
        if (value_key_[j] >= 0) value_ptrs_[j]->append_range(key_scratch_[static_cast<std::size_t>(value_key_[j])], 0, 1);
        else value_ptrs_[j]->append_null();
      }
      kinds_.push_back(RowKind::kDelete);
      rows = 1;
    } else {
      rows = value_decoder_->decode_null(value_ptrs_, kinds_);  // raw: a NULL row; the others: none
    }
    if (rows == 0) return;
    const auto n = static_cast<std::size_t>(rows);
    // The key's fields the value does not hold (a key field the value holds too, with
    // value.fields-include ALL, takes the value's, as Flink).
    for (std::size_t k : key_only_) {
      Column& col = out.column(c_.formats.key_columns[k]);
      for (std::size_t r = 0; r < n; ++r) col.append_range(key_scratch_[k], 0, 1);
    }
    for (std::size_t i = 0; i < c_.metadata.size(); ++i) {
      Column& col = out.column(out.num_columns() - c_.metadata.size() + i);
      for (std::size_t r = 0; r < n; ++r) append_metadata(c_.metadata[i], m, col);
    }
    out.row_kinds().insert(out.row_kinds().end(), kinds_.begin(), kinds_.end());
    out.event_times().insert(out.event_times().end(), n, kNoEventTime);
    row_splits_.insert(row_splits_.end(), n, m.split);
  }

  static void append_metadata(KafkaMetadata k, const KafkaMessage& m, Column& col) {
    switch (k) {
      case KafkaMetadata::kTopic: col.append_string(m.topic); return;
      case KafkaMetadata::kPartition: col.append<std::int32_t>(m.partition); return;
      case KafkaMetadata::kOffset: col.append<std::int64_t>(m.offset); return;
      case KafkaMetadata::kTimestamp: col.append<std::int64_t>(m.timestamp_ms * 1000); return;  // TIMESTAMP_LTZ(3) in micros
      case KafkaMetadata::kTimestampType: col.append_string(kafka::timestamp_type_name(m.timestamp_type)); return;
      case KafkaMetadata::kLeaderEpoch:
        col.append_null();  // librdkafka 2.0 does not expose a record's leader epoch (2.1 does)
        return;
      case KafkaMetadata::kHeaders: {
        ValueList map;
        kafka::KafkaHeader h;
        for (std::size_t i = 0; m.header(i, h); ++i) {
          map.items.emplace_back(std::string(h.name));
          map.items.push_back(h.value ? Value(std::string(*h.value)) : Value::null());
        }
        col.append_value(Value(std::move(map)));
        return;
      }
    }
  }

  void reject(const KafkaMessage& m, const std::string& reason) {
    std::string position = fmt::format("partition {} offset {}", m.partition, m.offset);
    if (!c_.dead_letter_wired)
      throw ClinkError(fmt::format("{}: topic {} {}: {}", partitions_.what(), m.topic, position, reason));
    dead_letters_.add(dead_letter_code_of(reason), reason, m.topic, position, m.value.value_or(""));
  }

  const KafkaSourceConfig& c_;
  kafka::KafkaPartitionReader partitions_;
  RuntimeContext* ctx_ = nullptr;
  std::vector<int> value_key_;         // per value column: its index among the key columns, or -1
  std::vector<std::size_t> key_only_;  // the key columns the value does not fill
  std::unique_ptr<RecordDecoder> key_decoder_;
  std::unique_ptr<RecordDecoder> value_decoder_;
  std::vector<Column> key_scratch_;
  std::vector<Column*> key_ptrs_;
  std::vector<Column*> value_ptrs_;
  std::vector<RowKind> kinds_;
  std::vector<RowKind> key_kinds_;
  std::vector<std::uint64_t> row_splits_;  // the split key of each row of the last poll
  std::string reason_;
  DeadLetterCollector dead_letters_;
};

}  // namespace

KafkaSqlSource::KafkaSqlSource(KafkaSourceConfig config) : config_(std::move(config)) {}

std::unique_ptr<SqlSourceReader> KafkaSqlSource::create_reader(int subtask, int parallelism) const {
  return std::make_unique<KafkaSqlReader>(config_, subtask, parallelism);
}

}  // namespace clink::sql
