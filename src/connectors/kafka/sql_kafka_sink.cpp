#include "clink/connectors/kafka/sql_kafka_sink.hpp"

#include <chrono>
#include <unordered_map>
#include <vector>

#include "clink/runtime/runtime_context.hpp"

namespace clink::sql {

namespace {

// Encodes rows with the table's formats and hands the bytes to the shared record writer.
class KafkaSqlWriter final : public TransactionalSinkWriter<ColumnBatch> {
 public:
  KafkaSqlWriter(const KafkaSinkConfig& c, int subtask, int parallelism) : c_(c), records_(c.writer, subtask, parallelism) {}

  void open(RuntimeContext& ctx) override {
    if (!c_.formats.key_format.empty()) {
      key_encoder_ = make_record_encoder(c_.formats.key_format, c_.formats.key_fields, c_.formats.key_options);
      key_cols_.resize(c_.formats.key_columns.size());
    }
    value_encoder_ = make_record_encoder(c_.formats.value_format, c_.formats.value_fields, c_.formats.value_options);
    value_cols_.resize(c_.formats.value_columns.size());
    records_.open(ctx.restored_checkpoint_id());
  }

  void begin_transaction(std::int64_t transaction_id) override { records_.begin_transaction(transaction_id); }

  void write(const ColumnBatch& batch) override {
    for (std::size_t i = 0; i < c_.formats.key_columns.size(); ++i) key_cols_[i] = &batch.column(c_.formats.key_columns[i]);
    for (std::size_t i = 0; i < c_.formats.value_columns.size(); ++i) value_cols_[i] = &batch.column(c_.formats.value_columns[i]);
    for (std::size_t row = 0; row < batch.size(); ++row) {
      const RowKind kind = batch.row_kind(row);
      bool has_value = true;
      value_.clear();
      if (c_.upsert) {
        // -U and -D are tombstones, as Flink's upsert-kafka writes them; a -U followed by
        // its key's +U is left out (the +U replaces the row), so a tombstone goes out for a
        // -U only when a filter removed its +U (WHERE cnt < 10 over an aggregate).
        if (kind == RowKind::kUpdateBefore && followed_by_its_update(batch, row)) continue;
        has_value = is_accumulate(kind);
        if (has_value) value_encoder_->encode(value_cols_, row, RowKind::kInsert, value_);
      } else if (value_encoder_->is_null_message(value_cols_, row)) {
        has_value = false;  // raw's NULL: a record without value, as Flink
      } else if (!value_encoder_->encode(value_cols_, row, kind, value_)) {
        continue;
      }
      key_.clear();
      if (key_encoder_) key_encoder_->encode(key_cols_, row, RowKind::kInsert, key_);
      if (buffering()) {
        // upsert-kafka's reduce buffer: only the last change of a key is written.
        if (buffer_.empty()) buffer_started_ = std::chrono::steady_clock::now();
        auto& slot = buffer_[key_];
        slot.first = has_value;
        slot.second.assign(value_);
        continue;
      }
      if (c_.timestamp_column || c_.headers_column) {
        send_with_metadata(has_value, batch, row);
        continue;
      }
      records_.add(key(key_), value(has_value, value_));  // batched: one producer call per batch
    }
    if (buffering() && (buffer_.size() >= static_cast<std::size_t>(c_.buffer_flush_max_rows) ||
                        std::chrono::steady_clock::now() - buffer_started_ >=
                            std::chrono::milliseconds(c_.buffer_flush_interval_ms)))
      flush_buffer();
    records_.send_queued();
  }

  std::string pre_commit() override {
    flush_buffer();
    return records_.pre_commit();
  }
  void commit(const std::string& committable) override { records_.commit(committable); }
  void abort() override { records_.abort(); }
  void close() override { records_.close(); }

 private:
  std::optional<std::string_view> key(const std::string& bytes) const {
    return key_encoder_ ? std::optional<std::string_view>(bytes) : std::nullopt;
  }
  static std::optional<std::string_view> value(bool has_value, const std::string& bytes) {
    return has_value ? std::optional<std::string_view>(bytes) : std::nullopt;
  }

  // Whether row + 1 is the +U of row's key (a -U).
  bool followed_by_its_update(const ColumnBatch& batch, std::size_t row) {
    if (row + 1 >= batch.size() || batch.row_kind(row + 1) != RowKind::kUpdateAfter) return false;
    key_.clear();
    next_key_.clear();
    key_encoder_->encode(key_cols_, row, RowKind::kInsert, key_);
    key_encoder_->encode(key_cols_, row + 1, RowKind::kInsert, next_key_);
    return key_ == next_key_;
  }

  bool buffering() const { return c_.upsert && c_.buffer_flush_max_rows > 0; }
  void flush_buffer() {
    for (auto& [k, v] : buffer_) records_.add(key(k), value(v.first, v.second));
    buffer_.clear();
  }

  // One record with its row's timestamp and headers columns.
  void send_with_metadata(bool has_value, const ColumnBatch& batch, std::size_t row) {
    std::int64_t timestamp_ms = 0;  // 0: the producer's clock
    if (c_.timestamp_column) {
      const Column& ts = batch.column(*c_.timestamp_column);
      if (!ts.is_null(row)) timestamp_ms = ts.values<std::int64_t>()[row] / 1000;
    }
    headers_.clear();
    ValueList map;
    if (c_.headers_column && !batch.column(*c_.headers_column).is_null(row)) {
      map = batch.column(*c_.headers_column).value_at(row).as_list();
      for (std::size_t i = 0; i + 1 < map.items.size(); i += 2) {
        if (map.items[i].is_null()) continue;
        headers_.push_back({map.items[i].as_string(), map.items[i + 1].is_null()
                                                          ? std::nullopt
                                                          : std::optional<std::string_view>(map.items[i + 1].as_string())});
      }
    }
    records_.send(key(key_), value(has_value, value_), timestamp_ms, headers_);
  }

  const KafkaSinkConfig& c_;
  kafka::KafkaRecordWriter records_;
  std::unique_ptr<RecordEncoder> key_encoder_;
  std::unique_ptr<RecordEncoder> value_encoder_;
  std::vector<const Column*> key_cols_;
  std::vector<const Column*> value_cols_;
  std::string key_, next_key_;
  std::string value_;
  std::vector<kafka::KafkaHeader> headers_;
  std::unordered_map<std::string, std::pair<bool, std::string>> buffer_;  // key -> (has value, value)
  std::chrono::steady_clock::time_point buffer_started_{};
};

}  // namespace

std::unique_ptr<TransactionalSinkWriter<ColumnBatch>> KafkaSqlSink::create_writer(int subtask, int parallelism) const {
  return std::make_unique<KafkaSqlWriter>(config_, subtask, parallelism);
}

}  // namespace clink::sql
