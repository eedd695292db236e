#include "clink/connectors/kafka/kafka_partition_reader.hpp"

#include <algorithm>
#include <chrono>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "clink/core/error.hpp"
#include "kafka_client.hpp"

namespace clink::kafka {

std::string_view timestamp_type_name(KafkaTimestampType t) {
  switch (t) {
    case KafkaTimestampType::kCreateTime: return "CreateTime";
    case KafkaTimestampType::kLogAppendTime: return "LogAppendTime";
    default: return "NoTimestampType";
  }
}

bool KafkaMessage::header(std::size_t i, KafkaHeader& out) const {
  rd_kafka_headers_t* hdrs = nullptr;
  // rd_kafka_message_headers parses the headers once and caches them in the message.
  auto* m = static_cast<rd_kafka_message_t*>(const_cast<void*>(native));
  if (!m || rd_kafka_message_headers(m, &hdrs) != RD_KAFKA_RESP_ERR_NO_ERROR) return false;
  const char* name;
  const void* value;
  std::size_t size;
  if (rd_kafka_header_get_all(hdrs, i, &name, &value, &size) != RD_KAFKA_RESP_ERR_NO_ERROR) return false;
  out.name = name;
  out.value = value ? std::optional<std::string_view>(std::string_view(static_cast<const char*>(value), size))
                    : std::nullopt;
  return true;
}

std::vector<KafkaHeader> KafkaMessage::headers() const {
  std::vector<KafkaHeader> out;
  KafkaHeader h;
  for (std::size_t i = 0; header(i, h); ++i) out.push_back(h);
  return out;
}

std::string KafkaMessage::position() const {
  return fmt::format("topic {} partition {} offset {}", topic, partition, offset);
}

namespace {

using Mode = KafkaOffsetSpec::Mode;

constexpr std::int64_t kNoStop = INT64_MAX;
constexpr int kRequestTimeoutMs = 30000;

// A partition being read: the offset of the next record and, when bounded, where to stop.
struct Split {
  KafkaTopicPartition tp;
  std::int64_t next = 0;
  std::int64_t stop = kNoStop;
  std::uint64_t key = 0;  // KafkaMessage::split of its records
};

std::string encode_split(const Split& s) {
  return fmt::format("{}\t{}\t{}", s.tp.partition, s.next, s.stop) + "\t" + s.tp.topic;
}
Split decode_split(const std::string& item) {
  std::istringstream in(item);
  Split s;
  char tab = 0;
  in >> s.tp.partition >> s.next >> s.stop;
  in.get(tab);
  std::getline(in, s.tp.topic);
  if (!in.eof() && in.fail()) throw ClinkError("kafka source: malformed split state '" + item + "'");
  return s;
}
std::string encode_tp(const KafkaTopicPartition& tp) { return std::to_string(tp.partition) + "\t" + tp.topic; }
KafkaTopicPartition decode_tp(const std::string& item) {
  auto tab = item.find('\t');
  if (tab == std::string::npos) throw ClinkError("kafka source: malformed partition state '" + item + "'");
  return {item.substr(tab + 1), static_cast<std::int32_t>(std::stol(item.substr(0, tab)))};
}

KafkaTimestampType timestamp_type_of(rd_kafka_timestamp_type_t t) {
  switch (t) {
    case RD_KAFKA_TIMESTAMP_CREATE_TIME: return KafkaTimestampType::kCreateTime;
    case RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME: return KafkaTimestampType::kLogAppendTime;
    default: return KafkaTimestampType::kNone;
  }
}

}  // namespace

struct KafkaPartitionReader::Impl {
  Impl(const KafkaReaderConfig& c, int subtask, int parallelism) : c_(c), subtask_(subtask), parallelism_(parallelism) {}
  ~Impl() { close(); }

  void open() {
    auto props = c_.client;
    user_group_ = props.count("group.id") > 0;
    if (!user_group_) props["group.id"] = "clink-reader";  // assign() needs one; never committed
    props["enable.auto.commit"] = "false";
    props["enable.auto.offset.store"] = "false";
    props.try_emplace("isolation.level", "read_uncommitted");  // the Java client's default, as Flink
    props.try_emplace("auto.offset.reset", "earliest");
    if (c_.bounded.mode != Mode::kUnbounded) props["enable.partition.eof"] = "true";
    props.erase("partition.discovery.interval.ms");  // Flink's name for the discovery interval, not the client's
    reset_strategy_ = c_.client.count("auto.offset.reset") ? c_.client.at("auto.offset.reset") : "none";
    consumer_ = make_kafka_client(RD_KAFKA_CONSUMER, props, c_.what);
    queue_ = rd_kafka_queue_get_consumer(consumer_.get());
    msgs_.resize(1024);
    records_.reserve(msgs_.size());
  }

