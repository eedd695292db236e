#include "clink/cluster/worker/worker.hpp"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "clink/cluster/deploy_options.hpp"
#include "clink/core/error.hpp"
#include "clink/core/log.hpp"
#include "clink/runtime/job_graph_spec.hpp"
#include "clink/runtime/task_group.hpp"
#include "../control/control_client.hpp"
#include "clink/cluster/shuffle/remote_channel_writer.hpp"
#include "clink/cluster/shuffle/shuffle_server.hpp"

namespace clink::cluster {

namespace {

using proto::CoordinatorMessage;
using proto::TaskEvent;
using proto::WorkerMessage;

}  // namespace

// One attempt of one job on this worker: its share of the tasks, and the events they
// report, sent to the coordinator.
class AttemptHost final : public TaskEvents {
 public:
  // `done` is called (on a task's thread) once every local task exited.
  AttemptHost(const proto::Deploy& d, const OperatorRegistry& registry, ControlClient& control, ShuffleServer& shuffle,
              std::function<void()> done)
      : job_id_(d.job_id()), attempt_(d.attempt()), control_(control), shuffle_(shuffle), done_(std::move(done)) {
    graph_ = from_spec(nlohmann::json::parse(d.spec_json()), registry);
    DeployOptions o = parse_deploy_options(d.options_json());
    options_.checkpoints = o.checkpoints;
    start_ = o.start;
    for (const auto& loc : d.tasks()) locations_.push_back({loc.host(), loc.data_port()});
    for (int t : d.local_tasks()) local_.push_back(static_cast<std::size_t>(t));
    running_ = local_.size();
  }

  ~AttemptHost() override {
    // An attempt whose tasks all exited closes its channels gracefully (a cancelled one
    // resets them: the receivers see an aborted channel, not an end).
    if (running_ > 0) cancel();
    if (starter_.joinable()) starter_.join();
    group_.reset();
    shuffle_.unregister_attempt(job_id_, attempt_);
  }

  const std::string& job_id() const { return job_id_; }
  std::int64_t attempt() const { return attempt_; }
  // [[operator id, subtask, records in, records out, batches in, batches out, late records
  // dropped, dead letters, busy ns, backpressured ns, idle ns, input watermark, output
  // watermark, bytes in, bytes out, pending records, {dead-letter reason: count}, pending
  // bytes, records lag max], ...]
  nlohmann::json metrics() const {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& m : metrics_.snapshot()) {
      nlohmann::json reasons = nlohmann::json::object();
      for (const auto& [reason, n] : m.dead_letters_by_reason) reasons[reason] = n;
      rows.push_back({m.operator_id, m.subtask, m.records_in, m.records_out, m.batches_in, m.batches_out,
                      m.late_records_dropped, m.dead_letters, m.busy_ns, m.backpressured_ns, m.idle_ns,
                      m.input_watermark, m.output_watermark, m.bytes_in, m.bytes_out, m.pending_records, reasons,
                      m.pending_bytes, m.records_lag_max});
    }
    return rows;
  }

  // Builds the tasks and starts them, off the control plane's thread (opening state
  // backends and connecting channels takes a while).
  void start() {
    starter_ = std::thread([this] {
      log::ScopedContext in_job({job_id_});  // the tasks log as this job's
      log::info("deploying attempt {}: {} local task(s)", attempt_, local_.size());
      try {
        TaskGroup::Wiring wiring;
        wiring.local_tasks = local_;
        wiring.remote_writer = [this](std::size_t task, std::size_t channel) {
          const auto& [host, port] = locations_.at(task);
          return connect_channel_lazily(host, port, job_id_, attempt_, static_cast<int>(task), static_cast<std::uint32_t>(channel),
                                 [this] { return cancelled_.load(); });
        };
        wiring.exited = [this](std::size_t task) {
          const bool last = --running_ == 0;
          if (last) send_metrics();  // the final counters, before the coordinator hears the end
          send_event(task, TaskEvent::EXITED);
          if (last) done_();
        };
        auto group = std::make_unique<TaskGroup>(graph_, options_, start_, *this, metrics_, std::move(wiring));
        for (std::size_t t : local_)
          if (InputGate* gate = group->gate(t)) shuffle_.register_gate(job_id_, attempt_, static_cast<int>(t), gate);
        std::vector<CoordinatorMessage> early;
        {
          std::lock_guard lock(mu_);
          if (cancelled_) {
            for (std::size_t t : local_) send_event(t, TaskEvent::EXITED);
            return;
          }
          group_ = std::move(group);
          group_->start();
          early.swap(early_);
        }
        for (const auto& m : early) on_message(m);
      } catch (const std::exception& e) {
        log::error("deploying attempt {} failed: {}", attempt_, e.what());
        fail(kWholeJob, std::string("deploying on worker failed: ") + e.what());
        for (std::size_t t : local_) send_event(t, TaskEvent::EXITED);
        done_();
      }
    });
  }

