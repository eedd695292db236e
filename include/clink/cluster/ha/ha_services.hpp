#pragma once
// High availability as Flink runs it: coordinators elect one leader, workers and clients
// find it, and the leader keeps what a successor needs to take over (the job graphs, the
// latest completed checkpoint of every job, the catalog) where the successor can read it.
//
// Two implementations of one interface (make_ha_services):
//   - ZooKeeper (high-availability.type: zookeeper): leader election with ephemeral
//     sequential znodes, state pointers in znodes, large blobs in files under
//     high-availability.storageDir. Layout under <root><cluster-id> (Flink 2.3's, whose
//     job graphs are "execution plans"; the catalog is clink's own):
//       leader/latch/_c_<id>-latch-<seq>        one ephemeral node per contender
//       leader/coordinator/connection_info      the leader's address (ephemeral)
//       execution-plans/<job id>                job record (inline or a storageDir path)
//       jobs/<job id>/checkpoints/<id, 19 digits>  latest completed checkpoint pointer
//       jobs/<job id>/checkpoint_id_counter     the next checkpoint id
//       catalog/<name>                          catalog object definitions (clink's own)
//   - standalone (NONE): one coordinator, always the leader; the stores live in memory, or
//     in files under storageDir when it is set.
//
// Fencing: only the current leader may write. Every write of the ZooKeeper stores is one
// ZooKeeper transaction (multi) that starts with a check that this contender's latch node
// still exists. The latch node is ephemeral and, once it was the lowest, stays the lowest
// while it exists (sequence numbers only grow), so "it exists" means "this grant still
// holds": a deposed leader (its session expired, or it re-contended with a new node) gets
// NotLeaderError and changes nothing, even when it does not know yet that it was deposed.
// A process that was not granted leadership is refused without asking ZooKeeper.
//
// Threads: on_granted / on_revoked and retriever listeners run on the services' own event
// thread, one at a time; they may call the stores but should not block for long.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "clink/cluster/ha/ha_config.hpp"
#include "clink/core/error.hpp"

namespace clink::cluster {

// A write by a process that does not (or no longer) hold leadership.
class NotLeaderError : public ClinkError {
 public:
  using ClinkError::ClinkError;
};

// What the leader published: its address (the caller's string, e.g. a JSON object with the
// RPC and REST endpoints) and the id of its grant, which changes with every grant (Flink's
// leader session id).
struct LeaderInfo {
  std::string address;
  std::string session_id;
  bool operator==(const LeaderInfo&) const = default;
};

// What a coordinator publishes as its leader address: its control-plane (gRPC) and REST
// endpoints, as JSON {"rpc":"host:6123","rest":"http://host:8081"}. Workers reconnect to
// `rpc` (ControlClientOptions::resolver), clients call `rest`.
struct CoordinatorAddress {
  std::string rpc;
  std::string rest;
  std::string encode() const;
  // nullopt when `address` is not such a JSON object.
  static std::optional<CoordinatorAddress> decode(std::string_view address);
  bool operator==(const CoordinatorAddress&) const = default;
};

class LeaderElection {
 public:
  using OnGranted = std::function<void(const std::string& session_id)>;
  using OnRevoked = std::function<void()>;
  virtual ~LeaderElection() = default;
  // Starts contending (returns at once). When granted, `address` is published for the
  // retrievers, then on_granted runs. Leadership lost (session expired, connection lost
  // unless tolerated, stop()) calls on_revoked; the contender then contends again until
  // stop(). Called once.
  virtual void run(std::string address, OnGranted on_granted, OnRevoked on_revoked) = 0;
  // Resigns (on_revoked when leading) and stops contending; waits for the callbacks.
  virtual void stop() = 0;
  virtual bool has_leadership() const = 0;
  // The session id of the current grant; nullopt when not leading.
  virtual std::optional<std::string> leader_session() const = 0;
};

// The current leader as workers and clients see it, with change notifications.
class LeaderRetriever {
 public:
  using Listener = std::function<void(const std::optional<LeaderInfo>&)>;
  virtual ~LeaderRetriever() = default;
  std::optional<LeaderInfo> current() const;
  // `listener` runs with the current value at once (on the caller's thread), then on every
  // change (on the services' event thread). Returns an id for unsubscribe.
  int subscribe(Listener listener);
  // After it returns the listener is not called again (it may be called from a listener).
  void unsubscribe(int id);
  // Blocks until `accept(current leader)` holds or `timeout` passes; the leader then (which
  // may be nullopt).
  std::optional<LeaderInfo> wait_until(const std::function<bool(const std::optional<LeaderInfo>&)>& accept,
                                       std::chrono::milliseconds timeout) const;
  // Blocks until some leader is known.
  std::optional<LeaderInfo> wait_for_leader(std::chrono::milliseconds timeout) const;

