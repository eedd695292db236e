#include "clink/connectors/kafka/kafka_record_writer.hpp"

#include <chrono>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "clink/connectors/kafka/kafka_transaction_admin.hpp"
#include "clink/core/error.hpp"
#include "kafka_client.hpp"

namespace clink::kafka {

namespace {

constexpr int kFlushTimeoutMs = 60000;
// The two-phase-commit operator's transaction ids are (subtask << 40) + checkpoint + 1.
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

// RD_KAFKA_MSG_F_COPY: librdkafka copies and never writes through these.
void* bytes(std::optional<std::string_view> v) { return v ? const_cast<char*>(v->data()) : nullptr; }
std::size_t length(std::optional<std::string_view> v) { return v ? v->size() : 0; }

}  // namespace

struct KafkaRecordWriter::Impl {
  Impl(const KafkaWriterConfig& c, int subtask, int parallelism) : c_(c), subtask_(subtask), parallelism_(parallelism) {}

  void open(std::int64_t restored_checkpoint) {
    restored_checkpoint_ = restored_checkpoint;
    if (c_.delivery != DeliveryGuarantee::kExactlyOnce) producer_ = new_producer("");
  }

  void begin_transaction(std::int64_t transaction_id) {
    if (c_.delivery != DeliveryGuarantee::kExactlyOnce) return;
    const std::int64_t checkpoint = transaction_id & kCheckpointBits;
    if (first_transaction_) {
      first_transaction_ = false;
      abort_lingering();
    }
    std::string id = fmt::format("{}-{}-{}", c_.transactional_id_prefix, subtask_, checkpoint);
    producer_ = new_producer(id);
    transactional_id_ = id;
    check(rd_kafka_init_transactions(producer_.get(), kFlushTimeoutMs), "initialise transactions");
    check(rd_kafka_begin_transaction(producer_.get()), "begin a transaction");
  }

  std::string pre_commit() {
    send_queued();
    if (c_.delivery == DeliveryGuarantee::kNone) return {};
    flush();
    if (c_.delivery != DeliveryGuarantee::kExactlyOnce) return {};
    std::optional<KafkaTransactionState> state = admin().describe(transactional_id_);
    if (!state || state->producer_id < 0)
      throw ClinkError(c_.what + ": the transaction coordinator does not know transaction '" + transactional_id_ + "'");
    if (!state->open()) {  // no record since the last checkpoint: nothing to commit
      producer_.reset();
      return {};
    }
    Committable c{transactional_id_, state->producer_id, state->producer_epoch};
    prepared_.emplace(transactional_id_, std::move(producer_));
    return encode(c);
  }

  void commit(const std::string& committable) {
    if (committable.empty()) return;
    Committable c = decode(committable);
    if (auto it = prepared_.find(c.transactional_id); it != prepared_.end()) {
      KafkaHandle p = std::move(it->second);
      prepared_.erase(it);
      rd_kafka_error_t* e = rd_kafka_commit_transaction(p.get(), kFlushTimeoutMs);
      if (e) {
        std::string msg = rd_kafka_error_string(e);
        rd_kafka_error_destroy(e);
        throw ClinkError(c_.what + ": cannot commit transaction '" + c.transactional_id + "': " + msg);
      }
      return;
    }
    // Pre-committed by an earlier attempt, whose producer is gone.
    admin().commit(c.transactional_id, c.producer_id, c.producer_epoch);
  }

  void abort() {
    if (c_.delivery == DeliveryGuarantee::kExactlyOnce && producer_) {
      if (rd_kafka_error_t* e = rd_kafka_abort_transaction(producer_.get(), kFlushTimeoutMs)) rd_kafka_error_destroy(e);
    }
  }

  void close() {
    // Pre-committed transactions stay open: their checkpoint may still complete, and a
    // restore commits them through the coordinator.
    for (auto& [id, p] : prepared_) rd_kafka_purge(p.get(), RD_KAFKA_PURGE_F_QUEUE);
    prepared_.clear();
    if (producer_ && c_.delivery != DeliveryGuarantee::kExactlyOnce) rd_kafka_flush(producer_.get(), kFlushTimeoutMs);
    producer_.reset();
  }

  // The partition a record goes to: its own, else the fixed partitioner's, else the producer's choice.
  std::int32_t target(std::int32_t partition) const {
    if (partition != kAnyPartition) return partition;
    return c_.partitioner == KafkaPartitioner::kFixed ? subtask_ % partitions_ : RD_KAFKA_PARTITION_UA;
  }

  void add(std::optional<std::string_view> key, std::optional<std::string_view> value, std::int32_t partition) {
    const std::int32_t p = target(partition);
    if (outgoing_.empty()) batch_partition_ = p;
    else if (p != batch_partition_) mixed_partitions_ = true;
    outgoing_.push_back({arena_.size(), length(key), arena_.size() + length(key), length(value), key.has_value(),
                         value.has_value(), p});
    if (key) arena_ += *key;
    if (value) arena_ += *value;
  }

