#include "clink/runtime/executor.hpp"

#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "clink/core/error.hpp"
#include "task.hpp"

namespace clink {

const char* job_status_name(JobStatus s) {
  switch (s) {
    case JobStatus::kCreated: return "CREATED";
    case JobStatus::kRunning: return "RUNNING";
    case JobStatus::kFinished: return "FINISHED";
    case JobStatus::kFailed: return "FAILED";
    case JobStatus::kCanceled: return "CANCELED";
  }
  return "?";
}

namespace {

// Chains: each node joins its upstream's chain when their edge is chained.
std::vector<std::vector<std::string>> compute_chains(const JobGraph& g) {
  std::vector<std::vector<std::string>> chains;
  std::map<std::string, std::size_t> chain_of;
  for (const auto& id : g.topological_order()) {
    auto ins = g.inputs_of(id);
    if (ins.size() == 1 && g.is_chained(*ins[0])) {
      std::size_t c = chain_of.at(ins[0]->from);
      chains[c].push_back(id);
      chain_of[id] = c;
    } else {
      chain_of[id] = chains.size();
      chains.push_back({id});
    }
  }
  return chains;
}

}  // namespace

std::vector<TaskPlan> plan_tasks(const JobGraph& graph) {
  std::vector<TaskPlan> plans;
  for (auto& chain : compute_chains(graph)) {
    TaskPlan p;
    p.parallelism = graph.parallelism_of(graph.node(chain.front()));
    p.chain = std::move(chain);
    plans.push_back(std::move(p));
  }
  return plans;
}

class JobRun final : public detail::JobControl {
 public:
  JobRun(const JobGraph& graph, ExecutionOptions options) : graph_(graph), options_(options) {}

  ~JobRun() override {
    cancel();
    join();
  }

  void build();
  void start() {
    status_ = JobStatus::kRunning;
    running_ = tasks_.size();
    for (auto& task : tasks_) {
      threads_.emplace_back([this, t = task.get()] {
        t->run();
        std::lock_guard lock(mu_);
        if (--running_ == 0) {
          if (status_ == JobStatus::kRunning) status_ = JobStatus::kFinished;
          done_.notify_all();
        }
      });
    }
  }

  bool cancelled() const override { return cancelled_.load(std::memory_order_relaxed); }

  void fail(const std::string& message) override {
    {
      std::lock_guard lock(mu_);
      if (status_ == JobStatus::kRunning || status_ == JobStatus::kCreated) {
        status_ = JobStatus::kFailed;
        error_ = message;
      }
    }
    stop_all();
  }

  void cancel() {
    {
      std::lock_guard lock(mu_);
      if (status_ == JobStatus::kRunning || status_ == JobStatus::kCreated) status_ = JobStatus::kCanceled;
    }
    stop_all();
  }

  bool wait_for(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return done_.wait_for(lock, timeout, [&] { return running_ == 0; });
  }
  void wait() {
    {
      std::unique_lock lock(mu_);
      done_.wait(lock, [&] { return running_ == 0; });
    }
    join();
  }

  JobStatus status() const {
    std::lock_guard lock(mu_);
    return status_;
  }
  std::string error() const {
    std::lock_guard lock(mu_);
    return error_;
  }
  const MetricRegistry& metrics() const { return metrics_; }

 private:
  void stop_all() {
    cancelled_.store(true);
    for (auto& t : tasks_)
      if (t->gate) t->gate->cancel();
  }
  void join() {
    std::lock_guard lock(join_mu_);
    for (auto& th : threads_)
      if (th.joinable()) th.join();
  }

