#pragma once
// The broker the Kafka tests run against: ctest starts one (the `kafka` fixture in
// tests/CMakeLists.txt) and passes its address in CLINK_KAFKA_BOOTSTRAP. Running a test
// binary by hand: `scripts/kafka start` and export the address it prints.
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>
#include <thread>
#include <unistd.h>

namespace clink::test {

inline std::string kafka_bootstrap() {
  const char* b = std::getenv("CLINK_KAFKA_BOOTSTRAP");
  if (!b || !*b)
    throw std::runtime_error(
        "CLINK_KAFKA_BOOTSTRAP is not set: run the Kafka tests through ctest (it starts a broker), or run "
        "`scripts/kafka start` and export the bootstrap address it prints");
  return b;
}

// A name no other test (or earlier run against the same broker) uses: "<base>-<pid>-<n>".
inline std::string unique_kafka_name(const std::string& base) {
  static std::atomic<int> n{0};
  return base + "-" + std::to_string(::getpid()) + "-" + std::to_string(n++);
}

// Creates `topic` with `partitions` partitions and waits until its metadata lists them.
inline void create_kafka_topic(const std::string& topic, int partitions) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", kafka_bootstrap().c_str(), err, sizeof err);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!rk) throw std::runtime_error(err);
  rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(topic.c_str(), partitions, 1, err, sizeof err);
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk);
  rd_kafka_CreateTopics(rk, &nt, 1, nullptr, q);
  rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 30000);
  std::string failure;
  if (!ev) failure = "CreateTopics timed out";
  else {
    const rd_kafka_CreateTopics_result_t* res = rd_kafka_event_CreateTopics_result(ev);
    size_t n = 0;
    const rd_kafka_topic_result_t** tr = rd_kafka_CreateTopics_result_topics(res, &n);
    if (rd_kafka_event_error(ev)) failure = rd_kafka_event_error_string(ev);
    else if (n == 1 && rd_kafka_topic_result_error(tr[0]) &&
             rd_kafka_topic_result_error(tr[0]) != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
      failure = rd_kafka_topic_result_error_string(tr[0]);
    rd_kafka_event_destroy(ev);
  }
  rd_kafka_NewTopic_destroy(nt);
  rd_kafka_queue_destroy(q);
  // Wait until the broker's metadata has every partition with a leader.
  for (int attempt = 0; failure.empty() && attempt < 100; ++attempt) {
    const rd_kafka_metadata_t* md = nullptr;
    rd_kafka_topic_t* t = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
    bool ready = false;
    if (rd_kafka_metadata(rk, 0, t, &md, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ready = md->topic_cnt == 1 && md->topics[0].err == 0 && md->topics[0].partition_cnt == partitions;
      for (int p = 0; ready && p < md->topics[0].partition_cnt; ++p) ready = md->topics[0].partitions[p].leader >= 0;
      rd_kafka_metadata_destroy(md);
    }
    rd_kafka_topic_destroy(t);
    if (ready) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  rd_kafka_destroy(rk);
  if (!failure.empty()) throw std::runtime_error("create topic " + topic + ": " + failure);
}

struct KafkaRecord {
  std::string key;    // "" with has_key false: no key
  std::string value;  // "" with has_value false: a tombstone
  std::int32_t partition = 0;
  std::int64_t offset = -1;
  std::int64_t timestamp_ms = 0;
  bool has_key = false;
  bool has_value = true;
  std::vector<std::pair<std::string, std::string>> headers;
};

inline KafkaRecord kafka_value(std::string value, std::int32_t partition = 0) {
  KafkaRecord r;
  r.value = std::move(value);
  r.partition = partition;
  return r;
}
inline KafkaRecord kafka_keyed(std::string key, std::string value, std::int32_t partition = 0) {
  KafkaRecord r = kafka_value(std::move(value), partition);
  r.key = std::move(key);
  r.has_key = true;
  return r;
}

// Writes `records` (each to its partition, with its key, headers and timestamp when set)
// and waits until the broker acknowledged them all.
inline void produce_kafka(const std::string& topic, const std::vector<KafkaRecord>& records) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", kafka_bootstrap().c_str(), err, sizeof err);
  rd_kafka_conf_set(conf, "linger.ms", "1", err, sizeof err);
  // Retries keep the order and write nothing twice: a topic created just before answers
  // the first requests with "not leader" at times, and a plain producer's retry then put
  // a partition's records out of order (seen as a test reading p0-2 at offset 1).
  rd_kafka_conf_set(conf, "enable.idempotence", "true", err, sizeof err);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!rk) throw std::runtime_error(err);
  for (const auto& r : records) {
    rd_kafka_headers_t* hdrs = rd_kafka_headers_new(r.headers.size());
    for (const auto& [k, v] : r.headers) rd_kafka_header_add(hdrs, k.data(), static_cast<ssize_t>(k.size()), v.data(), static_cast<ssize_t>(v.size()));
    rd_kafka_resp_err_t e;
    while ((e = rd_kafka_producev(
                rk, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(r.partition),
                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                RD_KAFKA_V_KEY(r.has_key ? const_cast<char*>(r.key.data()) : nullptr, r.has_key ? r.key.size() : 0),
                RD_KAFKA_V_VALUE(r.has_value ? const_cast<char*>(r.value.data()) : nullptr,
                                 r.has_value ? r.value.size() : 0),
                RD_KAFKA_V_TIMESTAMP(r.timestamp_ms), RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_END)) ==
           RD_KAFKA_RESP_ERR__QUEUE_FULL)
      rd_kafka_poll(rk, 20);  // the local queue is full: let deliveries drain
    if (e) {
      rd_kafka_headers_destroy(hdrs);
      rd_kafka_destroy(rk);
      throw std::runtime_error(std::string("produce: ") + rd_kafka_err2str(e));
    }
  }
  rd_kafka_resp_err_t e = rd_kafka_flush(rk, 30000);
  rd_kafka_destroy(rk);
  if (e) throw std::runtime_error(std::string("flush: ") + rd_kafka_err2str(e));
}

