#include "clink/connectors/kafka/sql_kafka_sink.hpp"

#include <chrono>
#include <sstream>
#include <unordered_map>
#include <thread>

#include <fmt/format.h>

#include "clink/connectors/kafka/kafka_transaction_admin.hpp"
#include "clink/core/error.hpp"
#include "clink/runtime/runtime_context.hpp"
#include "kafka_client.hpp"

namespace clink::sql {

namespace {

using kafka::KafkaHandle;
using Delivery = KafkaSinkConfig::Delivery;

constexpr int kFlushTimeoutMs = 60000;
constexpr std::int64_t kCheckpointBits = (std::int64_t{1} << 40) - 1;

// A pre-committed transaction as the checkpoint keeps it.
struct Committable {
  std::string transactional_id;
  std::int64_t producer_id = -1;
  std::int16_t producer_epoch = -1;
};
std::string encode(const Committable& c) {
  return fmt::format("{}\t{}\t{}", c.producer_id, c.producer_epoch, c.transactional_id);
}
Committable decode(const std::string& s) {
  std::istringstream in(s);
  Committable c;
  char tab = 0;
  in >> c.producer_id >> c.producer_epoch;
  in.get(tab);
  std::getline(in, c.transactional_id);
  if (c.transactional_id.empty()) throw ClinkError("kafka sink: malformed committable '" + s + "'");
  return c;
}

class KafkaSqlWriter final : public TransactionalSinkWriter<ColumnBatch> {
 public:
  KafkaSqlWriter(const KafkaSinkConfig& c, int subtask, int parallelism)
      : c_(c), subtask_(subtask), parallelism_(parallelism) {}

  void open(RuntimeContext&) override {
    what_ = "kafka sink of table `" + c_.table + "`";
    if (!c_.formats.key_format.empty()) {
      key_encoder_ = make_record_encoder(c_.formats.key_format, c_.formats.key_fields, c_.formats.key_options);
      key_cols_.resize(c_.formats.key_columns.size());
    }
    value_encoder_ = make_record_encoder(c_.formats.value_format, c_.formats.value_fields, c_.formats.value_options);
    value_cols_.resize(c_.formats.value_columns.size());
    if (c_.delivery != Delivery::kExactlyOnce) producer_ = new_producer("");
  }

  void begin_transaction(std::int64_t transaction_id) override {
    if (c_.delivery != Delivery::kExactlyOnce) return;
    const std::int64_t checkpoint = transaction_id & kCheckpointBits;
    if (first_transaction_) {
      first_transaction_ = false;
      abort_lingering(checkpoint);
    }
    std::string id = fmt::format("{}-{}-{}", c_.transactional_id_prefix, subtask_, checkpoint);
    producer_ = new_producer(id);
    transactional_id_ = id;
    check(rd_kafka_init_transactions(producer_.get(), kFlushTimeoutMs), "initialise transactions");
    check(rd_kafka_begin_transaction(producer_.get()), "begin a transaction");
  }

  void write(const ColumnBatch& batch) override {
    for (std::size_t i = 0; i < c_.formats.key_columns.size(); ++i) key_cols_[i] = &batch.column(c_.formats.key_columns[i]);
    for (std::size_t i = 0; i < c_.formats.value_columns.size(); ++i) value_cols_[i] = &batch.column(c_.formats.value_columns[i]);
    for (std::size_t row = 0; row < batch.size(); ++row) {
      const RowKind kind = batch.row_kind(row);
      bool has_value = true;
      value_.clear();
      if (c_.upsert) {
        if (kind == RowKind::kUpdateBefore) continue;  // the +U that follows replaces the row
        has_value = kind != RowKind::kDelete;        // a delete is a tombstone
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
        send(key_, has_value, value_, &batch, row);  // per record: timestamp and headers
        continue;
      }
      // Batched: one producer call per batch (librdkafka locks once, not per record).
      outgoing_.push_back({arena_.size(), key_.size(), arena_.size() + key_.size(), has_value ? value_.size() : 0,
                           has_value});
      arena_ += key_;
      if (has_value) arena_ += value_;
    }
    send_outgoing();
    if (buffering() && (buffer_.size() >= static_cast<std::size_t>(c_.buffer_flush_max_rows) ||
                        std::chrono::steady_clock::now() - buffer_started_ >=
                            std::chrono::milliseconds(c_.buffer_flush_interval_ms)))
      flush_buffer();
    rd_kafka_poll(producer_.get(), 0);  // serve delivery reports
    throw_delivery_error();
  }

