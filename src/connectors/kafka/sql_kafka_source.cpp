#include "clink/connectors/kafka/sql_kafka_source.hpp"

#include <algorithm>
#include <chrono>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "clink/connectors/sql/sql_dead_letters.hpp"
#include "clink/core/error.hpp"
#include "clink/runtime/runtime_context.hpp"
#include "kafka_client.hpp"

namespace clink::sql {

namespace {

using kafka::KafkaHandle;
using kafka::PartitionList;
using Mode = KafkaOffsetSpec::Mode;

constexpr std::int64_t kNoStop = INT64_MAX;
constexpr int kRequestTimeoutMs = 30000;

// A partition being read: the offset of the next record and, when bounded, where to stop.
struct Split {
  KafkaTopicPartition tp;
  std::int64_t next = 0;
  std::int64_t stop = kNoStop;
  std::uint64_t key = 0;  // identifies the split to the source's per-split watermarks
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

std::string_view timestamp_type_name(rd_kafka_timestamp_type_t t) {
  switch (t) {
    case RD_KAFKA_TIMESTAMP_CREATE_TIME: return "CreateTime";
    case RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME: return "LogAppendTime";
    default: return "NoTimestampType";
  }
}

class KafkaSqlReader final : public SqlSourceReader {
 public:
  KafkaSqlReader(const KafkaSourceConfig& c, int subtask, int parallelism)
      : c_(c), subtask_(subtask), parallelism_(parallelism) {
    for (std::size_t j = 0; j < c_.formats.value_columns.size(); ++j) {
      auto it = std::find(c_.formats.key_columns.begin(), c_.formats.key_columns.end(), c_.formats.value_columns[j]);
      value_key_.push_back(it == c_.formats.key_columns.end() ? -1 : static_cast<int>(it - c_.formats.key_columns.begin()));
    }
    for (std::size_t k = 0; k < c_.formats.key_columns.size(); ++k)
      if (std::find(value_key_.begin(), value_key_.end(), static_cast<int>(k)) == value_key_.end()) key_only_.push_back(k);
  }

  void open(RuntimeContext& ctx) override {
    ctx_ = &ctx;
    auto props = c_.client;
    user_group_ = props.count("group.id") > 0;
    if (!user_group_) props["group.id"] = "clink-reader";  // assign() needs one; never committed
    props["enable.auto.commit"] = "false";
    props["enable.auto.offset.store"] = "false";
    props.try_emplace("isolation.level", "read_uncommitted");  // the Java client's default, as Flink
    props.try_emplace("auto.offset.reset", "earliest");
    if (c_.bounded.mode != Mode::kUnbounded) props["enable.partition.eof"] = "true";
    props.erase("partition.discovery.interval.ms");
    what_ = c_.what;
    reset_strategy_ = c_.client.count("auto.offset.reset") ? c_.client.at("auto.offset.reset") : "none";
    consumer_ = kafka::make_kafka_client(RD_KAFKA_CONSUMER, props, what_);
    queue_ = rd_kafka_queue_get_consumer(consumer_.get());
    if (!c_.formats.key_format.empty()) {
      key_decoder_ = make_record_decoder(c_.formats.key_format, c_.formats.key_fields, c_.formats.key_options);
      for (const auto& f : c_.formats.key_fields->fields()) key_scratch_.emplace_back(f.type);
      for (auto& col : key_scratch_) key_ptrs_.push_back(&col);
    }
    value_decoder_ = make_record_decoder(c_.formats.value_format, c_.formats.value_fields, c_.formats.value_options);
    msgs_.resize(1024);
  }