  Status poll(std::size_t max_messages) {
    release_messages();
    const auto now = std::chrono::steady_clock::now();
    if (!discovered_ || (c_.discovery_interval_ms > 0 && now >= next_discovery_)) {
      discover();
      discovered_ = true;
      next_discovery_ = now + std::chrono::milliseconds(c_.discovery_interval_ms);
    }
    if (splits_.empty()) return c_.bounded.mode != Mode::kUnbounded ? Status::kEnd : Status::kNothingAvailable;
    const std::size_t want = std::min(msgs_.size(), std::max<std::size_t>(max_messages, 1));
    const ssize_t n = rd_kafka_consume_batch_queue(queue_, 0, msgs_.data(), want);
    held_ = n > 0 ? static_cast<std::size_t>(n) : 0;
    bool finished = false;
    for (std::size_t i = 0; i < held_; ++i) finished |= handle(msgs_[i]);
    if (finished) {
      // A finished split's end is still committed to the group with the next checkpoint.
      for (const auto& s : splits_)
        if (s.next >= s.stop) finished_offsets_.emplace_back(s.tp, s.stop);
      std::erase_if(splits_, [](const Split& s) { return s.next >= s.stop; });
      assign();
    }
    // Also when splits finished: a bounded source's last poll may come within the second.
    if (pending_counter_ && (now >= next_pending_ || finished)) {
      next_pending_ = now + std::chrono::seconds(1);
      report_backlog();
    }
    if (splits_.empty() && c_.bounded.mode != Mode::kUnbounded) return Status::kEnd;
    return n > 0 ? Status::kMore : Status::kNothingAvailable;
  }

  // The held partitions' backlog, by the high watermarks the client last saw
  // (rd_kafka_get_watermark_offsets: cached from fetch responses, no broker round trip):
  // pendingRecords, the records left to read (up to the stop offset when bounded), and
  // records-lag-max, the Kafka consumer's largest lag (high watermark - position, as the
  // Java client's records-lag, which knows no stop offset). A partition whose high
  // watermark is not known yet counts 0 in both.
  void report_backlog() {
    std::int64_t pending = 0, lag_max = 0;
    for (const auto& s : splits_) {
      std::int64_t lo = 0, hi = -1;
      if (rd_kafka_get_watermark_offsets(consumer_.get(), s.tp.topic.c_str(), s.tp.partition, &lo, &hi) || hi < 0) continue;
      pending += std::max<std::int64_t>(0, std::min(hi, s.stop) - s.next);
      lag_max = std::max(lag_max, hi - s.next);
    }
    pending_counter_->store(pending, std::memory_order_relaxed);
    if (lag_max_gauge_) lag_max_gauge_->store(lag_max, std::memory_order_relaxed);
  }

  // The client's destruction waits for every message it handed out: give them back first.
  void release_messages() {
    for (std::size_t i = 0; i < held_; ++i) rd_kafka_message_destroy(msgs_[i]);
    held_ = 0;
    records_.clear();
  }

  void close() {
    release_messages();
    if (queue_) rd_kafka_queue_destroy(queue_);
    queue_ = nullptr;
    if (consumer_) rd_kafka_consumer_close(consumer_.get());
    consumer_.reset();
  }

  std::vector<std::string> snapshot_splits() const {
    std::vector<std::string> out;
    for (const auto& s : splits_) out.push_back(encode_split(s));
    return out;
  }
  void restore_splits(const std::vector<std::string>& items) {
    for (const auto& item : items) {
      splits_.push_back(decode_split(item));
      splits_.back().key = split_key(splits_.back().tp);
    }
    for (const auto& s : splits_) restored_known_.insert(s.tp);
  }
  std::vector<std::string> snapshot_shared() const {
    std::vector<std::string> out;
    for (const auto& tp : taken_) out.push_back(encode_tp(tp));
    if (subtask_ == 0)
      for (const auto& tp : restored_known_)
        if (!taken_.count(tp)) out.push_back(encode_tp(tp));
    return out;
  }
  void restore_shared(const std::vector<std::string>& items) {
    for (const auto& item : items) restored_known_.insert(decode_tp(item));
  }
  void snapshot_taken(std::int64_t checkpoint_id) {
    if (!user_group_) return;
    auto& offsets = pending_commits_[checkpoint_id];
    for (const auto& s : splits_) offsets.emplace_back(s.tp, s.next);
    offsets.insert(offsets.end(), finished_offsets_.begin(), finished_offsets_.end());
    finished_offsets_.clear();
  }
  void notify_checkpoint_complete(std::int64_t checkpoint_id) {
    auto it = pending_commits_.find(checkpoint_id);
    if (it == pending_commits_.end()) return;
    PartitionList list = new_partition_list(static_cast<int>(it->second.size()));
    for (const auto& [tp, offset] : it->second)
      rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition)->offset = offset;
    // Asynchronous: committing is for monitoring and group-offsets startup, never for restore.
    if (list->cnt > 0 && consumer_) rd_kafka_commit(consumer_.get(), list.get(), 1);
    pending_commits_.erase(pending_commits_.begin(), std::next(it));
  }

