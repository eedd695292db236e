#pragma once
// The broker the Kafka tests run against: ctest starts one (the `kafka` fixture in
// tests/CMakeLists.txt) and passes its address in CLINK_KAFKA_BOOTSTRAP. Running a test
// binary by hand: `scripts/kafka start` and export the address it prints.
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
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

}  // namespace clink::test
