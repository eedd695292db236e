// high-availability.type: zookeeper. One ZooKeeper session per process serves the
// election, the retriever and the stores; an event thread runs everything watches and
// session changes trigger, so the election's state has a single writer.
//
// Election (ZooKeeper's recipe, as Curator's LeaderLatch that Flink uses): each contender
// creates an ephemeral sequential node under leader/latch; the lowest leads; every other
// contender watches only its predecessor (no herd when the leader goes). The leader then
// publishes leader/coordinator/connection_info (ephemeral, so it disappears with the
// leader's session) in a transaction that checks its latch node.
//
// Session expiry revokes leadership; the services open a new session and contend again
// with a new latch node. Losing the connection revokes it too unless
// tolerate-suspended-connections (Flink's default: revoke), and a reconnect within the
// session timeout re-checks the latch and grants again.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <deque>
#include <future>
#include <optional>
#include <utility>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "ha_implementations.hpp"
#include "ha_state_backend.hpp"
#include "zk_session.hpp"

namespace clink::cluster {

namespace {

std::string random_session_id() {
  std::random_device rd;
  std::mt19937_64 rng(rd());
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(rng()));
  return buf;
}

class ZooKeeperHaServices;

class ZkRetriever final : public LeaderRetriever {
 public:
  using LeaderRetriever::publish;
};

class ZkElection final : public LeaderElection {
 public:
  explicit ZkElection(ZooKeeperHaServices& services) : services_(services) {}
  void run(std::string address, OnGranted on_granted, OnRevoked on_revoked) override;
  void stop() override;
  bool has_leadership() const override;
  std::optional<std::string> leader_session() const override;

 private:
  ZooKeeperHaServices& services_;
};

// The stores' nodes under the cluster path; writes fenced by the latch node.
class ZkBackend final : public HaStateBackend {
 public:
  explicit ZkBackend(ZooKeeperHaServices& services) : services_(services) {}
  std::optional<HaNode> get(const std::string& path) override;
  std::vector<std::string> children(const std::string& path) override;
  void commit(const std::vector<HaOp>& ops) override;
  void require_leader() override;
  void remove_tree(const std::string& path) override;
  std::string describe() const override;

 private:
  ZooKeeperHaServices& services_;
};

class ZooKeeperHaServices final : public HaServices {
 public:
  explicit ZooKeeperHaServices(const HaConfig& config)
      : config_(config),
        base_(config.cluster_path()),
        latch_dir_(base_ + "/leader/latch"),
        info_path_(base_ + "/leader/coordinator/connection_info"),
        election_(*this),
        backend_(std::make_shared<ZkBackend>(*this)),
        // Flink's HA storage path: <storageDir>/<cluster-id>.
        files_(std::make_shared<BlobFiles>(std::filesystem::path(config.storage_dir) / config.cluster_id.substr(1),
                                           config.max_inline_bytes)),
        job_graphs_(backend_, files_),
        checkpoints_(backend_),
        catalog_(backend_, files_) {
    session_ = connect();
    try {
      session_->ensure_path(latch_dir_);
      session_->ensure_path(base_ + "/leader/coordinator");
    } catch (...) {
      session_.reset();  // while the queue its watcher posts to still exists
      throw;
    }
    thread_ = std::thread([this] { event_loop(); });
    post([this] { refresh_leader(); });
  }

  ~ZooKeeperHaServices() override {
    election_.stop();
    post([this] { quit_ = true; });
    thread_.join();
    std::lock_guard lock(session_mutex_);
    session_.reset();  // closes: its ephemeral nodes go
  }

  LeaderElection& leader_election() override { return election_; }
  LeaderRetriever& leader_retriever() override { return retriever_; }
  JobGraphStore& job_graphs() override { return job_graphs_; }
  CheckpointPointerStore& checkpoints() override { return checkpoints_; }
  CatalogStore& catalog() override { return catalog_; }

  void cleanup_all_data() override {
    for (const char* top : {"execution-plans", "jobs", "catalog"}) backend_->remove_tree(top);
    files_->remove_all();
  }

  // ---- used by ZkElection

  void run_election(std::string address, LeaderElection::OnGranted granted, LeaderElection::OnRevoked revoked) {
    std::promise<void> started;
    auto done = started.get_future();
    post([&, address = std::move(address), granted = std::move(granted), revoked = std::move(revoked)]() mutable {
      if (contending_ || stopped_) {
        started.set_exception(std::make_exception_ptr(ClinkError("leader election: run() called twice")));
        return;
      }
      address_ = std::move(address);
      latch_prefix_ = "_c_" + random_session_id() + "-latch-";
      on_granted_ = std::move(granted);
      on_revoked_ = std::move(revoked);
      contending_ = true;
      started.set_value();
      check_leadership();
    });
    done.get();
  }