  Status poll(ColumnBatch& out, std::size_t max_rows) override {
    const auto now = std::chrono::steady_clock::now();
    if (!discovered_ || (c_.discovery_interval_ms > 0 && now >= next_discovery_)) {
      discover();
      discovered_ = true;
      next_discovery_ = now + std::chrono::milliseconds(c_.discovery_interval_ms);
    }
    if (splits_.empty()) return c_.bounded.mode != Mode::kUnbounded ? Status::kEnd : Status::kNothingAvailable;
    value_ptrs_.clear();
    for (std::size_t i : c_.formats.value_columns) value_ptrs_.push_back(&out.column(i));
    row_splits_.clear();
    const std::size_t want = std::min(msgs_.size(), std::max<std::size_t>(max_rows, 1));
    const ssize_t n = rd_kafka_consume_batch_queue(queue_, 0, msgs_.data(), want);
    bool finished = false;
    ssize_t i = 0;
    try {
      for (; i < n; ++i) {
        finished |= handle(msgs_[static_cast<std::size_t>(i)], out);
        rd_kafka_message_destroy(msgs_[static_cast<std::size_t>(i)]);
      }
    } catch (...) {
      // The client's destruction waits for every message it handed out.
      for (; i < n; ++i) rd_kafka_message_destroy(msgs_[static_cast<std::size_t>(i)]);
      throw;
    }
    if (!dead_letters_.empty()) dead_letters_.flush(*ctx_);
    if (finished) {
      // A finished split's end is still committed to the group with the next checkpoint.
      for (const auto& s : splits_)
        if (s.next >= s.stop) finished_offsets_.emplace_back(s.tp, s.stop);
      std::erase_if(splits_, [](const Split& s) { return s.next >= s.stop; });
      assign();
    }
    if (splits_.empty() && c_.bounded.mode != Mode::kUnbounded) return Status::kEnd;
    return n > 0 ? Status::kMore : Status::kNothingAvailable;
  }

  std::int64_t wait_hint_ms() const override { return 5; }

  const std::vector<std::uint64_t>& row_splits() const override { return row_splits_; }
  const std::vector<std::uint64_t>& held_splits() const override { return held_keys_; }

  void close() override {
    if (queue_) rd_kafka_queue_destroy(queue_);
    queue_ = nullptr;
    if (consumer_) rd_kafka_consumer_close(consumer_.get());
    consumer_.reset();
  }

  std::vector<std::string> snapshot_splits() const override {
    std::vector<std::string> out;
    for (const auto& s : splits_) out.push_back(encode_split(s));
    return out;
  }
  void restore_splits(std::vector<std::string> items) override {
    for (const auto& item : items) {
      splits_.push_back(decode_split(item));
      splits_.back().key = split_key(splits_.back().tp);
    }
    for (const auto& s : splits_) restored_known_.insert(s.tp);
  }
  // The partitions taken so far: each reader writes those it took, subtask 0 also the
  // restored ones, so the union holds each about once.
  std::vector<std::string> snapshot_shared() const override {
    std::vector<std::string> out;
    for (const auto& tp : taken_) out.push_back(encode_tp(tp));
    if (subtask_ == 0)
      for (const auto& tp : restored_known_)
        if (!taken_.count(tp)) out.push_back(encode_tp(tp));
    return out;
  }
  void restore_shared(std::vector<std::string> items) override {
    for (const auto& item : items) restored_known_.insert(decode_tp(item));
  }
  void snapshot_taken(std::int64_t checkpoint_id) override {
    if (!user_group_) return;
    auto& offsets = pending_commits_[checkpoint_id];
    for (const auto& s : splits_) offsets.emplace_back(s.tp, s.next);
    offsets.insert(offsets.end(), finished_offsets_.begin(), finished_offsets_.end());
    finished_offsets_.clear();
  }
  void notify_checkpoint_complete(std::int64_t checkpoint_id) override {
    auto it = pending_commits_.find(checkpoint_id);
    if (it == pending_commits_.end()) return;
    PartitionList list = kafka::new_partition_list(static_cast<int>(it->second.size()));
    for (const auto& [tp, offset] : it->second)
      rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition)->offset = offset;
    // Asynchronous: committing is for monitoring and group-offsets startup, never for restore.
    if (list->cnt > 0) rd_kafka_commit(consumer_.get(), list.get(), 1);
    pending_commits_.erase(pending_commits_.begin(), std::next(it));
  }