  std::string pre_commit() override {
    flush_buffer();
    if (c_.delivery == Delivery::kNone) return {};
    flush();
    if (c_.delivery != Delivery::kExactlyOnce) return {};
    std::optional<kafka::KafkaTransactionState> state = admin().describe(transactional_id_);
    if (!state || state->producer_id < 0)
      throw ClinkError(what_ + ": the transaction coordinator does not know transaction '" + transactional_id_ + "'");
    if (!state->open()) {  // no record since the last checkpoint: nothing to commit
      producer_.reset();
      return {};
    }
    Committable c{transactional_id_, state->producer_id, state->producer_epoch};
    prepared_.emplace(transactional_id_, std::move(producer_));
    return encode(c);
  }

  void commit(const std::string& committable) override {
    if (committable.empty()) return;
    Committable c = decode(committable);
    if (auto it = prepared_.find(c.transactional_id); it != prepared_.end()) {
      KafkaHandle p = std::move(it->second);
      prepared_.erase(it);
      rd_kafka_error_t* e = rd_kafka_commit_transaction(p.get(), kFlushTimeoutMs);
      if (e) {
        std::string msg = rd_kafka_error_string(e);
        rd_kafka_error_destroy(e);
        throw ClinkError(what_ + ": cannot commit transaction '" + c.transactional_id + "': " + msg);
      }
      return;
    }
    // Pre-committed by an earlier attempt, whose producer is gone.
    admin().commit(c.transactional_id, c.producer_id, c.producer_epoch);
  }

  void abort() override {
    if (c_.delivery == Delivery::kExactlyOnce && producer_) {
      if (rd_kafka_error_t* e = rd_kafka_abort_transaction(producer_.get(), kFlushTimeoutMs)) rd_kafka_error_destroy(e);
    }
  }

  void close() override {
    // Pre-committed transactions stay open: their checkpoint may still complete, and a
    // restore commits them through the coordinator.
    for (auto& [id, p] : prepared_) rd_kafka_purge(p.get(), RD_KAFKA_PURGE_F_QUEUE);
    prepared_.clear();
    if (producer_ && c_.delivery != Delivery::kExactlyOnce) rd_kafka_flush(producer_.get(), kFlushTimeoutMs);
    producer_.reset();
  }

 private:
  KafkaHandle new_producer(const std::string& transactional_id) {
    auto props = c_.client;
    // The Java client's partitioner (murmur2 of the key, random without a key), so a key
    // lands in the same partition as when Flink writes it.
    props.try_emplace("partitioner", "murmur2_random");
    if (!transactional_id.empty()) props["transactional.id"] = transactional_id;
    KafkaHandle p = kafka::make_kafka_client(RD_KAFKA_PRODUCER, props, what_, [this](rd_kafka_conf_t* conf) {
      rd_kafka_conf_set_opaque(conf, this);
      rd_kafka_conf_set_dr_msg_cb(conf, [](rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
        auto* self = static_cast<KafkaSqlWriter*>(opaque);
        if (m->err && self->delivery_error_.empty())
          self->delivery_error_ = fmt::format("{}: a record to partition {} was not delivered: {}", self->what_,
                                              m->partition, kafka::kafka_error_text(m->err));
      });
    });
    rd_kafka_t* rk = p.get();
    // Learn the topic's partitions now: a fresh producer otherwise holds its first records
    // until its periodic topic scan (a second), and every checkpoint starts a fresh one.
    const std::int32_t n = partition_count(rk);
    if (partitions_ == 0) partitions_ = n;
    return p;
  }

  // The topic's partition count; a topic the broker is still auto-creating is waited for
  // (10 s at most, as a producer would wait for its metadata).
  std::int32_t partition_count(rd_kafka_t* rk) {
    rd_kafka_topic_t* t = rd_kafka_topic_new(rk, c_.topic.c_str(), nullptr);
    std::int32_t n = 0;
    rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
    for (int attempt = 0; attempt < 100 && n <= 0; ++attempt) {
      if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const rd_kafka_metadata_t* md = nullptr;
      err = rd_kafka_metadata(rk, 0, t, &md, kFlushTimeoutMs);
      if (err) break;
      if (md->topic_cnt == 1) {
        err = md->topics[0].err;
        if (!err) n = md->topics[0].partition_cnt;
      }
      rd_kafka_metadata_destroy(md);
      if (err && err != RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART && err != RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE) break;
    }
    rd_kafka_topic_destroy(t);
    if (n <= 0)
      throw ClinkError(what_ + ": topic '" + c_.topic + "' " +
                       (err ? "cannot be read: " + kafka::kafka_error_text(err) : std::string("has no partitions")));
    return n;
  }

  // The records of a batch: key and value bytes in arena_.
  struct Outgoing {
    std::size_t key_at, key_len, value_at, value_len;
    bool has_value;
  };