  void stop_election() {
    if (std::this_thread::get_id() == thread_.get_id()) throw ClinkError("leader election: stop() from a callback");
    std::promise<void> stopped;
    auto done = stopped.get_future();
    post([&] {
      if (contending_) {
        contending_ = false;
        resign();
      }
      stopped_ = true;
      stopped.set_value();
    });
    done.get();
  }

  bool leading() const {
    std::lock_guard lock(fence_mutex_);
    return !fence_.empty();
  }
  std::optional<std::string> grant() const {
    std::lock_guard lock(fence_mutex_);
    if (fence_.empty()) return std::nullopt;
    return grant_id_;
  }

  // ---- used by ZkBackend

  std::string node_path(const std::string& relative) const { return base_ + "/" + relative; }
  std::string describe() const { return "ZooKeeper " + config_.quorum + " " + base_; }
  std::string fence() const {
    std::lock_guard lock(fence_mutex_);
    return fence_;
  }

  // The live session; waits (up to the connection timeout) while an expired one is
  // being replaced.
  std::shared_ptr<ZkSession> session() {
    std::unique_lock lock(session_mutex_);
    session_changed_.wait_for(lock, config_.connection_timeout, [&] { return session_ && !session_->expired(); });
    if (!session_) throw ClinkError(describe() + ": no ZooKeeper session");
    return session_;
  }

 private:
  std::shared_ptr<ZkSession> connect() {
    std::uint64_t gen = ++generation_;
    return std::make_shared<ZkSession>(
        config_.quorum, config_.session_timeout, config_.connection_timeout,
        [this, gen](ZkEventType type, ZkState state, const std::string& path) {
          post([this, gen, type, state, path] { on_event(gen, type, state, path); });
        });
  }

  void post(std::function<void()> task) {
    {
      std::lock_guard lock(queue_mutex_);
      queue_.push_back(std::move(task));
    }
    queue_cv_.notify_one();
  }

  void event_loop() {
    while (!quit_) {
      std::function<void()> task;
      {
        std::unique_lock lock(queue_mutex_);
        auto ready = [&] { return !queue_.empty(); };
        if (reconnect_at_) queue_cv_.wait_until(lock, *reconnect_at_, ready);
        else queue_cv_.wait(lock, ready);
        if (queue_.empty()) {
          lock.unlock();
          replace_session();  // a retry is due
          continue;
        }
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      try {
        task();
      } catch (const std::exception&) {
        // A failed ZooKeeper call: the session event that follows (reconnect, expiry)
        // triggers the next attempt.
      }
    }
  }

  void on_event(std::uint64_t gen, ZkEventType type, ZkState state, const std::string& path) {
    if (gen != generation_ || quit_) return;  // an old session's event
    if (type == ZkEventType::Session) {
      if (state == ZkState::Connected) {
        check_leadership();
        refresh_leader();
      } else if (state == ZkState::Connecting) {
        if (!config_.tolerate_suspended_connections) revoke();
      } else if (state == ZkState::Expired) {
        revoke();
        my_latch_.clear();
        watched_.clear();
        replace_session();
      }
      return;
    }
    if (path == info_path_) refresh_leader();
    if (!watched_.empty() && path == watched_) check_leadership();
  }

  // A new session after the old one expired. When ZooKeeper does not answer, the event
  // loop tries again later (reconnect_at_), so stop() and the destructor are not stuck
  // behind an endless retry.
  void replace_session() {
    reconnect_at_.reset();
    if (quit_) return;
    std::shared_ptr<ZkSession> old;
    try {
      auto fresh = connect();
      fresh->ensure_path(latch_dir_);
      fresh->ensure_path(base_ + "/leader/coordinator");
      {
        std::lock_guard lock(session_mutex_);
        old = std::exchange(session_, std::move(fresh));
      }
      reconnect_failures_ = 0;
    } catch (const std::exception&) {
      ++reconnect_failures_;
      reconnect_at_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::min(2000, 100 * reconnect_failures_));
      return;
    }
    session_changed_.notify_all();
    old.reset();  // closes the expired handle, outside the lock
    check_leadership();
    refresh_leader();
  }

  std::shared_ptr<ZkSession> current() {
    std::lock_guard lock(session_mutex_);
    return session_;
  }