  // Lists the topics, takes the partitions this subtask owns that nobody took yet,
  // resolves where they start (and stop), and assigns them to the consumer.
  void discover() {
    const rd_kafka_metadata_t* md = nullptr;
    rd_kafka_resp_err_t err = rd_kafka_metadata(consumer_.get(), 1, nullptr, &md, kRequestTimeoutMs);
    if (err) throw ClinkError(c_.what + ": cannot list the topics: " + kafka_error_text(err));
    std::vector<KafkaTopicPartition> found;
    std::set<std::string> seen_topics;
    std::optional<std::regex> pattern;
    if (!c_.topic_pattern.empty()) pattern.emplace(c_.topic_pattern);
    for (int t = 0; t < md->topic_cnt; ++t) {
      const auto& topic = md->topics[t];
      std::string name = topic.topic;
      bool wanted = pattern ? std::regex_match(name, *pattern) && !name.starts_with("__")
                            : std::find(c_.topics.begin(), c_.topics.end(), name) != c_.topics.end();
      if (!wanted || topic.err) continue;
      seen_topics.insert(name);
      for (int p = 0; p < topic.partition_cnt; ++p) found.push_back({name, topic.partitions[p].id});
    }
    rd_kafka_metadata_destroy(md);
    if (!pattern && !discovered_)
      for (const auto& t : c_.topics)
        if (!seen_topics.count(t)) throw ClinkError(c_.what + ": topic '" + t + "' does not exist");
    std::vector<Split> fresh;
    for (const auto& tp : found) {
      if (restored_known_.count(tp) || taken_.count(tp)) continue;
      if (kafka_split_owner(tp.topic, tp.partition, parallelism_) != subtask_) continue;
      taken_.insert(tp);
      fresh.push_back({tp, 0, kNoStop});
    }
    if (fresh.empty()) {
      if (!assigned_) assign();
      return;
    }
    // The first listing starts where the startup spec says (also after a restore from a
    // checkpoint taken before it); partitions that appear later start at their earliest
    // offset, as Flink.
    const bool initial = !discovered_ && restored_known_.empty();
    resolve(fresh, initial ? c_.startup : KafkaOffsetSpec{.mode = Mode::kEarliest}, false);
    if (c_.bounded.mode != Mode::kUnbounded) resolve(fresh, c_.bounded, true);
    for (auto& s : fresh)
      if (s.next < s.stop) {
        s.key = split_key(s.tp);
        splits_.push_back(std::move(s));
      }
    assign();
  }

  // The partition's low and high watermark offsets.
  std::pair<std::int64_t, std::int64_t> offsets_of(const Split& s) {
    std::int64_t lo = 0, hi = 0;
    rd_kafka_resp_err_t err =
        rd_kafka_query_watermark_offsets(consumer_.get(), s.tp.topic.c_str(), s.tp.partition, &lo, &hi, kRequestTimeoutMs);
    if (err)
      throw ClinkError(fmt::format("{}: cannot read the offsets of {}-{}: {}", c_.what, s.tp.topic, s.tp.partition,
                                   kafka_error_text(err)));
    return {lo, hi};
  }

  // Sets each split's start (or stop) offset as `spec` says.
  void resolve(std::vector<Split>& splits, const KafkaOffsetSpec& spec, bool stop) {
    auto set = [&](Split& s, std::int64_t v) { (stop ? s.stop : s.next) = v; };
    switch (spec.mode) {
      case Mode::kUnbounded: return;
      case Mode::kEarliest:
        for (auto& s : splits) set(s, offsets_of(s).first);
        return;
      case Mode::kLatest:
        for (auto& s : splits) set(s, offsets_of(s).second);
        return;
      case Mode::kTimestamp: {
        PartitionList list = new_partition_list(static_cast<int>(splits.size()));
        for (const auto& s : splits)
          rd_kafka_topic_partition_list_add(list.get(), s.tp.topic.c_str(), s.tp.partition)->offset = spec.timestamp_ms;
        rd_kafka_resp_err_t err = rd_kafka_offsets_for_times(consumer_.get(), list.get(), kRequestTimeoutMs);
        if (err) throw ClinkError(c_.what + ": cannot look up offsets by timestamp: " + kafka_error_text(err));
        for (int i = 0; i < list->cnt; ++i) {
          // No record at or after the timestamp: the end of the partition.
          Split& s = splits[static_cast<std::size_t>(i)];
          std::int64_t off = list->elems[i].offset;
          set(s, off >= 0 ? off : offsets_of(s).second);
        }
        return;
      }
      case Mode::kSpecificOffsets:
      case Mode::kGroupOffsets: resolve_committed(splits, spec, stop); return;
    }
  }