// Every record of `topic` from the start to its end now (read_committed: only committed
// transactions' records, and none after an open transaction), in partition then offset order.
inline std::vector<KafkaRecord> consume_kafka(const std::string& topic, bool read_committed = true) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", kafka_bootstrap().c_str(), err, sizeof err);
  rd_kafka_conf_set(conf, "group.id", unique_kafka_name("reader").c_str(), err, sizeof err);
  rd_kafka_conf_set(conf, "enable.partition.eof", "true", err, sizeof err);
  rd_kafka_conf_set(conf, "enable.auto.commit", "false", err, sizeof err);
  rd_kafka_conf_set(conf, "isolation.level", read_committed ? "read_committed" : "read_uncommitted", err, sizeof err);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (!rk) throw std::runtime_error(err);
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_topic_t* t = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  if (rd_kafka_metadata(rk, 0, t, &md, 10000) != RD_KAFKA_RESP_ERR_NO_ERROR) throw std::runtime_error("metadata");
  int partitions = md->topics[0].partition_cnt;
  rd_kafka_metadata_destroy(md);
  rd_kafka_topic_destroy(t);
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
  for (int p = 0; p < partitions; ++p)
    rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_assign(rk, list);
  rd_kafka_topic_partition_list_destroy(list);
  std::vector<KafkaRecord> out;
  int eofs = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (eofs < partitions && std::chrono::steady_clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 100);
    if (!m) continue;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) ++eofs;
    else if (!m->err) {
      KafkaRecord r;
      r.partition = m->partition;
      r.offset = m->offset;
      r.has_key = m->key != nullptr;
      if (m->key) r.key.assign(static_cast<const char*>(m->key), m->key_len);
      r.has_value = m->payload != nullptr;
      if (m->payload) r.value.assign(static_cast<const char*>(m->payload), m->len);
      r.timestamp_ms = rd_kafka_message_timestamp(m, nullptr);
      rd_kafka_headers_t* hdrs = nullptr;
      if (rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        const char* name;
        const void* v;
        size_t size;
        for (size_t i = 0; rd_kafka_header_get_all(hdrs, i, &name, &v, &size) == RD_KAFKA_RESP_ERR_NO_ERROR; ++i)
          r.headers.emplace_back(name, v ? std::string(static_cast<const char*>(v), size) : std::string());
      }
      out.push_back(std::move(r));
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  std::stable_sort(out.begin(), out.end(), [](const KafkaRecord& a, const KafkaRecord& b) {
    return a.partition != b.partition ? a.partition < b.partition : a.offset < b.offset;
  });
  return out;
}

inline std::vector<std::string> values_of(const std::vector<KafkaRecord>& records) {
  std::vector<std::string> out;
  for (const auto& r : records) out.push_back(r.has_value ? r.value : "<tombstone>");
  return out;
}

}  // namespace clink::test