  // Creates this contender's latch node if it has none, then leads or watches the node
  // just below its own.
  void check_leadership() {
    if (!contending_) return;
    auto s = current();
    for (int round = 0; round < 100; ++round) {
      std::vector<std::string> names;
      int rc = s->children(latch_dir_, false, &names);
      if (rc != 0) throw ClinkError(s->error("list", latch_dir_, rc));
      if (my_latch_.empty()) {
        // A node of ours whose creation answer was lost (connection loss) would block
        // everyone behind it until our session ends: find it by our prefix first
        // (Curator's protected mode, which Flink's latch uses).
        auto ours = std::find_if(names.begin(), names.end(), [&](auto& n) { return n.starts_with(latch_prefix_); });
        if (ours != names.end()) {
          my_latch_ = latch_dir_ + "/" + *ours;
        } else {
          std::string created;
          rc = s->create(latch_dir_ + "/" + latch_prefix_, address_, ZkMode::EphemeralSequential, &created);
          if (rc != 0) throw ClinkError(s->error("create a latch node in", latch_dir_, rc));
          my_latch_ = created;
          continue;  // list again, with our node
        }
      }
      // Lowest sequence number first (the names' last 10 digits).
      std::sort(names.begin(), names.end(), [](const std::string& x, const std::string& y) {
        return x.substr(x.size() - std::min<size_t>(10, x.size())) < y.substr(y.size() - std::min<size_t>(10, y.size()));
      });
      std::string mine = my_latch_.substr(latch_dir_.size() + 1);
      auto it = std::find(names.begin(), names.end(), mine);
      if (it == names.end()) {  // deleted under us (cleanup): contend again
        revoke();
        my_latch_.clear();
        continue;
      }
      if (it == names.begin()) {
        become_leader(*s);
        return;
      }
      revoke();  // not the lowest (e.g. after a reconnect)
      watched_ = latch_dir_ + "/" + *(it - 1);
      rc = s->exists(watched_, true);
      if (ZkSession::is_no_node(rc)) continue;  // gone between the listing and the watch
      if (rc != 0) throw ClinkError(s->error("watch", watched_, rc));
      return;
    }
  }

  void become_leader(ZkSession& s) {
    if (leading()) return;
    s.ensure_path(base_ + "/leader/coordinator");
    std::string grant_id = random_session_id();
    nlohmann::json info = {{"address", address_}, {"session_id", grant_id}};
    std::vector<ZkOp> ops{{ZkOp::Kind::Check, my_latch_, "", -1}};
    ZkStat stat;
    if (s.exists(info_path_, false, &stat) == 0) ops.push_back({ZkOp::Kind::Delete, info_path_, "", stat.version});
    ops.push_back({ZkOp::Kind::Create, info_path_, info.dump(), -1, ZkMode::Ephemeral});
    int failed = -1;
    int rc = s.multi(ops, &failed);
    if (rc != 0) throw ClinkError(s.error("publish the leader at", info_path_, rc));
    {
      std::lock_guard lock(fence_mutex_);
      fence_ = my_latch_;
      grant_id_ = grant_id;
    }
    // The leader watches its own latch node: deleted from outside (an operator, a
    // cleanup), it means this grant is over even though the session lives on.
    watched_ = my_latch_;
    s.exists(my_latch_, true);
    if (on_granted_) on_granted_(grant_id);
  }

  // Leadership ends here (the latch node may stay: reconnecting re-checks it).
  void revoke() {
    {
      std::lock_guard lock(fence_mutex_);
      if (fence_.empty()) return;
      fence_.clear();
      grant_id_.clear();
    }
    if (on_revoked_) on_revoked_();
  }

  void resign() {
    auto s = current();
    if (leading() && s) {
      int failed = -1;
      s->multi({{ZkOp::Kind::Check, my_latch_, "", -1}, {ZkOp::Kind::Delete, info_path_, "", -1}}, &failed);
    }
    if (!my_latch_.empty() && s) s->remove(my_latch_);
    my_latch_.clear();
    watched_.clear();
    revoke();
  }

  void refresh_leader() {
    auto s = current();
    std::string data;
    int rc = s->exists(info_path_, true);
    if (rc == 0) rc = s->get(info_path_, true, &data);
    if (ZkSession::is_no_node(rc)) {
      retriever_.publish(std::nullopt);
      return;
    }
    if (rc != 0) throw ClinkError(s->error("read", info_path_, rc));
    auto j = nlohmann::json::parse(data, nullptr, false);
    if (j.is_discarded() || !j.contains("address") || !j.contains("session_id")) return;
    retriever_.publish(LeaderInfo{j["address"].get<std::string>(), j["session_id"].get<std::string>()});
  }