  // Hands the queued records to the producer in one call (librdkafka locks once, not per record).
  void send_outgoing() {
    if (outgoing_.empty()) return;
    messages_.assign(outgoing_.size(), rd_kafka_message_t{});
    for (std::size_t i = 0; i < outgoing_.size(); ++i) {
      const Outgoing& o = outgoing_[i];
      rd_kafka_message_t& m = messages_[i];
      m.partition = o.partition;
      if (o.has_key) {
        m.key = arena_.data() + o.key_at;
        m.key_len = o.key_len;
      }
      if (o.has_value) {
        m.payload = arena_.data() + o.value_at;
        m.len = o.value_len;
      }
    }
    // Records for several partitions: each message's own (RD_KAFKA_PARTITION_UA ones
    // still go through the partitioner).
    const int flags = RD_KAFKA_MSG_F_COPY | (mixed_partitions_ ? RD_KAFKA_MSG_F_PARTITION : 0);
    rd_kafka_topic_t* topic = rd_kafka_topic_new(producer_.get(), c_.topic.c_str(), nullptr);
    std::size_t from = 0;
    while (from < messages_.size()) {
      const int n = static_cast<int>(messages_.size() - from);
      const int queued = rd_kafka_produce_batch(topic, batch_partition_, flags, messages_.data() + from, n);
      if (queued == n) break;
      // The first refused record: a full local queue waits for deliveries, anything else fails.
      std::size_t refused = from;
      while (refused < messages_.size() && messages_[refused].err == RD_KAFKA_RESP_ERR_NO_ERROR) ++refused;
      if (refused < messages_.size() && messages_[refused].err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        const rd_kafka_resp_err_t err = messages_[refused].err;
        rd_kafka_topic_destroy(topic);
        throw ClinkError(c_.what + ": cannot send to topic '" + c_.topic + "': " + kafka_error_text(err));
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
    mixed_partitions_ = false;
  }

  void send_queued() {
    if (!producer_) return;  // between a pre-commit and the next transaction
    send_outgoing();
    rd_kafka_poll(producer_.get(), 0);  // serve delivery reports
    throw_delivery_error();
  }

  void send(std::optional<std::string_view> key, std::optional<std::string_view> value, std::int64_t timestamp_ms,
            std::span<const KafkaHeader> headers, std::int32_t partition) {
    send_outgoing();  // keep the order of the records
    rd_kafka_headers_t* hdrs = nullptr;
    if (!headers.empty()) {
      hdrs = rd_kafka_headers_new(headers.size());
      for (const KafkaHeader& h : headers)
        rd_kafka_header_add(hdrs, h.name.data(), static_cast<ssize_t>(h.name.size()), bytes(h.value),
                            static_cast<ssize_t>(length(h.value)));
    }
    for (;;) {
      rd_kafka_resp_err_t err = rd_kafka_producev(
          producer_.get(), RD_KAFKA_V_TOPIC(c_.topic.c_str()), RD_KAFKA_V_PARTITION(target(partition)),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(bytes(key), length(key)),
          RD_KAFKA_V_VALUE(bytes(value), length(value)), RD_KAFKA_V_TIMESTAMP(timestamp_ms), RD_KAFKA_V_HEADERS(hdrs),
          RD_KAFKA_V_END);
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return;  // the message owns the headers now
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        if (hdrs) rd_kafka_headers_destroy(hdrs);
        throw ClinkError(c_.what + ": cannot send to topic '" + c_.topic + "': " + kafka_error_text(err));
      }
      rd_kafka_poll(producer_.get(), 10);  // the local queue is full: let deliveries drain
      throw_delivery_error();
    }
  }

  KafkaHandle new_producer(const std::string& transactional_id) {
    auto props = c_.client;
    // The Java client's partitioner (murmur2 of the key, random without a key), so a key
    // lands in the same partition as when Flink writes it.
    props.try_emplace("partitioner", "murmur2_random");
    if (!transactional_id.empty()) props["transactional.id"] = transactional_id;
    KafkaHandle p = make_kafka_client(RD_KAFKA_PRODUCER, props, c_.what, [this](rd_kafka_conf_t* conf) {
      rd_kafka_conf_set_opaque(conf, this);
      rd_kafka_conf_set_dr_msg_cb(conf, [](rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
        auto* self = static_cast<Impl*>(opaque);
        if (m->err && self->delivery_error_.empty())
          self->delivery_error_ = fmt::format("{}: a record to partition {} was not delivered: {}", self->c_.what,
                                              m->partition, kafka_error_text(m->err));
      });
    });
    // Learn the topic's partitions now: a fresh producer otherwise holds its first records
    // until its periodic topic scan (a second), and every checkpoint starts a fresh one.
    const std::int32_t n = partition_count(p.get());
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
      throw ClinkError(c_.what + ": topic '" + c_.topic + "' " +
                       (err ? "cannot be read: " + kafka_error_text(err) : std::string("has no partitions")));
    return n;
  }

  void flush() {
    rd_kafka_resp_err_t err = rd_kafka_flush(producer_.get(), kFlushTimeoutMs);
    if (err) throw ClinkError(c_.what + ": flushing timed out: " + kafka_error_text(err));
    throw_delivery_error();
  }

  void throw_delivery_error() {
    if (!delivery_error_.empty()) throw ClinkError(delivery_error_);
  }

  void check(rd_kafka_error_t* e, std::string_view action) {
    if (!e) return;
    std::string msg = rd_kafka_error_string(e);
    rd_kafka_error_destroy(e);
    throw ClinkError(fmt::format("{}: cannot {} (transactional id '{}'): {}", c_.what, action, transactional_id_, msg));
  }

  // Transactions of this prefix that earlier attempts left open after the restored
  // checkpoint (0 for a fresh start) on the subtasks this one now stands for: abort
  // them, or read_committed readers stall behind them until they time out. Earlier
  // transactions are the restored checkpoint's: committed, or to commit (by whichever
  // subtask restored them). The first transaction may be numbered well above the
  // restored checkpoint (after a fallback past a damaged one): those between linger too.
  void abort_lingering() {
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
      if (old_subtask % parallelism_ != subtask_ || old_checkpoint <= restored_checkpoint_) continue;
      admin().abort_lingering(id);
    }
  }

