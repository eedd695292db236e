// KafkaTransactionAdmin against a real broker and real librdkafka transactional producers:
// the recovery steps of the exactly-once Kafka sink (commit what a dead producer
// pre-committed, abort what a failed attempt left open).
#include "clink/connectors/kafka/kafka_transaction_admin.hpp"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "clink/core/error.hpp"
#include "kafka_test_env.hpp"

namespace clink::test {
namespace {

using kafka::KafkaCommitResult;
using kafka::KafkaTransactionAdmin;
using kafka::KafkaTransactionState;
using Clock = std::chrono::steady_clock;

rd_kafka_t* new_transactional_producer(const std::string& transactional_id) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  auto set = [&](const char* k, const std::string& v) {
    if (rd_kafka_conf_set(conf, k, v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) throw std::runtime_error(err);
  };
  set("bootstrap.servers", kafka_bootstrap());
  set("transactional.id", transactional_id);
  set("linger.ms", "1");
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!rk) throw std::runtime_error(err);
  return rk;
}

void check(rd_kafka_error_t* error, const char* what) {
  if (!error) return;
  std::string msg = std::string(what) + ": " + rd_kafka_error_string(error);
  rd_kafka_error_destroy(error);
  throw std::runtime_error(msg);
}

// init_transactions + begin_transaction + `n` records (alternating partitions 0 and 1,
// values "<prefix>-<i>") + flush: the state a sink's producer is in at pre-commit.
void begin_and_produce(rd_kafka_t* rk, const std::string& topic, int n, const std::string& prefix) {
  check(rd_kafka_init_transactions(rk, 30000), "init_transactions");
  check(rd_kafka_begin_transaction(rk), "begin_transaction");
  for (int i = 0; i < n; ++i) {
    std::string value = prefix + "-" + std::to_string(i);
    rd_kafka_resp_err_t e = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(i % 2),
                                              RD_KAFKA_V_VALUE(value.data(), value.size()),
                                              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
    if (e) throw std::runtime_error(std::string("produce: ") + rd_kafka_err2str(e));
  }
  if (rd_kafka_flush(rk, 30000) != RD_KAFKA_RESP_ERR_NO_ERROR) throw std::runtime_error("flush timed out");
}

// Commits `n` records with a producer of its own (a later, healthy writer of the topic).
void produce_committed(const std::string& topic, int n, const std::string& prefix) {
  rd_kafka_t* rk = new_transactional_producer(unique_kafka_name("healthy"));
  begin_and_produce(rk, topic, n, prefix);
  check(rd_kafka_commit_transaction(rk, 30000), "commit_transaction");
  rd_kafka_destroy(rk);
}

// A producer that begins a transaction, produces and flushes `n` records, and is then
// SIGKILLed: nothing ends its transaction (a sink task that crashed after pre-commit).
// Runs in a forked child so that the kill takes librdkafka's threads and sockets along.
void produce_and_die(const std::string& transactional_id, const std::string& topic, int n) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(fds[0]);
    char status = 'E';
    try {
      rd_kafka_t* rk = new_transactional_producer(transactional_id);
      begin_and_produce(rk, topic, n, "dead");
      status = 'K';
    } catch (...) {
    }
    (void)!::write(fds[1], &status, 1);
    if (status == 'K') ::raise(SIGKILL);
    ::_exit(1);
  }
  ::close(fds[1]);
  pollfd p{fds[0], POLLIN, 0};
  char status = 0;
  if (::poll(&p, 1, 60000) == 1) (void)!::read(fds[0], &status, 1);
  ::close(fds[0]);
  ::kill(child, SIGKILL);
  int wstatus = 0;
  ::waitpid(child, &wstatus, 0);
  ASSERT_EQ(status, 'K') << "the child producer failed before its flush";
  ASSERT_TRUE(WIFSIGNALED(wstatus));
}

// The values a read_committed consumer reads from partitions 0 and 1 of `topic`, from the
// start: stops once it has `expected` and stands at the end of both partitions.
std::vector<std::string> read_committed(const std::string& topic, std::size_t expected,
                                        std::chrono::milliseconds timeout = std::chrono::seconds(15)) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  for (auto [k, v] : std::map<std::string, std::string>{{"bootstrap.servers", kafka_bootstrap()},
                                                        {"group.id", unique_kafka_name("reader")},
                                                        {"isolation.level", "read_committed"},
                                                        {"enable.partition.eof", "true"},
                                                        {"enable.auto.commit", "false"},
                                                        {"fetch.wait.max.ms", "50"}})
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) throw std::runtime_error(err);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (!rk) throw std::runtime_error(err);
  rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(2);
  for (int p = 0; p < 2; ++p) rd_kafka_topic_partition_list_add(parts, topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_assign(rk, parts);
  rd_kafka_topic_partition_list_destroy(parts);
  std::vector<std::string> values;
  bool at_end[2] = {false, false};
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline && !(values.size() >= expected && at_end[0] && at_end[1])) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 100);
    if (!m) continue;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) at_end[m->partition] = true;
    else if (!m->err) {
      at_end[m->partition] = false;
      values.emplace_back(static_cast<const char*>(m->payload), m->len);
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return values;
}

using Partitions = std::vector<std::pair<std::string, std::int32_t>>;