  HaConfig config_;
  std::string base_, latch_dir_, info_path_;

  std::mutex session_mutex_;
  std::condition_variable session_changed_;
  std::shared_ptr<ZkSession> session_;
  std::atomic<std::uint64_t> generation_{0};

  std::mutex queue_mutex_;
  std::condition_variable queue_cv_;
  std::deque<std::function<void()>> queue_;
  std::thread thread_;
  bool quit_ = false;  // event thread only
  std::optional<std::chrono::steady_clock::time_point> reconnect_at_;  // event thread only
  int reconnect_failures_ = 0;

  // Election state: event thread only.
  bool contending_ = false, stopped_ = false;
  std::string address_, latch_prefix_, my_latch_, watched_;
  LeaderElection::OnGranted on_granted_;
  LeaderElection::OnRevoked on_revoked_;
  // The latch node of the current grant (empty: not leading) and the grant's id; read by
  // writers on any thread.
  mutable std::mutex fence_mutex_;
  std::string fence_, grant_id_;

  ZkRetriever retriever_;
  ZkElection election_;
  std::shared_ptr<ZkBackend> backend_;
  std::shared_ptr<BlobFiles> files_;
  JobGraphStore job_graphs_;
  CheckpointPointerStore checkpoints_;
  CatalogStore catalog_;
};

void ZkElection::run(std::string address, OnGranted on_granted, OnRevoked on_revoked) {
  services_.run_election(std::move(address), std::move(on_granted), std::move(on_revoked));
}
void ZkElection::stop() { services_.stop_election(); }
bool ZkElection::has_leadership() const { return services_.leading(); }
std::optional<std::string> ZkElection::leader_session() const { return services_.grant(); }

std::optional<HaNode> ZkBackend::get(const std::string& path) {
  auto s = services_.session();
  std::string data;
  ZkStat stat;
  int rc = s->get(services_.node_path(path), false, &data, &stat);
  if (ZkSession::is_no_node(rc)) return std::nullopt;
  if (rc != 0) throw ClinkError(s->error("read", services_.node_path(path), rc));
  return HaNode{std::move(data), stat.version};
}

std::vector<std::string> ZkBackend::children(const std::string& path) {
  auto s = services_.session();
  std::vector<std::string> names;
  int rc = s->children(services_.node_path(path), false, &names);
  if (ZkSession::is_no_node(rc)) return {};
  if (rc != 0) throw ClinkError(s->error("list", services_.node_path(path), rc));
  return names;
}

void ZkBackend::commit(const std::vector<HaOp>& ops) {
  std::string fence = services_.fence();
  if (fence.empty()) throw NotLeaderError(describe() + ": this coordinator is not the leader; write refused");
  auto s = services_.session();
  std::vector<ZkOp> zops{{ZkOp::Kind::Check, fence, "", -1}};
  for (auto& op : ops) {
    auto path = services_.node_path(op.path);
    if (op.kind == HaOp::Kind::Create) s->ensure_path(path.substr(0, path.rfind('/')));
    auto kind = op.kind == HaOp::Kind::Create ? ZkOp::Kind::Create
                : op.kind == HaOp::Kind::Set  ? ZkOp::Kind::Set
                                              : ZkOp::Kind::Delete;
    zops.push_back({kind, path, op.data, op.version});
  }
  int failed = -1;
  int rc = s->multi(zops, &failed);
  if (rc == 0) return;
  if (failed == 0 || ZkSession::is_session_lost(rc))
    throw NotLeaderError(describe() + ": leadership lost (latch node " + fence + " is gone); write refused");
  std::string where = failed > 0 ? zops[static_cast<std::size_t>(failed)].path : describe();
  if (ZkSession::is_bad_version(rc)) throw HaVersionConflict(s->error("write", where, rc));
  throw ClinkError(s->error("write", where, rc));
}

void ZkBackend::require_leader() {
  if (!services_.leading()) throw NotLeaderError(describe() + ": this coordinator is not the leader; write refused");
}

void ZkBackend::remove_tree(const std::string& path) { services_.session()->remove_tree(services_.node_path(path)); }

std::string ZkBackend::describe() const { return services_.describe(); }

}  // namespace

std::unique_ptr<HaServices> make_zookeeper_ha_services(const HaConfig& config) {
  return std::make_unique<ZooKeeperHaServices>(config);
}

}  // namespace clink::cluster