  // Every broker of the cluster (each coordinates a share of the transactional ids).
  std::vector<std::string> broker_addresses() {
    KafkaHandle probe = make_kafka_client(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap()}}, c_.what);
    const rd_kafka_metadata_t* md = nullptr;
    rd_kafka_resp_err_t err = rd_kafka_metadata(probe.get(), 0, nullptr, &md, kFlushTimeoutMs);
    if (err) throw ClinkError(c_.what + ": cannot list the brokers: " + kafka_error_text(err));
    std::vector<std::string> out;
    for (int i = 0; i < md->broker_cnt; ++i)
      out.push_back(std::string(md->brokers[i].host) + ":" + std::to_string(md->brokers[i].port));
    rd_kafka_metadata_destroy(md);
    return out;
  }

  std::string bootstrap() const {
    auto it = c_.client.find("bootstrap.servers");
    return it == c_.client.end() ? "" : it->second;
  }

  KafkaTransactionAdmin& admin() {
    if (!admin_) admin_ = std::make_unique<KafkaTransactionAdmin>(bootstrap());
    return *admin_;
  }

  // A queued record: key and value bytes in arena_.
  struct Outgoing {
    std::size_t key_at, key_len, value_at, value_len;
    bool has_key, has_value;
    std::int32_t partition;
  };

  const KafkaWriterConfig& c_;
  const int subtask_;
  const int parallelism_;
  std::string arena_;
  std::vector<Outgoing> outgoing_;
  std::int32_t batch_partition_ = RD_KAFKA_PARTITION_UA;
  bool mixed_partitions_ = false;
  std::vector<rd_kafka_message_t> messages_;
  KafkaHandle producer_;
  std::string transactional_id_;
  std::map<std::string, KafkaHandle> prepared_;  // pre-committed, by transactional id
  std::unique_ptr<KafkaTransactionAdmin> admin_;
  std::string delivery_error_;
  std::int32_t partitions_ = 0;
  bool first_transaction_ = true;
  std::int64_t restored_checkpoint_ = 0;  // the sink restored it (0: a fresh start)
};

KafkaRecordWriter::KafkaRecordWriter(const KafkaWriterConfig& config, int subtask, int parallelism)
    : impl_(std::make_unique<Impl>(config, subtask, parallelism)) {}
KafkaRecordWriter::~KafkaRecordWriter() = default;
void KafkaRecordWriter::open(std::int64_t restored_checkpoint) { impl_->open(restored_checkpoint); }
void KafkaRecordWriter::begin_transaction(std::int64_t transaction_id) { impl_->begin_transaction(transaction_id); }
std::string KafkaRecordWriter::pre_commit() { return impl_->pre_commit(); }
void KafkaRecordWriter::commit(const std::string& committable) { impl_->commit(committable); }
void KafkaRecordWriter::abort() { impl_->abort(); }
void KafkaRecordWriter::close() { impl_->close(); }
void KafkaRecordWriter::add(std::optional<std::string_view> key, std::optional<std::string_view> value,
                            std::int32_t partition) {
  impl_->add(key, value, partition);
}
void KafkaRecordWriter::send(std::optional<std::string_view> key, std::optional<std::string_view> value,
                             std::int64_t timestamp_ms, std::span<const KafkaHeader> headers, std::int32_t partition) {
  impl_->send(key, value, timestamp_ms, headers, partition);
}
void KafkaRecordWriter::send_queued() { impl_->send_queued(); }
std::int32_t KafkaRecordWriter::partition_count() const { return impl_->partitions_; }
const std::string& KafkaRecordWriter::what() const { return impl_->c_.what; }

}  // namespace clink::kafka