 protected:
  // Implementations report every value they see; listeners hear only changes.
  void publish(std::optional<LeaderInfo> leader);

 private:
  std::recursive_mutex calling_;  // held while listeners run
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::optional<LeaderInfo> current_;
  std::map<int, Listener> listeners_;
  int next_id_ = 1;
};

class HaStateBackend;  // src/cluster/ha: znodes or files, fenced writes
class BlobFiles;       // src/cluster/ha: large blobs in storageDir

// Job records (Flink 2.3's execution plans): job id -> the coordinator's blob (its spec
// and options).
class JobGraphStore {
 public:
  JobGraphStore(std::shared_ptr<HaStateBackend> backend, std::shared_ptr<BlobFiles> files);
  // Adds or replaces. Leader only (NotLeaderError).
  void put(std::string_view job_id, std::string_view blob);
  std::optional<std::string> get(std::string_view job_id) const;
  // False when there was none. Leader only.
  bool remove(std::string_view job_id);
  std::vector<std::string> job_ids() const;  // sorted

 private:
  std::shared_ptr<HaStateBackend> backend_;
  std::shared_ptr<BlobFiles> files_;
};

struct CompletedCheckpointPointer {
  std::int64_t checkpoint_id = 0;
  std::string external_path;  // the checkpoint's directory (its _metadata inside)
  bool operator==(const CompletedCheckpointPointer&) const = default;
};

// Per job: the latest completed checkpoint and the checkpoint id counter.
class CheckpointPointerStore {
 public:
  explicit CheckpointPointerStore(std::shared_ptr<HaStateBackend> backend);
  // Records a completed checkpoint; older pointers of the job are dropped in the same
  // transaction. An id not above the latest one is refused (ClinkError). Leader only.
  void add_completed(std::string_view job_id, const CompletedCheckpointPointer& checkpoint);
  std::optional<CompletedCheckpointPointer> latest(std::string_view job_id) const;
  // The next checkpoint id to use (1 when the job has none), Flink's CheckpointIDCounter.
  std::int64_t next_checkpoint_id(std::string_view job_id) const;
  // Returns the next id and stores it plus one (compare-and-set). Leader only.
  std::int64_t get_and_increment(std::string_view job_id);
  // Leader only.
  void set_next_checkpoint_id(std::string_view job_id, std::int64_t next_id);
  // Drops the job's pointers and counter (job finished or cancelled). Leader only.
  void remove_job(std::string_view job_id);

 private:
  std::shared_ptr<HaStateBackend> backend_;
};

// Named catalog objects (CREATE TABLE / MODEL / FUNCTION definitions) kept across takeover.
class CatalogStore {
 public:
  CatalogStore(std::shared_ptr<HaStateBackend> backend, std::shared_ptr<BlobFiles> files);
  void put(std::string_view name, std::string_view blob);  // leader only
  std::optional<std::string> get(std::string_view name) const;
  bool remove(std::string_view name);  // leader only
  std::vector<std::string> names() const;  // sorted

 private:
  std::shared_ptr<HaStateBackend> backend_;
  std::shared_ptr<BlobFiles> files_;
};

class HaServices {
 public:
  virtual ~HaServices() = default;
  virtual LeaderElection& leader_election() = 0;
  virtual LeaderRetriever& leader_retriever() = 0;
  virtual JobGraphStore& job_graphs() = 0;
  virtual CheckpointPointerStore& checkpoints() = 0;
  virtual CatalogStore& catalog() = 0;
  // Deletes everything this cluster id keeps (znodes and storageDir files): the cluster
  // is shut down for good (Flink's closeAndCleanupAllData). Unfenced.
  virtual void cleanup_all_data() = 0;
};

// For `config.type`: ZooKeeper (connects, blocking up to the connection timeout; throws
// ClinkError naming the quorum when it cannot) or standalone.
std::unique_ptr<HaServices> make_ha_services(const HaConfig& config);

}  // namespace clink::cluster