  bool cancelled() const { return cancelled_.load(); }

  void cancel() {
    std::lock_guard lock(mu_);
    cancelled_ = true;
    if (group_) group_->cancel();
    dirs_cv_.notify_all();
  }

  void on_message(const CoordinatorMessage& m) {
    {
      std::lock_guard lock(mu_);
      const bool announcement = m.has_trigger_checkpoint() && m.trigger_checkpoint().task() < 0;
      // A trigger may come before the tasks are built (a region redeployed with a
      // checkpoint due at once): it applies once they run.
      if (!group_ && !announcement) {
        if (!cancelled_) early_.push_back(m);
        return;
      }
    }
    switch (m.kind_case()) {
      case CoordinatorMessage::kTriggerCheckpoint: {
        const auto& t = m.trigger_checkpoint();
        if (t.task() < 0) {  // announces where the checkpoint's files go
          std::lock_guard lock(mu_);
          dirs_[t.checkpoint_id()] = t.directory();
          dirs_cv_.notify_all();
          return;
        }
        with_group([&](TaskGroup& g) {
          const auto task = static_cast<std::size_t>(t.task());
          const CheckpointBarrier barrier{t.checkpoint_id(), t.timestamp_ms(), t.is_savepoint(), t.stops_sources()};
          if (t.drains()) g.trigger_drained_checkpoint(task, barrier);
          else g.trigger_checkpoint(task, barrier);
        });
        return;
      }
      case CoordinatorMessage::kNotifyComplete: {
        const auto& n = m.notify_complete();
        with_group([&](TaskGroup& g) { g.notify_checkpoint_complete(static_cast<std::size_t>(n.task()), n.checkpoint_id()); });
        return;
      }
      case CoordinatorMessage::kResumeSources:
        with_group([&](TaskGroup& g) {
          for (std::size_t t : local_)
            if (g.layout().tasks[t].source) g.resume_after_failed_stop(t);
        });
        return;
      default: return;
    }
  }

  // ---- TaskEvents: to the coordinator ----
  // The failed task; a failure of no one task (kWholeJob) goes as task -1 (the int it wraps to).
  void fail(std::size_t task, const std::string& message) override { send_event(task, TaskEvent::FAILED, 0, message); }
  void acknowledge_checkpoint(std::size_t task, std::int64_t id, TaskSnapshot snapshot,
                              const CheckpointTaskTimes& times) override {
    nlohmann::json states = nlohmann::json::array();
    for (const auto& [uid, st] : snapshot) states.push_back({uid, to_json(st)});
    WorkerMessage m;
    auto* ack = m.mutable_checkpoint_ack();
    ack->set_job_id(job_id_);
    ack->set_attempt(attempt_);
    ack->set_task(static_cast<int>(task));
    ack->set_checkpoint_id(id);
    ack->set_snapshot_json(states.dump());
    ack->set_alignment_ns(times.alignment_ns);
    ack->set_sync_ms(times.sync_ms);
    ack->set_async_ms(times.async_ms);
    control_.send(m);
  }
  void task_ended(std::size_t task) override { send_event(task, TaskEvent::ENDED); }
  void task_finished(std::size_t task) override { send_event(task, TaskEvent::FINISHED); }
  void checkpoint_committed(std::size_t task, std::int64_t id) override { send_event(task, TaskEvent::COMMITTED, id); }
  // The coordinator announces a checkpoint's directory before its barriers go out; a
  // barrier arriving over the data plane may still overtake the announcement.
  std::filesystem::path checkpoint_directory(std::int64_t id) const override {
    std::unique_lock lock(mu_);
    dirs_cv_.wait_for(lock, std::chrono::seconds(10), [&] { return dirs_.count(id) > 0 || cancelled_; });
    auto it = dirs_.find(id);
    if (it != dirs_.end()) return it->second;
    return options_.checkpoints.directory / ("chk-" + std::to_string(id));
  }
  bool checkpoint_pending(std::int64_t) const override { return true; }

 private:
  template <class Fn>
  void with_group(Fn&& fn) {
    std::lock_guard lock(mu_);
    if (group_) fn(*group_);
  }

  void send_metrics() {
    WorkerMessage m;
    nlohmann::json jobs = nlohmann::json::object();
    jobs[job_id_] = metrics();
    m.mutable_heartbeat()->set_metrics_json(jobs.dump());
    control_.send(m);
  }