  // Specific offsets, and the group's committed offsets for the partitions without one.
  void resolve_committed(std::vector<Split>& splits, const KafkaOffsetSpec& spec, bool stop) {
    auto set = [&](Split& s, std::int64_t v) { (stop ? s.stop : s.next) = v; };
    std::vector<std::size_t> from_group;
    for (std::size_t i = 0; i < splits.size(); ++i) {
      auto it = spec.specific.find(splits[i].tp);
      if (spec.mode == Mode::kSpecificOffsets && it != spec.specific.end()) set(splits[i], it->second);
      else from_group.push_back(i);
    }
    if (from_group.empty()) return;
    PartitionList list = new_partition_list(static_cast<int>(from_group.size()));
    for (std::size_t i : from_group)
      rd_kafka_topic_partition_list_add(list.get(), splits[i].tp.topic.c_str(), splits[i].tp.partition);
    rd_kafka_resp_err_t err = rd_kafka_committed(consumer_.get(), list.get(), kRequestTimeoutMs);
    if (err) throw ClinkError(c_.what + ": cannot read the group's committed offsets: " + kafka_error_text(err));
    // A partition without a committed offset: specific offsets fall back to the earliest
    // offset; group offsets to 'auto.offset.reset' (none: fail), unless the spec says.
    const std::string reset =
        !spec.reset.empty() ? spec.reset : spec.mode == Mode::kSpecificOffsets ? "earliest" : reset_strategy_;
    for (int k = 0; k < list->cnt; ++k) {
      Split& s = splits[from_group[static_cast<std::size_t>(k)]];
      std::int64_t off = list->elems[k].offset;
      if (off >= 0) set(s, off);
      else if (stop || reset == "latest") set(s, offsets_of(s).second);
      else if (reset == "earliest") set(s, offsets_of(s).first);
      else
        throw ClinkError(fmt::format(
            "{}: partition {}-{} has no committed offset for group '{}' and 'properties.auto.offset.reset' is "
            "'{}' (set it to earliest or latest, or choose another 'scan.startup.mode')",
            c_.what, s.tp.topic, s.tp.partition, c_.client.count("group.id") ? c_.client.at("group.id") : "", reset));
    }
  }

  std::uint64_t split_key(const KafkaTopicPartition& tp) {
    auto [it, added] = topic_ids_.emplace(tp.topic, topic_ids_.size());
    return (it->second << 32) | static_cast<std::uint32_t>(tp.partition);
  }

  void assign() {
    held_keys_.clear();
    held_partitions_.clear();
    for (const auto& s : splits_) {
      held_keys_.push_back(s.key);
      held_partitions_.push_back(s.tp);
    }
    PartitionList list = new_partition_list(static_cast<int>(splits_.size()));
    for (const auto& s : splits_)
      rd_kafka_topic_partition_list_add(list.get(), s.tp.topic.c_str(), s.tp.partition)->offset = s.next;
    rd_kafka_resp_err_t err = rd_kafka_assign(consumer_.get(), list.get());
    if (err) throw ClinkError(c_.what + ": cannot assign partitions: " + kafka_error_text(err));
    assigned_ = true;
  }

  Split* split_of(rd_kafka_message_t* m) {
    const std::int32_t partition = m->partition;
    const char* topic = rd_kafka_topic_name(m->rkt);
    for (auto& s : splits_)
      if (s.tp.partition == partition && s.tp.topic == topic) return &s;
    return nullptr;
  }