  void send_outgoing() {
    if (outgoing_.empty()) return;
    const std::int32_t partition =
        c_.partitioner == KafkaSinkConfig::Partitioner::kFixed ? subtask_ % partitions_ : RD_KAFKA_PARTITION_UA;
    messages_.assign(outgoing_.size(), rd_kafka_message_t{});
    for (std::size_t i = 0; i < outgoing_.size(); ++i) {
      const Outgoing& o = outgoing_[i];
      rd_kafka_message_t& m = messages_[i];
      m.partition = partition;
      if (key_encoder_) {
        m.key = arena_.data() + o.key_at;
        m.key_len = o.key_len;
      }
      if (o.has_value) {
        m.payload = arena_.data() + o.value_at;
        m.len = o.value_len;
      }
    }
    rd_kafka_topic_t* topic = rd_kafka_topic_new(producer_.get(), c_.topic.c_str(), nullptr);
    std::size_t from = 0;
    while (from < messages_.size()) {
      const int n = static_cast<int>(messages_.size() - from);
      const int queued = rd_kafka_produce_batch(topic, partition, RD_KAFKA_MSG_F_COPY, messages_.data() + from, n);
      if (queued == n) break;
      // The first refused record: a full local queue waits for deliveries, anything else fails.
      std::size_t refused = from;
      while (refused < messages_.size() && messages_[refused].err == RD_KAFKA_RESP_ERR_NO_ERROR) ++refused;
      if (refused < messages_.size() && messages_[refused].err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        const rd_kafka_resp_err_t err = messages_[refused].err;
        rd_kafka_topic_destroy(topic);
        throw ClinkError(what_ + ": cannot send to topic '" + c_.topic + "': " + kafka::kafka_error_text(err));
      }
      // Requeue the refused ones (produce_batch keeps going after a full queue).
      std::size_t keep = refused;
      for (std::size_t i = refused; i < messages_.size(); ++i)
        if (messages_[i].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
          messages_[keep] = messages_[i];
          messages_[keep++].err = RD_KAFKA_RESP_ERR_NO_ERROR;
        }
      messages_.resize(keep);
      from = refused;
      rd_kafka_poll(producer_.get(), 10);
      throw_delivery_error();
    }
    rd_kafka_topic_destroy(topic);
    outgoing_.clear();
    arena_.clear();
  }

  bool buffering() const { return c_.upsert && c_.buffer_flush_max_rows > 0; }
  void flush_buffer() {
    for (auto& [key, v] : buffer_) send(key, v.first, v.second);
    buffer_.clear();
  }

  void send(const std::string& key_bytes, bool has_value, const std::string& value_bytes,
            const ColumnBatch* batch = nullptr, std::size_t row = 0) {
    std::int64_t timestamp_ms = 0;  // 0: the producer's clock
    rd_kafka_headers_t* headers = nullptr;
    if (batch && c_.timestamp_column) {
      const Column& ts = batch->column(*c_.timestamp_column);
      if (!ts.is_null(row)) timestamp_ms = ts.values<std::int64_t>()[row] / 1000;
    }
    if (batch && c_.headers_column && !batch->column(*c_.headers_column).is_null(row)) {
      const ValueList map = batch->column(*c_.headers_column).value_at(row).as_list();
      headers = rd_kafka_headers_new(map.items.size() / 2);
      for (std::size_t i = 0; i + 1 < map.items.size(); i += 2) {
        if (map.items[i].is_null()) continue;
        const std::string& name = map.items[i].as_string();
        if (map.items[i + 1].is_null()) rd_kafka_header_add(headers, name.data(), static_cast<ssize_t>(name.size()), nullptr, 0);
        else {
          const std::string& v = map.items[i + 1].as_string();
          rd_kafka_header_add(headers, name.data(), static_cast<ssize_t>(name.size()), v.data(), static_cast<ssize_t>(v.size()));
        }
      }
    }
    std::int32_t partition = RD_KAFKA_PARTITION_UA;
    if (c_.partitioner == KafkaSinkConfig::Partitioner::kFixed) partition = subtask_ % partitions_;
    // RD_KAFKA_MSG_F_COPY: librdkafka copies and never writes through these.
    void* key = key_encoder_ ? const_cast<char*>(key_bytes.data()) : nullptr;
    const std::size_t key_len = key_encoder_ ? key_bytes.size() : 0;
    void* value = has_value ? const_cast<char*>(value_bytes.data()) : nullptr;
    const std::size_t value_len = has_value ? value_bytes.size() : 0;
    for (;;) {
      rd_kafka_resp_err_t err = rd_kafka_producev(
          producer_.get(), RD_KAFKA_V_TOPIC(c_.topic.c_str()), RD_KAFKA_V_PARTITION(partition),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(key, key_len), RD_KAFKA_V_VALUE(value, value_len),
          RD_KAFKA_V_TIMESTAMP(timestamp_ms), RD_KAFKA_V_HEADERS(headers), RD_KAFKA_V_END);
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return;  // the message owns the headers now
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        if (headers) rd_kafka_headers_destroy(headers);
        throw ClinkError(what_ + ": cannot send to topic '" + c_.topic + "': " + kafka::kafka_error_text(err));
      }
      rd_kafka_poll(producer_.get(), 10);  // the local queue is full: let deliveries drain
      throw_delivery_error();
    }
  }

