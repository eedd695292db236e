#pragma once
// Transaction administration the exactly-once Kafka sink needs and librdkafka cannot do:
// committing a transaction that a dead producer pre-committed (flushed, not committed),
// and aborting the lingering transactions of a failed attempt. Flink's KafkaSink does the
// first by poking producerId/epoch into a fresh Java producer by reflection; librdkafka
// (2.0.2) can neither resume another producer's transaction nor tell its producer id and
// epoch, so this speaks the few Kafka requests involved itself: FindCoordinator,
// DescribeTransactions, EndTxn and InitProducerId, over plain blocking sockets.
//
// The transactions are "transaction protocol v1" ones (KIP-890's v2 came with Kafka 4.0;
// librdkafka 2.0.2 predates it): the producer epoch stays the same across commit and a
// committed transaction keeps its producer id/epoch in the coordinator until the id starts
// another transaction or is fenced. EndTxn is therefore sent at version <= 4 (v5 would
// ask the coordinator for v2 semantics).
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace clink::kafka {

// What the transaction coordinator knows about one transactional id.
struct KafkaTransactionState {
  // "Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort",
  // "PrepareEpochFence" or "Dead" (Kafka's TransactionState names).
  std::string state;
  std::int64_t producer_id = -1;
  std::int16_t producer_epoch = -1;
  std::vector<std::pair<std::string, std::int32_t>> partitions;  // (topic, partition) in the transaction

  // A transaction has begun and not yet ended (its records hold back read_committed readers).
  bool open() const { return state == "Ongoing" || state.starts_with("Prepare"); }
};

// "state Ongoing, producer id 7, epoch 0, 2 partitions" (for error messages and logs).
std::string to_string(const KafkaTransactionState& s);

enum class KafkaCommitResult {
  kCommitted,         // this call committed it
  kAlreadyCommitted,  // it was committed before (a commit retried after a crash)
};

// Not thread-safe; one per thread (it keeps a connection per broker it talked to).
class KafkaTransactionAdmin {
 public:
  // bootstrap_servers: "host:port[,host:port...]" as properties.bootstrap.servers.
  // timeout: how long one call (describe/commit/abort_lingering) may take, including its
  // retries while a coordinator loads, moves or finishes a previous transaction; a call
  // that runs out of it throws ClinkError.
  explicit KafkaTransactionAdmin(std::string bootstrap_servers,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(30));
  ~KafkaTransactionAdmin();
  KafkaTransactionAdmin(KafkaTransactionAdmin&&) noexcept;
  KafkaTransactionAdmin& operator=(KafkaTransactionAdmin&&) noexcept;

  // The coordinator's view of the id; nullopt when it does not know the id (never used,
  // or expired after transactional.id.expiration.ms).
  //
  // This is how the sink learns its committable at pre-commit, since librdkafka hides its
  // producer id/epoch: after rd_kafka_flush the coordinator has the live producer's
  // transaction as "Ongoing" with its id, epoch and every partition written (librdkafka
  // adds a partition to the transaction before its first record there is acknowledged).
  // A transaction that wrote nothing is not open at the coordinator ("Empty" or the
  // previous transaction's Complete* state): there is nothing to commit, record nothing.
  std::optional<KafkaTransactionState> describe(const std::string& transactional_id);

  // Commits the transaction that producer (id, epoch) left open, whether or not that
  // producer still lives, and returns once the commit markers are written (read_committed
  // consumers see the records). kAlreadyCommitted when the coordinator shows that very
  // transaction committed. Throws ClinkError naming the broker's error when it cannot be
  // committed: aborted (INVALID_TXN_STATE), the id fenced or reused by a newer epoch
  // (PRODUCER_FENCED), another producer id (INVALID_PRODUCER_ID_MAPPING), or the id unknown
  // (TRANSACTIONAL_ID_NOT_FOUND) - the records of that transaction are lost.
  KafkaCommitResult commit(const std::string& transactional_id, std::int64_t producer_id,
                           std::int16_t producer_epoch);

  // Fences the id (InitProducerId with it, as a new producer would: the coordinator bumps
  // the epoch, so a zombie producer with the id can no longer write or commit, and aborts
  // the transaction it had open) and waits until that abort is complete. false when the
  // coordinator does not know the id (nothing to abort; the id is left unused), true
  // otherwise. A transaction in PrepareCommit is left to finish committing (the fence
  // waits for it); an Ongoing one is aborted, so commit what a restored checkpoint needs
  // committed before aborting the ids of the failed attempt.
  bool abort_lingering(const std::string& transactional_id);

  // The ids starting with `prefix` that have a transaction open (Ongoing), from every
  // broker in `brokers` ("host:port" each; each broker coordinates a share of the ids, so
  // pass them all; empty: the bootstrap servers). How a restored sink finds what earlier
  // attempts left open, without guessing ids (ListTransactions, KIP-664).
  std::vector<std::string> list_open(const std::string& prefix, const std::vector<std::string>& brokers = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace clink::kafka
