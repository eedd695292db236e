#pragma once
// One ZooKeeper session over the C client (libzookeeper-mt), with the calls the HA
// services make, synchronous, results as ZooKeeper return codes (ZOK, ZNONODE, ...) so
// callers decide what an absent node means. zookeeper.h stays in zk_session.cpp.
//
// Watches go to the sink given at construction, on the client's completion thread: the
// sink must only queue them (a synchronous call from that thread would deadlock).
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

struct _zhandle;

namespace clink::cluster {

enum class ZkMode { Persistent, Ephemeral, EphemeralSequential };

// Event types and states as plain values (zookeeper.h's are extern ints).
enum class ZkEventType { Session, Created, Deleted, Changed, Child, Other };
enum class ZkState { Connecting, Connected, Expired, Other };

struct ZkStat {
  std::int32_t version = 0;
  std::int64_t ephemeral_owner = 0;
  std::int32_t num_children = 0;
};

struct ZkOp {
  enum class Kind { Create, Set, Delete, Check };
  Kind kind;
  std::string path;
  std::string data;
  std::int32_t version = -1;
  ZkMode mode = ZkMode::Persistent;  // Create only
};

class ZkSession {
 public:
  using EventSink = std::function<void(ZkEventType type, ZkState state, const std::string& path)>;

  // Connects and waits until the session is established; throws ClinkError naming the
  // quorum when it is not within `connect_timeout`.
  ZkSession(std::string quorum, std::chrono::milliseconds session_timeout, std::chrono::milliseconds connect_timeout,
            EventSink sink);
  ~ZkSession();  // closes the session: its ephemeral nodes go at once
  ZkSession(const ZkSession&) = delete;
  ZkSession& operator=(const ZkSession&) = delete;

  std::int64_t session_id() const;
  // The timeout the server granted (it clamps the asked one to its bounds).
  std::chrono::milliseconds negotiated_timeout() const;
  bool expired() const;
  const std::string& quorum() const { return quorum_; }

  int get(const std::string& path, bool watch, std::string* data, ZkStat* stat = nullptr);
  int exists(const std::string& path, bool watch, ZkStat* stat = nullptr);
  int children(const std::string& path, bool watch, std::vector<std::string>* names);
  int create(const std::string& path, const std::string& data, ZkMode mode, std::string* created = nullptr);
  int remove(const std::string& path, std::int32_t version = -1);
  // All or nothing; on failure `failed` is the index of the first op that failed (-1 when
  // the whole call failed, e.g. connection loss).
  int multi(const std::vector<ZkOp>& ops, int* failed);

  // Creates `path` and its missing ancestors as empty persistent nodes; throws ClinkError.
  void ensure_path(const std::string& path);
  // Deletes `path` and everything below it; throws ClinkError (absent is fine).
  void remove_tree(const std::string& path);

  // "ZooKeeper 127.0.0.1:2181: <what> <path>: <ZooKeeper's message>".
  std::string error(const std::string& what, const std::string& path, int rc) const;

  static bool is_no_node(int rc);
  static bool is_node_exists(int rc);
  static bool is_bad_version(int rc);
  static bool is_ok(int rc) { return rc == 0; }
  // The session is gone (expired or closed): nothing done through it will succeed.
  static bool is_session_lost(int rc);

 private:
  static void on_watch(_zhandle* zh, int type, int state, const char* path, void* ctx);

  std::string quorum_;
  EventSink sink_;
  _zhandle* zh_ = nullptr;
  mutable std::mutex mutex_;
  std::condition_variable state_changed_;
  ZkState state_ = ZkState::Connecting;
};

}  // namespace clink::cluster