  // One message or event; true when it finished its split. A record in its split's
  // range becomes one of records().
  bool handle(rd_kafka_message_t* m) {
    Split* s = split_of(m);
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      if (s && m->offset >= s->stop) {
        s->next = s->stop;
        return true;
      }
      return false;
    }
    if (m->err) {
      throw ClinkError(fmt::format("{}: {}: {}", c_.what, kafka_error_text(m->err),
                                   m->payload ? std::string(static_cast<const char*>(m->payload), m->len) : ""));
    }
    if (!s || m->offset < s->next) return false;  // a partition given up, or a record before a seek
    if (m->offset >= s->stop) {
      s->next = s->stop;
      return true;
    }
    KafkaMessage& r = records_.emplace_back();
    r.topic = rd_kafka_topic_name(m->rkt);  // lives with the message (a finished split is dropped at once)
    r.partition = s->tp.partition;
    r.offset = m->offset;
    rd_kafka_timestamp_type_t type;
    r.timestamp_ms = rd_kafka_message_timestamp(m, &type);
    r.timestamp_type = timestamp_type_of(type);
    r.key = m->key ? std::optional<std::string_view>(std::string_view(static_cast<const char*>(m->key), m->key_len))
                   : std::nullopt;
    r.value = m->payload ? std::optional<std::string_view>(std::string_view(static_cast<const char*>(m->payload), m->len))
                         : std::nullopt;
    r.split = s->key;
    r.native = m;
    s->next = m->offset + 1;
    return s->next >= s->stop;
  }

  const KafkaReaderConfig& c_;
  const int subtask_;
  const int parallelism_;
  std::string reset_strategy_;
  bool user_group_ = false;
  KafkaHandle consumer_;
  rd_kafka_queue_t* queue_ = nullptr;
  std::vector<rd_kafka_message_t*> msgs_;
  std::size_t held_ = 0;  // messages of the last poll, given back at the next
  std::vector<KafkaMessage> records_;
  std::vector<Split> splits_;
  std::set<KafkaTopicPartition> restored_known_;  // the partitions readers took before the restore
  std::set<KafkaTopicPartition> taken_;           // the partitions this reader took since
  bool discovered_ = false;
  bool assigned_ = false;
  std::chrono::steady_clock::time_point next_discovery_{};
  std::vector<std::uint64_t> held_keys_;  // the split keys of splits_ as last assigned
  std::vector<KafkaTopicPartition> held_partitions_;  // their partitions
  std::map<std::string, std::uint64_t> topic_ids_;
  std::map<std::int64_t, std::vector<std::pair<KafkaTopicPartition, std::int64_t>>> pending_commits_;
  std::vector<std::pair<KafkaTopicPartition, std::int64_t>> finished_offsets_;  // not yet in a checkpoint
  std::atomic<std::int64_t>* pending_counter_ = nullptr;
  std::atomic<std::int64_t>* lag_max_gauge_ = nullptr;
  std::chrono::steady_clock::time_point next_pending_{};
};

KafkaPartitionReader::KafkaPartitionReader(const KafkaReaderConfig& config, int subtask, int parallelism)
    : impl_(std::make_unique<Impl>(config, subtask, parallelism)) {}
KafkaPartitionReader::~KafkaPartitionReader() = default;
void KafkaPartitionReader::open() { impl_->open(); }
KafkaPartitionReader::Status KafkaPartitionReader::poll(std::size_t max_messages) { return impl_->poll(max_messages); }
std::span<const KafkaMessage> KafkaPartitionReader::records() const { return impl_->records_; }
void KafkaPartitionReader::close() { impl_->close(); }
void KafkaPartitionReader::report_backlog_to(std::atomic<std::int64_t>* pending_records,
                                             std::atomic<std::int64_t>* records_lag_max) {
  impl_->pending_counter_ = pending_records;
  impl_->lag_max_gauge_ = records_lag_max;
}
std::vector<std::string> KafkaPartitionReader::snapshot_splits() const { return impl_->snapshot_splits(); }
void KafkaPartitionReader::restore_splits(const std::vector<std::string>& splits) { impl_->restore_splits(splits); }
std::vector<std::string> KafkaPartitionReader::snapshot_shared() const { return impl_->snapshot_shared(); }
void KafkaPartitionReader::restore_shared(const std::vector<std::string>& items) { impl_->restore_shared(items); }
void KafkaPartitionReader::snapshot_taken(std::int64_t checkpoint_id) { impl_->snapshot_taken(checkpoint_id); }
void KafkaPartitionReader::notify_checkpoint_complete(std::int64_t checkpoint_id) {
  impl_->notify_checkpoint_complete(checkpoint_id);
}
const std::vector<std::uint64_t>& KafkaPartitionReader::held_splits() const { return impl_->held_keys_; }
const std::vector<KafkaTopicPartition>& KafkaPartitionReader::held_partitions() const {
  return impl_->held_partitions_;
}
const std::string& KafkaPartitionReader::what() const { return impl_->c_.what; }

}  // namespace clink::kafka