class KafkaTransactionAdminTest : public ::testing::Test {
 protected:
  KafkaTransactionAdmin admin{kafka_bootstrap(), std::chrono::seconds(20)};
  std::string topic = unique_kafka_name("txn-admin");
  std::string id = unique_kafka_name("txn-admin-id");
  void SetUp() override { create_kafka_topic(topic, 2); }
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ClinkError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_F(KafkaTransactionAdminTest, CommitsTheTransactionADeadProducerLeftOpen) {
  produce_and_die(id, topic, 10);
  std::optional<KafkaTransactionState> s = admin.describe(id);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->state, "Ongoing");
  EXPECT_TRUE(s->open());
  EXPECT_GE(s->producer_id, 0);
  EXPECT_GE(s->producer_epoch, 0);
  EXPECT_EQ(s->partitions, (Partitions{{topic, 0}, {topic, 1}}));
  EXPECT_TRUE(read_committed(topic, 0, std::chrono::seconds(2)).empty()) << "visible before the commit";

  EXPECT_EQ(admin.commit(id, s->producer_id, s->producer_epoch), KafkaCommitResult::kCommitted);
  EXPECT_EQ(read_committed(topic, 10).size(), 10u);
  std::optional<KafkaTransactionState> after = admin.describe(id);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->state, "CompleteCommit");
  // A commit retried after a crash (the checkpoint's committable committed once already).
  EXPECT_EQ(admin.commit(id, s->producer_id, s->producer_epoch), KafkaCommitResult::kAlreadyCommitted);
  EXPECT_EQ(read_committed(topic, 10).size(), 10u);
}

TEST_F(KafkaTransactionAdminTest, AbortLingeringAbortsADeadProducersTransactionAndUnblocksTheTopic) {
  produce_and_die(id, topic, 10);
  std::optional<KafkaTransactionState> s = admin.describe(id);
  ASSERT_TRUE(s);
  ASSERT_EQ(s->state, "Ongoing");

  EXPECT_TRUE(admin.abort_lingering(id));
  std::optional<KafkaTransactionState> after = admin.describe(id);
  ASSERT_TRUE(after);
  EXPECT_FALSE(after->open()) << to_string(*after);
  EXPECT_EQ(after->producer_id, s->producer_id);
  EXPECT_GT(after->producer_epoch, s->producer_epoch) << "fenced";

  // The records after the aborted ones are readable: the last stable offset moved past them.
  produce_committed(topic, 4, "later");
  std::vector<std::string> values = read_committed(topic, 4);
  EXPECT_EQ(values.size(), 4u);
  for (const std::string& v : values) EXPECT_TRUE(v.starts_with("later-")) << v;

  // The aborted transaction cannot be committed any more: it is lost, and commit says so.
  std::string error = error_of([&] { admin.commit(id, s->producer_id, s->producer_epoch); });
  EXPECT_NE(error.find("PRODUCER_FENCED"), std::string::npos) << error;
  // Aborting again is harmless.
  EXPECT_TRUE(admin.abort_lingering(id));
}

TEST_F(KafkaTransactionAdminTest, UnknownIdIsNotFound) {
  std::string never_used = unique_kafka_name("never-used");
  EXPECT_FALSE(admin.describe(never_used));
  EXPECT_FALSE(admin.abort_lingering(never_used));
  EXPECT_FALSE(admin.describe(never_used)) << "abort_lingering must not create the id";
  std::string error = error_of([&] { admin.commit(never_used, 1, 0); });
  EXPECT_NE(error.find("TRANSACTIONAL_ID_NOT_FOUND"), std::string::npos) << error;
}

TEST_F(KafkaTransactionAdminTest, CommitWithAWrongProducerFails) {
  produce_and_die(id, topic, 4);
  std::optional<KafkaTransactionState> s = admin.describe(id);
  ASSERT_TRUE(s);
  std::string error = error_of([&] { admin.commit(id, s->producer_id, static_cast<std::int16_t>(s->producer_epoch + 1)); });
  EXPECT_NE(error.find("PRODUCER_FENCED"), std::string::npos) << error;
  error = error_of([&] { admin.commit(id, s->producer_id + 1000, s->producer_epoch); });
  EXPECT_NE(error.find("INVALID_PRODUCER_ID_MAPPING"), std::string::npos) << error;
  // Neither touched the transaction: it is still open and still commits.
  ASSERT_EQ(admin.describe(id)->state, "Ongoing");
  EXPECT_EQ(admin.commit(id, s->producer_id, s->producer_epoch), KafkaCommitResult::kCommitted);
  EXPECT_EQ(read_committed(topic, 4).size(), 4u);
}

// How the sink learns its committable at pre-commit: librdkafka does not expose its
// producer id/epoch, but the coordinator does.
TEST_F(KafkaTransactionAdminTest, DescribeGivesTheIdentityOfALiveProducerThatCommitAccepts) {
  rd_kafka_t* rk = new_transactional_producer(id);
  begin_and_produce(rk, topic, 6, "live");
  std::optional<KafkaTransactionState> s = admin.describe(id);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->state, "Ongoing");
  EXPECT_EQ(s->partitions, (Partitions{{topic, 0}, {topic, 1}}));

  // rd_kafka_destroy of a producer with an open transaction (librdkafka 2.0.2) does not
  // end the transaction: it stays Ongoing under the same producer id and epoch.
  rd_kafka_destroy(rk);
  std::optional<KafkaTransactionState> after = admin.describe(id);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->state, "Ongoing") << to_string(*after);
  EXPECT_EQ(after->producer_id, s->producer_id);
  EXPECT_EQ(after->producer_epoch, s->producer_epoch);

  EXPECT_EQ(admin.commit(id, s->producer_id, s->producer_epoch), KafkaCommitResult::kCommitted);
  EXPECT_EQ(read_committed(topic, 6).size(), 6u);
}

}  // namespace
}  // namespace clink::test