  void flush() {
    rd_kafka_resp_err_t err = rd_kafka_flush(producer_.get(), kFlushTimeoutMs);
    if (err) throw ClinkError(what_ + ": flushing timed out: " + kafka::kafka_error_text(err));
    throw_delivery_error();
  }

  void throw_delivery_error() {
    if (!delivery_error_.empty()) throw ClinkError(delivery_error_);
  }

  void check(rd_kafka_error_t* e, std::string_view action) {
    if (!e) return;
    std::string msg = rd_kafka_error_string(e);
    rd_kafka_error_destroy(e);
    throw ClinkError(fmt::format("{}: cannot {} (transactional id '{}'): {}", what_, action, transactional_id_, msg));
  }

  // Transactions of this prefix that earlier attempts left open after `checkpoint` (the
  // restored one, 0 for a fresh start) on the subtasks this one now stands for: abort
  // them, or read_committed readers stall behind them until they time out. Earlier
  // transactions are the restored checkpoint's: committed, or to commit.
  void abort_lingering(std::int64_t checkpoint) {
    const std::string prefix = c_.transactional_id_prefix + "-";
    for (const std::string& id : admin().list_open(prefix, broker_addresses())) {
      // "<prefix>-<subtask>-<checkpoint>"
      std::string rest = id.substr(prefix.size());
      auto dash = rest.find('-');
      if (dash == std::string::npos) continue;
      int old_subtask = 0;
      std::int64_t old_checkpoint = 0;
      try {
        old_subtask = std::stoi(rest.substr(0, dash));
        old_checkpoint = std::stoll(rest.substr(dash + 1));
      } catch (const std::exception&) {
        continue;
      }
      if (old_subtask % parallelism_ != subtask_ || old_checkpoint < checkpoint) continue;
      admin().abort_lingering(id);
    }
  }

  // Every broker of the cluster (each coordinates a share of the transactional ids).
  std::vector<std::string> broker_addresses() {
    KafkaHandle probe = kafka::make_kafka_client(RD_KAFKA_PRODUCER, {{"bootstrap.servers", c_.client.at("bootstrap.servers")}}, what_);
    const rd_kafka_metadata_t* md = nullptr;
    rd_kafka_resp_err_t err = rd_kafka_metadata(probe.get(), 0, nullptr, &md, kFlushTimeoutMs);
    if (err) throw ClinkError(what_ + ": cannot list the brokers: " + kafka::kafka_error_text(err));
    std::vector<std::string> out;
    for (int i = 0; i < md->broker_cnt; ++i) out.push_back(std::string(md->brokers[i].host) + ":" + std::to_string(md->brokers[i].port));
    rd_kafka_metadata_destroy(md);
    return out;
  }

  kafka::KafkaTransactionAdmin& admin() {
    if (!admin_) {
      auto it = c_.client.find("bootstrap.servers");
      admin_ = std::make_unique<kafka::KafkaTransactionAdmin>(it == c_.client.end() ? "" : it->second);
    }
    return *admin_;
  }

  const KafkaSinkConfig& c_;
  const int subtask_;
  const int parallelism_;
  std::string what_;
  std::unique_ptr<RecordEncoder> key_encoder_;
  std::unique_ptr<RecordEncoder> value_encoder_;
  std::vector<const Column*> key_cols_;
  std::vector<const Column*> value_cols_;
  std::string key_;
  std::string value_;
  std::string arena_;
  std::vector<Outgoing> outgoing_;
  std::vector<rd_kafka_message_t> messages_;
  KafkaHandle producer_;
  std::string transactional_id_;
  std::map<std::string, KafkaHandle> prepared_;  // pre-committed, by transactional id
  std::unique_ptr<kafka::KafkaTransactionAdmin> admin_;
  std::string delivery_error_;
  std::unordered_map<std::string, std::pair<bool, std::string>> buffer_;  // key -> (has value, value)
  std::chrono::steady_clock::time_point buffer_started_{};
  std::int32_t partitions_ = 0;
  bool first_transaction_ = true;
};

}  // namespace

std::unique_ptr<TransactionalSinkWriter<ColumnBatch>> KafkaSqlSink::create_writer(int subtask, int parallelism) const {
  return std::make_unique<KafkaSqlWriter>(config_, subtask, parallelism);
}

}  // namespace clink::sql