 private:
  // Lists the topics, takes the partitions this subtask owns that nobody took yet,
  // resolves where they start (and stop), and assigns them to the consumer.
  void discover() {
    const rd_kafka_metadata_t* md = nullptr;
    rd_kafka_resp_err_t err = rd_kafka_metadata(consumer_.get(), 1, nullptr, &md, kRequestTimeoutMs);
    if (err) throw ClinkError(what_ + ": cannot list the topics: " + kafka::kafka_error_text(err));
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
        if (!seen_topics.count(t)) throw ClinkError(what_ + ": topic '" + t + "' does not exist");
    std::vector<Split> fresh;
    for (const auto& tp : found) {
      if (restored_known_.count(tp) || taken_.count(tp)) continue;
      if (kafka::kafka_split_owner(tp.topic, tp.partition, parallelism_) != subtask_) continue;
      taken_.insert(tp);
      fresh.push_back({tp, 0, kNoStop});
    }
    if (fresh.empty()) {
      if (!assigned_) assign();
      return;
    }
    // The first listing starts where scan.startup.mode says (also after a restore from a
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

  // Sets each split's start (or stop) offset as `spec` says.
  void resolve(std::vector<Split>& splits, const KafkaOffsetSpec& spec, bool stop) {
    auto set = [&](Split& s, std::int64_t v) { (stop ? s.stop : s.next) = v; };
    auto watermarks = [&](const Split& s) {
      std::int64_t lo = 0, hi = 0;
      rd_kafka_resp_err_t err =
          rd_kafka_query_watermark_offsets(consumer_.get(), s.tp.topic.c_str(), s.tp.partition, &lo, &hi, kRequestTimeoutMs);
      if (err)
        throw ClinkError(fmt::format("{}: cannot read the offsets of {}-{}: {}", what_, s.tp.topic, s.tp.partition,
                                     kafka::kafka_error_text(err)));
      return std::pair{lo, hi};
    };
    switch (spec.mode) {
      case Mode::kUnbounded: return;
      case Mode::kEarliest:
        for (auto& s : splits) set(s, watermarks(s).first);
        return;
      case Mode::kLatest:
        for (auto& s : splits) set(s, watermarks(s).second);
        return;
      case Mode::kTimestamp: {
        PartitionList list = kafka::new_partition_list(static_cast<int>(splits.size()));
        for (const auto& s : splits)
          rd_kafka_topic_partition_list_add(list.get(), s.tp.topic.c_str(), s.tp.partition)->offset = spec.timestamp_ms;
        rd_kafka_resp_err_t err = rd_kafka_offsets_for_times(consumer_.get(), list.get(), kRequestTimeoutMs);
        if (err) throw ClinkError(what_ + ": cannot look up offsets by timestamp: " + kafka::kafka_error_text(err));
        for (int i = 0; i < list->cnt; ++i) {
          // No record at or after the timestamp: the end of the partition.
          std::int64_t off = list->elems[i].offset;
          set(splits[static_cast<std::size_t>(i)], off >= 0 ? off : watermarks(splits[static_cast<std::size_t>(i)]).second);
        }
        return;
      }
      case Mode::kSpecificOffsets:
      case Mode::kGroupOffsets: {
        std::vector<std::size_t> from_group;
        for (std::size_t i = 0; i < splits.size(); ++i) {
          auto it = spec.specific.find(splits[i].tp);
          if (spec.mode == Mode::kSpecificOffsets && it != spec.specific.end()) set(splits[i], it->second);
          else from_group.push_back(i);
        }
        if (from_group.empty()) return;
        PartitionList list = kafka::new_partition_list(static_cast<int>(from_group.size()));
        for (std::size_t i : from_group)
          rd_kafka_topic_partition_list_add(list.get(), splits[i].tp.topic.c_str(), splits[i].tp.partition);
        rd_kafka_resp_err_t err = rd_kafka_committed(consumer_.get(), list.get(), kRequestTimeoutMs);
        if (err) throw ClinkError(what_ + ": cannot read the group's committed offsets: " + kafka::kafka_error_text(err));
        // A partition without a committed offset: specific-offsets falls back to the
        // earliest offset; group-offsets to 'properties.auto.offset.reset' (none: fail).
        const std::string reset = spec.mode == Mode::kSpecificOffsets ? "earliest" : reset_strategy_;
        for (int k = 0; k < list->cnt; ++k) {
          Split& s = splits[from_group[static_cast<std::size_t>(k)]];
          std::int64_t off = list->elems[k].offset;
          if (off >= 0) set(s, off);
          else if (stop || reset == "latest") set(s, watermarks(s).second);
          else if (reset == "earliest") set(s, watermarks(s).first);
          else
            throw ClinkError(fmt::format(
                "{}: partition {}-{} has no committed offset for group '{}' and 'properties.auto.offset.reset' is "
                "'{}' (set it to earliest or latest, or choose another 'scan.startup.mode')",
                what_, s.tp.topic, s.tp.partition, c_.client.count("group.id") ? c_.client.at("group.id") : "",
                reset));
        }
        return;
      }
    }
  }

  std::uint64_t split_key(const KafkaTopicPartition& tp) {
    auto [it, added] = topic_ids_.emplace(tp.topic, topic_ids_.size());
    return (it->second << 32) | static_cast<std::uint32_t>(tp.partition);
  }

  void assign() {
    held_keys_.clear();
    for (const auto& s : splits_) held_keys_.push_back(s.key);
    PartitionList list = kafka::new_partition_list(static_cast<int>(splits_.size()));
    for (const auto& s : splits_)
      rd_kafka_topic_partition_list_add(list.get(), s.tp.topic.c_str(), s.tp.partition)->offset = s.next;
    rd_kafka_resp_err_t err = rd_kafka_assign(consumer_.get(), list.get());
    if (err) throw ClinkError(what_ + ": cannot assign partitions: " + kafka::kafka_error_text(err));
    assigned_ = true;
  }

  Split* split_of(rd_kafka_message_t* m) {
    const std::int32_t partition = m->partition;
    const char* topic = rd_kafka_topic_name(m->rkt);
    for (auto& s : splits_)
      if (s.tp.partition == partition && s.tp.topic == topic) return &s;
    return nullptr;
  }

  // One message or event; true when it finished its split.
  bool handle(rd_kafka_message_t* m, ColumnBatch& out) {
    Split* s = split_of(m);
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      if (s && m->offset >= s->stop) {
        s->next = s->stop;
        return true;
      }
      return false;
    }
    if (m->err) {
      throw ClinkError(fmt::format("{}: {}: {}", what_, kafka::kafka_error_text(m->err),
                                   m->payload ? std::string(static_cast<const char*>(m->payload), m->len) : ""));
    }
    if (!s || m->offset < s->next) return false;  // a partition given up, or a record before a seek
    if (m->offset >= s->stop) {
      s->next = s->stop;
      return true;
    }
    decode(m, *s, out);
    s->next = m->offset + 1;
    return s->next >= s->stop;
  }

