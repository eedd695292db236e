// Builds and runs the tasks of one attempt (all of them, or a worker's share): each
// chain at each subtask index becomes a task with its operators, state restored from
// the checkpoint, and every edge wired to the next operator of the chain, a gate of
// this process, or a channel to another process.
#include "clink/runtime/task_group.hpp"

#include <algorithm>
#include <atomic>
#include <map>

#include <unistd.h>

#include "clink/checkpoint/timer_snapshot.hpp"
#include "clink/core/error.hpp"
#include "clink/core/huge_page_allocator.hpp"
#include "clink/runtime/failure_injector.hpp"
#include "clink/state/keyed_state_backend.hpp"
#include "finished_operators.hpp"
#include "task.hpp"

namespace clink {

namespace {

// Flink's POINTWISE forward edge: subtask i feeds subtask i only (its data, watermarks,
// barriers and end of input), so forward pipelines are independent failover regions.
bool is_pointwise(const JobEdge& e, int up, int down) { return e.partitioning == Partitioning::kForward && up == down; }

}  // namespace

TaskLayout TaskLayout::of(const JobGraph& g) {
  TaskLayout layout;
  // Chains: each node joins its upstream's chain when their edge is chained.
  std::map<std::string, std::size_t> chain_of;
  for (const auto& id : g.topological_order()) {
    auto ins = g.inputs_of(id);
    if (ins.size() == 1 && g.is_chained(*ins[0])) {
      std::size_t c = chain_of.at(ins[0]->from);
      layout.chains[c].push_back(id);
      chain_of[id] = c;
    } else {
      chain_of[id] = layout.chains.size();
      layout.chains.push_back({id});
    }
  }
  for (std::size_t c = 0; c < layout.chains.size(); ++c) {
    const JobNode& head = g.node(layout.chains[c].front());
    int p = g.parallelism_of(head);
    for (int s = 0; s < p; ++s) layout.tasks.push_back({c, s, p, head.num_inputs == 0});
  }
  // Regions: union-find over the tasks, joined along every edge between chains.
  std::vector<std::size_t> first(layout.chains.size(), 0), parent(layout.tasks.size());
  for (std::size_t t = layout.tasks.size(); t-- > 0;) {
    parent[t] = t;
    if (layout.tasks[t].subtask == 0) first[layout.tasks[t].chain] = t;
  }
  auto root = [&](std::size_t t) {
    while (parent[t] != t) t = parent[t] = parent[parent[t]];
    return t;
  };
  auto join = [&](std::size_t a, std::size_t b) { parent[root(a)] = root(b); };
  for (const JobEdge& e : g.edges) {
    std::size_t from = chain_of.at(e.from), to = chain_of.at(e.to);
    if (from == to) continue;
    int up = g.parallelism_of(g.node(e.from)), down = g.parallelism_of(g.node(e.to));
    if (is_pointwise(e, up, down)) {
      for (int s = 0; s < up; ++s) join(first[from] + static_cast<std::size_t>(s), first[to] + static_cast<std::size_t>(s));
    } else {
      for (int s = 0; s < up; ++s) join(first[from] + static_cast<std::size_t>(s), first[to]);
      for (int d = 0; d < down; ++d) join(first[to] + static_cast<std::size_t>(d), first[to]);
    }
  }
  std::map<std::size_t, std::size_t> region_index;  // root -> region
  layout.region_of.resize(layout.tasks.size());
  for (std::size_t t = 0; t < layout.tasks.size(); ++t) {
    auto [it, added] = region_index.emplace(root(t), layout.regions.size());
    if (added) layout.regions.emplace_back();
    layout.regions[it->second].push_back(t);
    layout.region_of[t] = it->second;
  }
  return layout;
}

// The tasks' view of their job: the group's cancel flag, and the coordinator's events.
class TaskGroup::Control final : public detail::JobControl {
 public:
  explicit Control(TaskEvents& events) : events_(events) {}
  bool cancelled() const override { return cancelled_.load(std::memory_order_relaxed); }
  void cancel() { cancelled_.store(true); }
  void fail(std::size_t task, const std::string& message) override { events_.fail(task, message); }
  void acknowledge_checkpoint(std::size_t task, std::int64_t id, TaskSnapshot snapshot,
                              const CheckpointTaskTimes& times) override {
    events_.acknowledge_checkpoint(task, id, std::move(snapshot), times);
  }
  void discard_snapshot(std::int64_t id, TaskSnapshot partial) override { events_.discard_snapshot(id, std::move(partial)); }
  void task_ended(std::size_t task) override { events_.task_ended(task); }
  void task_finished(std::size_t task) override { events_.task_finished(task); }
  void checkpoint_committed(std::size_t task, std::int64_t id) override { events_.checkpoint_committed(task, id); }
  std::filesystem::path checkpoint_directory(std::int64_t id) const override { return events_.checkpoint_directory(id); }
  bool checkpoint_pending(std::int64_t id) const override { return events_.checkpoint_pending(id); }