  void send_event(std::size_t task, TaskEvent::Kind kind, std::int64_t checkpoint_id = 0, const std::string& message = {}) {
    WorkerMessage m;
    auto* e = m.mutable_task_event();
    e->set_job_id(job_id_);
    e->set_attempt(attempt_);
    e->set_task(static_cast<int>(task));
    e->set_kind(kind);
    e->set_checkpoint_id(checkpoint_id);
    e->set_message(message);
    control_.send(m);
  }

  std::string job_id_;
  std::int64_t attempt_;
  ControlClient& control_;
  ShuffleServer& shuffle_;
  JobGraph graph_;
  ExecutionOptions options_;
  AttemptStart start_;
  std::vector<std::pair<std::string, int>> locations_;  // by task: host, data port
  std::vector<std::size_t> local_;
  MetricRegistry metrics_;
  mutable std::mutex mu_;
  mutable std::condition_variable dirs_cv_;
  std::map<std::int64_t, std::filesystem::path> dirs_;
  std::atomic<bool> cancelled_{false};
  std::function<void()> done_;
  std::atomic<std::size_t> running_{0};  // local tasks that have not exited
  std::unique_ptr<TaskGroup> group_;
  std::vector<CoordinatorMessage> early_;  // commands that came before group_ (under mu_)
  std::thread starter_;
};