  void decode(rd_kafka_message_t* m, const Split& s, ColumnBatch& out) {
    kinds_.clear();
    // The key first, into scratch columns: the value may still fail, or hold 0 or 2 rows.
    if (key_decoder_) {
      for (auto& col : key_scratch_) col.clear();
      if (!m->key) {
        for (auto& col : key_scratch_) col.append_null();
      } else {
        key_kinds_.clear();
        int k = key_decoder_->decode({static_cast<const char*>(m->key), m->key_len}, key_ptrs_, key_kinds_, reason_);
        if (k != 1) {
          if (k < 0) reject(m, s, "key: " + reason_);
          return;
        }
      }
    }
    int rows = 0;
    if (m->payload) {
      rows = value_decoder_->decode({static_cast<const char*>(m->payload), m->len}, value_ptrs_, kinds_, reason_);
      if (rows < 0) {
        reject(m, s, reason_);
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
      for (std::size_t r = 0; r < n; ++r) append_metadata(c_.metadata[i], m, s, col);
    }
    out.row_kinds().insert(out.row_kinds().end(), kinds_.begin(), kinds_.end());
    out.event_times().insert(out.event_times().end(), n, kNoEventTime);
    row_splits_.insert(row_splits_.end(), n, s.key);
  }

  void append_metadata(KafkaMetadata k, rd_kafka_message_t* m, const Split& s, Column& col) {
    switch (k) {
      case KafkaMetadata::kTopic: col.append_string(s.tp.topic); return;
      case KafkaMetadata::kPartition: col.append<std::int32_t>(s.tp.partition); return;
      case KafkaMetadata::kOffset: col.append<std::int64_t>(m->offset); return;
      case KafkaMetadata::kTimestamp: {
        rd_kafka_timestamp_type_t type;
        std::int64_t ts = rd_kafka_message_timestamp(m, &type);
        col.append<std::int64_t>(ts * 1000);  // TIMESTAMP_LTZ(3) in micros
        return;
      }
      case KafkaMetadata::kTimestampType: {
        rd_kafka_timestamp_type_t type;
        rd_kafka_message_timestamp(m, &type);
        col.append_string(timestamp_type_name(type));
        return;
      }
      case KafkaMetadata::kLeaderEpoch:
        col.append_null();  // librdkafka 2.0 does not expose a record's leader epoch (2.1 does)
        return;
      case KafkaMetadata::kHeaders: {
        ValueList map;
        rd_kafka_headers_t* hdrs = nullptr;
        if (rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR) {
          const char* name;
          const void* value;
          std::size_t size;
          for (std::size_t i = 0; rd_kafka_header_get_all(hdrs, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
               ++i) {
            map.items.emplace_back(std::string(name));
            map.items.push_back(value ? Value(std::string(static_cast<const char*>(value), size)) : Value::null());
          }
        }
        col.append_value(Value(std::move(map)));
        return;
      }
    }
  }

  void reject(rd_kafka_message_t* m, const Split& s, const std::string& reason) {
    std::string position = fmt::format("partition {} offset {}", s.tp.partition, m->offset);
    std::string_view payload = m->payload ? std::string_view(static_cast<const char*>(m->payload), m->len) : "";
    if (!c_.dead_letter_wired)
      throw ClinkError(fmt::format("{}: topic {} {}: {}", what_, s.tp.topic, position, reason));
    dead_letters_.add(dead_letter_code_of(reason), reason, s.tp.topic, position, payload);
  }

  const KafkaSourceConfig& c_;
  const int subtask_;
  const int parallelism_;
  RuntimeContext* ctx_ = nullptr;
  std::string what_;
  std::string reset_strategy_;
  bool user_group_ = false;
  KafkaHandle consumer_;
  rd_kafka_queue_t* queue_ = nullptr;
  std::vector<rd_kafka_message_t*> msgs_;
  std::vector<Split> splits_;
  std::set<KafkaTopicPartition> restored_known_;  // the partitions readers took before the restore
  std::set<KafkaTopicPartition> taken_;           // the partitions this reader took since
  bool discovered_ = false;
  bool assigned_ = false;
  std::vector<int> value_key_;           // per value column: its index among the key columns, or -1
  std::vector<std::size_t> key_only_;    // the key columns the value does not fill
  std::chrono::steady_clock::time_point next_discovery_{};
  std::unique_ptr<RecordDecoder> key_decoder_;
  std::unique_ptr<RecordDecoder> value_decoder_;
  std::vector<Column> key_scratch_;
  std::vector<Column*> key_ptrs_;
  std::vector<Column*> value_ptrs_;
  std::vector<RowKind> kinds_;
  std::vector<RowKind> key_kinds_;
  std::vector<std::uint64_t> row_splits_;  // the split key of each row of the last poll
  std::vector<std::uint64_t> held_keys_;   // the split keys of splits_ as last assigned
  std::map<std::string, std::uint64_t> topic_ids_;
  std::string reason_;
  DeadLetterCollector dead_letters_;
  std::map<std::int64_t, std::vector<std::pair<KafkaTopicPartition, std::int64_t>>> pending_commits_;
  std::vector<std::pair<KafkaTopicPartition, std::int64_t>> finished_offsets_;  // not yet in a checkpoint
};

}  // namespace

KafkaSqlSource::KafkaSqlSource(KafkaSourceConfig config) : config_(std::move(config)) {}

std::unique_ptr<SqlSourceReader> KafkaSqlSource::create_reader(int subtask, int parallelism) const {
  return std::make_unique<KafkaSqlReader>(config_, subtask, parallelism);
}

}  // namespace clink::sql