 private:
  TaskEvents& events_;
  std::atomic<bool> cancelled_{false};
};

TaskGroup::TaskGroup(const JobGraph& graph, const ExecutionOptions& options, const AttemptStart& start,
                     TaskEvents& events, MetricRegistry& metrics, Wiring wiring)
    : layout_(TaskLayout::of(graph)),
      options_(options),
      control_(std::make_unique<Control>(events)),
      exited_(std::move(wiring.exited)) {
  const std::size_t n_tasks = layout_.tasks.size();
  std::vector<bool> local(n_tasks, wiring.local_tasks.empty());
  for (std::size_t t : wiring.local_tasks) local.at(t) = true;

  std::optional<CheckpointMetadata> meta;
  std::filesystem::path restore_dir;
  if (start.restore) {
    restore_dir = *start.restore;
    meta = CheckpointMetadata::read(restore_dir);
  }
  // Fully finished operators (every subtask finished) do not run again.
  const auto finished = detail::fully_finished_operators(graph, layout_.chains, meta ? &*meta : nullptr, restore_dir);
  struct Placement {
    std::size_t chain;
    std::size_t position;
  };
  std::map<std::string, Placement> where;
  for (std::size_t c = 0; c < layout_.chains.size(); ++c)
    for (std::size_t i = 0; i < layout_.chains[c].size(); ++i) where[layout_.chains[c][i]] = {c, i};
  std::vector<std::size_t> first_task(layout_.chains.size(), 0);  // task index of each chain's subtask 0
  for (std::size_t t = n_tasks; t-- > 0;)
    if (layout_.tasks[t].subtask == 0) first_task[layout_.tasks[t].chain] = t;
  // Channel index, at the downstream gate, of (input edge, upstream subtask). A
  // pointwise edge gives each downstream subtask one channel, from its own upstream.
  std::map<std::pair<const JobEdge*, int>, std::size_t> channel_of;
  std::vector<std::vector<int>> channel_inputs(layout_.chains.size());
  for (std::size_t c = 0; c < layout_.chains.size(); ++c)
    for (const JobEdge* e : graph.inputs_of(layout_.chains[c].front())) {
      int up = graph.parallelism_of(graph.node(e->from));
      if (is_pointwise(*e, up, graph.parallelism_of(graph.node(e->to)))) {
        for (int u = 0; u < up; ++u) channel_of[{e, u}] = channel_inputs[c].size();
        channel_inputs[c].push_back(e->to_input);
        continue;
      }
      for (int u = 0; u < up; ++u) {
        channel_of[{e, u}] = channel_inputs[c].size();
        channel_inputs[c].push_back(e->to_input);
      }
    }

  auto working_dir = [&] {
    if (own_working_dir_.empty()) {
      static std::atomic<int> counter{0};
      const auto tmp = std::filesystem::temp_directory_path();
      remove_abandoned_directories(tmp, "clink-state-");  // of killed processes
      own_working_dir_ = tmp / ("clink-state-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
      own_working_lock_ = OwnedDirectory(own_working_dir_);
    }
    return own_working_dir_;
  };

  tasks_.resize(n_tasks);
  for (std::size_t t = 0; t < n_tasks; ++t) {
    if (!local[t]) continue;
    const auto& entry = layout_.tasks[t];
    const auto& chain = layout_.chains[entry.chain];
    const JobNode& head = graph.node(chain.front());
    const int s = entry.subtask, p = entry.parallelism;
    auto task = std::make_unique<detail::Task>(t, head.name + " (" + std::to_string(s + 1) + "/" + std::to_string(p) + ")",
                                               *control_, *options_.clock, options_.checkpoints);
    if (head.num_inputs > 0) {
      task->gate = std::make_unique<InputGate>(channel_inputs[entry.chain], graph.config.channel_capacity);
      // The registry keeps the head's metrics alive as long as the gate.
      task->gate->set_bytes_counter(&metrics.operator_metrics(head.id, s, task->time_metrics())->bytes_in);
    }
    task->finished_on_restore = finished.count(head.id) > 0;
    // Only a savepoint's: a stop's, restored after a failure, whose commits the stop
    // waits for; ordinary restarts keep their timing.
    if (meta && meta->is_savepoint) task->restored_checkpoint = meta->checkpoint_id;
    task->log_context = log::Context{log::context().job, head.name, s, p};
    for (const auto& id : chain) {
      const JobNode& n = graph.node(id);
      auto host = std::make_unique<detail::OperatorHost>();
      host->node = &n;
      host->display_name = n.name + " (" + std::to_string(s + 1) + "/" + std::to_string(p) + ")";
      host->metrics = metrics.operator_metrics(n.id, s, task->time_metrics());
      host->output.metrics = host->metrics.get();
      int max_par = graph.max_parallelism_of(n);
      host->ctx = std::make_unique<RuntimeContext>(n.id, n.name, s, p, max_par, &host->output, host->metrics,
                                                   *options_.clock);
      RuntimeContext& ctx = *host->ctx;
      ctx.set_checkpointing_enabled(options_.checkpoints.enabled());
      ctx.set_last_checkpoint_id(std::max(start.last_checkpoint_id, meta ? meta->checkpoint_id : 0));
      ctx.set_task_mailbox([tk = task.get()](std::function<void()> action) { tk->post(std::move(action)); });
      ctx.set_cancelled_check([c = control_.get()] { return c->cancelled(); });
      // Operators whose every input is hash-partitioned are keyed: they get a backend.
      auto ins = graph.inputs_of(n.id);
      bool keyed = !ins.empty() && std::all_of(ins.begin(), ins.end(), [](const JobEdge* e) {
        return e->partitioning == Partitioning::kHash;
      });
      if (keyed) {
        StateBackendConfig cfg = options_.checkpoints.state_backend;
        if (cfg.working_dir.empty()) cfg.working_dir = working_dir();
        ctx.set_keyed_state_backend(make_keyed_state_backend(cfg, n.uid, s, ctx.key_groups(), max_par, *options_.clock));
      }
      if (meta) {
        auto it = meta->operators.find(n.uid);
        if (it != meta->operators.end()) {
          const OperatorCheckpointState& old = it->second;
          std::vector<KeyedStateHandle> handles;
          std::vector<std::pair<std::filesystem::path, int>> timer_files;
          // At unchanged parallelism, by subtask (a finished one's empty): each subtask
          // gets back what it wrote, as in Flink, also when only its region restarts.
          const bool same_parallelism = old.parallelism == p;
          std::vector<OperatorStateStore> op_states(same_parallelism ? static_cast<std::size_t>(p) : 0);
          for (const auto& st : old.subtasks) {
            for (const auto& h : st.keyed)
              if (h.key_groups.first <= ctx.key_groups().last && h.key_groups.last >= ctx.key_groups().first)
                handles.push_back(h);
            if (!st.timers_file.empty()) timer_files.emplace_back(restore_dir / st.timers_file, st.subtask);
            if (st.operator_state_file.empty()) continue;
            auto store = OperatorStateStore::read(restore_dir / st.operator_state_file);
            if (same_parallelism && st.subtask >= 0 && st.subtask < p)
              op_states[static_cast<std::size_t>(st.subtask)] = std::move(store);
            else
              op_states.push_back(std::move(store));
          }
          if (!handles.empty()) {
            if (!ctx.keyed_state_backend())
              throw ClinkError("cannot restore operator '" + n.uid + "': it has keyed state but is not keyed now");
            ctx.keyed_state_backend()->restore(handles);
          }
          restore_timers(ctx.timer_service(), timer_files, ctx.key_groups(), max_par, s);
          ctx.set_operator_state(OperatorStateStore::redistribute(op_states, s, p));
          ctx.set_restored(true);
          ctx.set_restored_checkpoint_id(meta->checkpoint_id);
        }
      }
      if (options_.failures) {
        host->probe = options_.failures->probe(n.uid, n.name, s);
        if (n.num_inputs == 0) host->output.source_probe = host->probe.get();
      }
      host->op = n.build();
      if (!host->op) throw ClinkError("operator '" + n.id + "': builder returned nothing");
      if (host->op->num_inputs() != n.num_inputs)
        throw ClinkError("operator '" + n.id + "' declares " + std::to_string(n.num_inputs) +
                         " inputs but its implementation has " + std::to_string(host->op->num_inputs()));
      task->chain.push_back(std::move(host));
    }
    tasks_[t] = std::move(task);
  }

  // Wire every edge out of a local task: chained edges call the next operator, others
  // go through channels, to a gate here or a task elsewhere.
  for (const JobEdge& e : graph.edges) {
    Placement from = where.at(e.from);
    Placement to = where.at(e.to);
    int up = graph.parallelism_of(graph.node(e.from));
    int down = graph.parallelism_of(graph.node(e.to));
    int max_par = graph.max_parallelism_of(graph.node(e.to));
    for (int s = 0; s < up; ++s) {
      detail::Task* task = tasks_[first_task[from.chain] + static_cast<std::size_t>(s)].get();
      if (!task) continue;
      detail::OperatorHost& src = *task->chain[from.position];
      std::unique_ptr<detail::Target> target;
      if (from.chain == to.chain) {
        target = std::make_unique<detail::ChainedTarget>(task->chain[to.position].get());
      } else {
        std::vector<std::unique_ptr<ChannelWriter>> writers;
        auto writer_to = [&](int d) {
          std::size_t target_task = first_task[to.chain] + static_cast<std::size_t>(d);
          std::size_t channel = channel_of.at({&e, s});
          std::unique_ptr<ChannelWriter> w = tasks_[target_task]
                                                 ? make_local_channel_writer(*tasks_[target_task]->gate, channel)
                                                 : wiring.remote_writer(target_task, channel);
          w->count_bytes_into(&src.metrics->bytes_out);
          return w;
        };
        if (is_pointwise(e, up, down)) {
          writers.push_back(writer_to(s));
          target = std::make_unique<detail::NetworkTarget>(make_forward_partitioner(0, 1), std::move(writers),
                                                           task->time_metrics().get());
          if (e.side_output.empty()) src.output.main.push_back(std::move(target));
          else src.output.sides[e.side_output].push_back(std::move(target));
          continue;
        }
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
        for (int d = 0; d < down; ++d) writers.push_back(writer_to(d));
        target = std::make_unique<detail::NetworkTarget>(std::move(part), std::move(writers), task->time_metrics().get());
      }
      if (e.side_output.empty()) src.output.main.push_back(std::move(target));
      else src.output.sides[e.side_output].push_back(std::move(target));
    }
  }
}

TaskGroup::~TaskGroup() {
  cancel();
  join();
  tasks_.clear();  // closes the backends before their working directory goes
  huge_pages::release_cached();  // the tasks' tables are gone: a worker lives on without their pages
  if (!own_working_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(own_working_dir_, ec);
    own_working_lock_.release();
  }
}

bool TaskGroup::is_local(std::size_t task) const { return task < tasks_.size() && tasks_[task]; }

InputGate* TaskGroup::gate(std::size_t task) const { return is_local(task) ? tasks_[task]->gate.get() : nullptr; }

void TaskGroup::start() {
  for (std::size_t t = 0; t < tasks_.size(); ++t) {
    if (!tasks_[t]) continue;
    threads_.emplace_back([this, t] {
      log::ScopedContext as_task(tasks_[t]->log_context);
      tasks_[t]->run();
      if (exited_) exited_(t);
    });
  }
}

void TaskGroup::cancel() {
  control_->cancel();
  for (auto& t : tasks_)
    if (t && t->gate) t->gate->cancel();
}

bool TaskGroup::cancelled() const { return control_->cancelled(); }

void TaskGroup::join() {
  for (auto& th : threads_)
    if (th.joinable()) th.join();
  threads_.clear();
}

void TaskGroup::trigger_checkpoint(std::size_t task, const CheckpointBarrier& barrier) {
  if (is_local(task)) tasks_[task]->trigger_checkpoint(barrier);
}

void TaskGroup::notify_checkpoint_complete(std::size_t task, std::int64_t checkpoint_id) {
  if (is_local(task)) tasks_[task]->notify_checkpoint_complete(checkpoint_id);
}

void TaskGroup::trigger_drained_checkpoint(std::size_t task, const CheckpointBarrier& barrier) {
  if (is_local(task)) tasks_[task]->trigger_checkpoint(barrier, /*drain=*/true);
}

void TaskGroup::resume_after_failed_stop(std::size_t task) {
  if (is_local(task)) tasks_[task]->resume_after_failed_stop();
}

}  // namespace clink