class Worker::Impl {
 public:
  Impl(WorkerConfig config, const OperatorRegistry& registry) : config_(std::move(config)), registry_(registry) {
    if (config_.worker_id.empty()) config_.worker_id = config_.host + ":" + std::to_string(::getpid());
    ShuffleServerOptions so;
    // A channel of an attempt being cancelled breaks as its sender leaves: no news.
    so.on_channel_failure = [this](const ChannelFailure& f) {
      {
        std::lock_guard lock(mu_);
        auto it = jobs_.find({f.job_id, f.attempt});
        if (it == jobs_.end() || it->second->cancelled()) return;
      }
      log::ScopedContext in_job({f.job_id});
      log::warn("worker {}: {}", config_.worker_id, f.message);
    };
    shuffle_ = std::make_unique<ShuffleServer>(config_.host, config_.data_port, std::move(so));
    proto::Register reg;
    reg.set_worker_id(config_.worker_id);
    reg.set_host(config_.host);
    reg.set_data_port(shuffle_->port());
    reg.set_slots(config_.slots);
    reg.set_cpu_cores(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    reg.set_physical_memory(static_cast<std::int64_t>(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGE_SIZE));
    ControlClientOptions options;
    options.resolver = config_.coordinator;
    ControlClientCallbacks callbacks;
    callbacks.on_message = [this](const CoordinatorMessage& m) { on_message(m); };
    callbacks.on_connected = [this](const std::string& target, const auto&) {
      log::info("worker {} registered with the coordinator at {}", config_.worker_id, target);
    };
    callbacks.on_disconnected = [this](const std::string& reason) {
      log::warn("worker {} lost the coordinator: {}; cancelling its tasks", config_.worker_id, reason);
      cancel_all();
    };
    callbacks.metrics_json = [this] { return metrics_json(); };
    control_ = std::make_unique<ControlClient>(std::move(reg), std::move(options), std::move(callbacks));
    control_->connect(config_.coordinator());
  }

  ~Impl() {
    control_->stop();  // no more deploys
    std::map<AttemptKey, std::unique_ptr<AttemptHost>> jobs;
    {
      std::lock_guard lock(mu_);
      jobs.swap(jobs_);
    }
    jobs.clear();
    retire_all();
  }

  int data_port() const { return shuffle_->port(); }
  const std::string& id() const { return config_.worker_id; }

 private:
  // Each job's operator metrics, for the coordinator's REST API ({job id: rows}).
  std::string metrics_json() {
    nlohmann::json jobs = nlohmann::json::object();
    std::lock_guard lock(mu_);
    for (const auto& [key, host] : jobs_) {
      auto& rows = jobs[key.first];
      if (rows.is_null()) rows = nlohmann::json::array();
      for (auto& row : host->metrics()) rows.push_back(std::move(row));
    }
    return jobs.dump();
  }

  void on_message(const CoordinatorMessage& m) {
    switch (m.kind_case()) {
      case CoordinatorMessage::kDeploy: {
        const auto& d = m.deploy();
        std::unique_ptr<AttemptHost> host;
        try {
          host = std::make_unique<AttemptHost>(d, registry_, *control_, *shuffle_,
                                               [this, job = d.job_id(), attempt = d.attempt()] { retire(job, attempt, false); });
        } catch (const std::exception& e) {
          report_deploy_failure(d, e.what());
          return;
        }
        std::lock_guard lock(mu_);
        // Older attempts of the job stop, unless this one is a region's beside them.
        for (auto it = jobs_.lower_bound({d.job_id(), INT64_MIN}); it != jobs_.end() && it->first.first == d.job_id();)
          if (!d.beside_other_attempts() || it->first.second == d.attempt()) {
            retire(std::move(it->second));
            it = jobs_.erase(it);
          } else {
            ++it;
          }
        auto& slot = jobs_[{d.job_id(), d.attempt()}];
        slot = std::move(host);
        slot->start();
        return;
      }
      case CoordinatorMessage::kCancelAttempt:
        retire(m.cancel_attempt().job_id(), m.cancel_attempt().attempt(), true);
        return;
      default: break;
    }
    std::string job;
    std::int64_t attempt = -1;
    if (m.has_trigger_checkpoint()) job = m.trigger_checkpoint().job_id(), attempt = m.trigger_checkpoint().attempt();
    else if (m.has_notify_complete()) job = m.notify_complete().job_id(), attempt = m.notify_complete().attempt();
    else if (m.has_resume_sources()) job = m.resume_sources().job_id(), attempt = m.resume_sources().attempt();
    std::lock_guard lock(mu_);
    auto it = jobs_.find({job, attempt});
    if (it != jobs_.end()) it->second->on_message(m);
  }

  void report_deploy_failure(const proto::Deploy& d, const std::string& what) {
    for (int t : d.local_tasks()) {
      for (auto kind : {TaskEvent::FAILED, TaskEvent::EXITED}) {
        WorkerMessage m;
        auto* e = m.mutable_task_event();
        e->set_job_id(d.job_id());
        e->set_attempt(d.attempt());
        e->set_task(t);
        e->set_kind(kind);
        e->set_message("deploying on worker " + config_.worker_id + " failed: " + what);
        control_->send(m);
      }
    }
  }

  // The coordinator is gone: as Flink's TaskManager, cancel every task (the next
  // leader redeploys from the latest checkpoint).
  void cancel_all() {
    std::lock_guard lock(mu_);
    for (auto& [job, host] : jobs_) retire(std::move(host));
    jobs_.clear();
  }

  // The attempt is over here (cancelled, or every task of it exited): its tasks stop,
  // its connections close and its gates go.
  void retire(const std::string& job_id, std::int64_t attempt, bool cancel) {
    std::lock_guard lock(mu_);
    auto it = jobs_.find({job_id, attempt});
    if (it == jobs_.end()) return;
    retire(std::move(it->second), cancel);
    jobs_.erase(it);
  }

  // Cancels an attempt and destroys it on a thread of its own (its tasks may take a
  // moment to leave).
  void retire(std::unique_ptr<AttemptHost> host, bool cancel = true) {  // under mu_
    if (cancel) host->cancel();
    // Threads of attempts already destroyed are joined here, so a long-lived worker
    // keeps none.
    for (auto it = retiring_.begin(); it != retiring_.end();)
      if (it->done->load()) {
        it->thread.join();
        it = retiring_.erase(it);
      } else {
        ++it;
      }
    auto done = std::make_shared<std::atomic<bool>>(false);
    retiring_.push_back({std::thread([h = std::shared_ptr<AttemptHost>(std::move(host)), done]() mutable {
                           h.reset();
                           done->store(true);
                         }),
                         done});
  }
  void retire_all() {
    std::vector<Retiring> threads;
    {
      std::lock_guard lock(mu_);
      threads.swap(retiring_);
    }
    for (auto& t : threads) t.thread.join();
  }

  WorkerConfig config_;
  const OperatorRegistry& registry_;
  std::unique_ptr<ShuffleServer> shuffle_;
  std::unique_ptr<ControlClient> control_;
  std::mutex mu_;
  // The job's attempts running here: one, or with region failover one per region.
  using AttemptKey = std::pair<std::string, std::int64_t>;  // job id, attempt
  std::map<AttemptKey, std::unique_ptr<AttemptHost>> jobs_;
  struct Retiring {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<Retiring> retiring_;
};

Worker::Worker(WorkerConfig config, const OperatorRegistry& registry)
    : impl_(std::make_unique<Impl>(std::move(config), registry)) {}
Worker::~Worker() = default;
int Worker::data_port() const { return impl_->data_port(); }
const std::string& Worker::id() const { return impl_->id(); }

}  // namespace clink::cluster