  JobGraph graph_;
  ExecutionOptions options_;
  MetricRegistry metrics_;
  std::vector<std::unique_ptr<detail::Task>> tasks_;
  std::vector<std::thread> threads_;
  mutable std::mutex mu_;
  std::mutex join_mu_;
  std::condition_variable done_;
  std::size_t running_ = 0;
  JobStatus status_ = JobStatus::kCreated;
  std::string error_;
  std::atomic<bool> cancelled_{false};
};

void JobRun::build() {
  graph_.validate();
  struct Placement {
    std::size_t chain;
    std::size_t position;
  };
  auto chains = compute_chains(graph_);
  std::map<std::string, Placement> where;
  for (std::size_t c = 0; c < chains.size(); ++c)
    for (std::size_t i = 0; i < chains[c].size(); ++i) where[chains[c][i]] = {c, i};

  // tasks_by_chain[c][subtask]
  std::vector<std::vector<detail::Task*>> tasks_by_chain(chains.size());
  // Channel index of (edge, upstream subtask) at the target's gates.
  std::map<std::pair<const JobEdge*, int>, std::size_t> channel_of;

  for (std::size_t c = 0; c < chains.size(); ++c) {
    const JobNode& head = graph_.node(chains[c].front());
    int p = graph_.parallelism_of(head);
    std::vector<int> channel_inputs;
    for (const JobEdge* e : graph_.inputs_of(head.id)) {
      int up = graph_.parallelism_of(graph_.node(e->from));
      for (int u = 0; u < up; ++u) {
        channel_of[{e, u}] = channel_inputs.size();
        channel_inputs.push_back(e->to_input);
      }
    }
    for (int s = 0; s < p; ++s) {
      auto task = std::make_unique<detail::Task>(head.name + " (" + std::to_string(s + 1) + "/" + std::to_string(p) + ")",
                                                 *this, *options_.clock);
      if (head.num_inputs > 0) task->gate = std::make_unique<InputGate>(channel_inputs, graph_.config.channel_capacity);
      for (const auto& id : chains[c]) {
        const JobNode& n = graph_.node(id);
        auto host = std::make_unique<detail::OperatorHost>();
        host->node = &n;
        host->display_name = n.name + " (" + std::to_string(s + 1) + "/" + std::to_string(p) + ")";
        host->metrics = metrics_.operator_metrics(n.id, s, task->time_metrics());
        host->output.metrics = host->metrics.get();
        host->ctx = std::make_unique<RuntimeContext>(n.id, n.name, s, p, graph_.max_parallelism_of(n), &host->output,
                                                     host->metrics, *options_.clock);
        host->op = n.build();
        if (!host->op) throw ClinkError("operator '" + n.id + "': builder returned nothing");
        if (host->op->num_inputs() != n.num_inputs)
          throw ClinkError("operator '" + n.id + "' declares " + std::to_string(n.num_inputs) +
                           " inputs but its implementation has " + std::to_string(host->op->num_inputs()));
        task->chain.push_back(std::move(host));
      }
      tasks_by_chain[c].push_back(task.get());
      tasks_.push_back(std::move(task));
    }
  }

  // Wire every edge: chained edges call the next operator, others go through channels.
  for (const JobEdge& e : graph_.edges) {
    Placement from = where.at(e.from);
    Placement to = where.at(e.to);
    int up = graph_.parallelism_of(graph_.node(e.from));
    int down = graph_.parallelism_of(graph_.node(e.to));
    int max_par = graph_.max_parallelism_of(graph_.node(e.to));
    for (int s = 0; s < up; ++s) {
      detail::OperatorHost& src = *tasks_by_chain[from.chain][static_cast<std::size_t>(s)]->chain[from.position];
      std::unique_ptr<detail::Target> target;
      if (from.chain == to.chain) {
        target = std::make_unique<detail::ChainedTarget>(
            tasks_by_chain[to.chain][static_cast<std::size_t>(s)]->chain[to.position].get());
      } else {
        std::unique_ptr<Partitioner> part;
        switch (e.partitioning) {
          case Partitioning::kForward:
            // Flink: forward needs equal parallelism; otherwise records are rebalanced.
            part = up == down ? make_forward_partitioner(s, down) : make_rebalance_partitioner(s, down);
            break;
          case Partitioning::kRebalance: part = make_rebalance_partitioner(s, down); break;
          case Partitioning::kBroadcast: part = make_broadcast_partitioner(down); break;
          case Partitioning::kHash: part = e.hash_partitioner(s, down, max_par); break;
        }
        std::vector<InputGate*> gates;
        std::vector<std::size_t> channels;
        for (int d = 0; d < down; ++d) {
          gates.push_back(tasks_by_chain[to.chain][static_cast<std::size_t>(d)]->gate.get());
          channels.push_back(channel_of.at({&e, s}));
        }
        auto* task = tasks_by_chain[from.chain][static_cast<std::size_t>(s)];
        target = std::make_unique<detail::NetworkTarget>(std::move(part), std::move(gates), std::move(channels),
                                                         task->time_metrics().get());
      }
      if (e.side_output.empty()) src.output.main.push_back(std::move(target));
      else src.output.sides[e.side_output].push_back(std::move(target));
    }
  }
}

JobHandle::JobHandle(std::shared_ptr<JobRun> run) : run_(std::move(run)) {}

void JobHandle::wait() {
  run_->wait();
  if (run_->status() == JobStatus::kFailed) throw JobFailedError(run_->error());
}
bool JobHandle::wait_for(std::chrono::milliseconds timeout) { return run_->wait_for(timeout); }
void JobHandle::cancel() { run_->cancel(); }
JobStatus JobHandle::status() const { return run_->status(); }
std::string JobHandle::error() const { return run_->error(); }
const MetricRegistry& JobHandle::metrics() const { return run_->metrics(); }

JobHandle execute_async(const JobGraph& graph, ExecutionOptions options) {
  auto run = std::make_shared<JobRun>(graph, options);
  run->build();
  run->start();
  return JobHandle(std::move(run));
}

void execute(const JobGraph& graph, ExecutionOptions options) { execute_async(graph, options).wait(); }

}  // namespace clink
