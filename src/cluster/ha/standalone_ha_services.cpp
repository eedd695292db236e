// high-availability.type: NONE. One coordinator, leader as soon as it runs its election;
// the retriever reports this process's leader or the configured address. The stores are
// the same classes as in HA mode, over memory or a file in storageDir.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "ha_implementations.hpp"
#include "ha_state_backend.hpp"

namespace clink::cluster {

namespace {

class StandaloneRetriever final : public LeaderRetriever {
 public:
  using LeaderRetriever::publish;
};

class StandaloneElection final : public LeaderElection {
 public:
  explicit StandaloneElection(StandaloneRetriever& retriever, bool publish) : retriever_(retriever), publish_(publish) {}
  ~StandaloneElection() override { stop(); }

  void run(std::string address, OnGranted on_granted, OnRevoked on_revoked) override {
    std::lock_guard lock(mutex_);
    if (thread_.joinable()) throw ClinkError("leader election: run() called twice");
    // The callbacks run on a thread of their own, as with ZooKeeper: a caller's
    // on_granted may take locks the caller of run() holds.
    thread_ = std::thread([this, address = std::move(address), on_granted = std::move(on_granted),
                           on_revoked = std::move(on_revoked)] {
      const std::string session = "standalone";
      leading_ = true;
      if (publish_) retriever_.publish(LeaderInfo{address, session});
      if (on_granted) on_granted(session);
      std::unique_lock l(mutex_);
      stop_cv_.wait(l, [&] { return stopping_; });
      l.unlock();
      leading_ = false;
      if (publish_) retriever_.publish(std::nullopt);
      if (on_revoked) on_revoked();
    });
  }

  void stop() override {
    std::thread t;
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      t = std::move(thread_);
    }
    stop_cv_.notify_all();
    if (t.joinable()) t.join();
  }

  bool has_leadership() const override { return leading_; }
  std::optional<std::string> leader_session() const override {
    return leading_ ? std::optional<std::string>("standalone") : std::nullopt;
  }

 private:
  StandaloneRetriever& retriever_;
  bool publish_;
  std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::atomic<bool> leading_{false};
  std::thread thread_;
};

class StandaloneHaServices final : public HaServices {
 public:
  explicit StandaloneHaServices(const HaConfig& config)
      : election_(retriever_, config.standalone_leader_address.empty()),
        files_(std::make_shared<BlobFiles>(
            config.storage_dir.empty() ? std::filesystem::path() : std::filesystem::path(config.storage_dir) / "blobs",
            config.max_inline_bytes)),
        backend_(config.storage_dir.empty()
                     ? make_memory_ha_backend([this] { return election_.has_leadership(); })
                     : make_directory_ha_backend(config.storage_dir, [this] { return election_.has_leadership(); })),
        job_graphs_(backend_, files_),
        checkpoints_(backend_),
        catalog_(backend_, files_) {
    if (!config.standalone_leader_address.empty())
      retriever_.publish(LeaderInfo{config.standalone_leader_address, "standalone"});
  }

  // The election stops first: its on_revoked may still use the stores.
  ~StandaloneHaServices() override { election_.stop(); }

  LeaderElection& leader_election() override { return election_; }
  LeaderRetriever& leader_retriever() override { return retriever_; }
  JobGraphStore& job_graphs() override { return job_graphs_; }
  CheckpointPointerStore& checkpoints() override { return checkpoints_; }
  CatalogStore& catalog() override { return catalog_; }

  void cleanup_all_data() override {
    for (const char* top : {"execution-plans", "jobs", "catalog"}) backend_->remove_tree(top);
    files_->remove_all();
  }

 private:
  StandaloneRetriever retriever_;
  StandaloneElection election_;
  std::shared_ptr<BlobFiles> files_;
  std::shared_ptr<HaStateBackend> backend_;
  JobGraphStore job_graphs_;
  CheckpointPointerStore checkpoints_;
  CatalogStore catalog_;
};

}  // namespace

std::unique_ptr<HaServices> make_standalone_ha_services(const HaConfig& config) {
  return std::make_unique<StandaloneHaServices>(config);
}

}  // namespace clink::cluster
