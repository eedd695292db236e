#include "task.hpp"

#include <chrono>
#include <filesystem>
#include <thread>

#include "clink/checkpoint/timer_snapshot.hpp"
#include "clink/core/error.hpp"
#include "clink/core/output_tag.hpp"
#include "clink/runtime/lateness.hpp"
#include "clink/runtime/multi_input_alignment.hpp"
#include "clink/state/keyed_state_backend.hpp"

namespace clink::detail {

using Clock = std::chrono::steady_clock;

static std::int64_t ns_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

// ---- outputs ----

void HostOutput::fan_out(std::vector<std::unique_ptr<Target>>& targets, BatchPtr batch) {
  if (targets.empty()) return;
  for (std::size_t i = 0; i + 1 < targets.size(); ++i) targets[i]->push(batch->clone());
  targets.back()->push(std::move(batch));
}

void HostOutput::emit(BatchPtr batch) {
  if (!batch || batch->empty()) return;
  metrics->count_out(batch->size());
  if (source_probe) source_probe->on_batch(batch->size());
  fan_out(main, std::move(batch));
}

void HostOutput::emit_watermark(Watermark wm) {
  if (!wm.idle) metrics->output_watermark.store(wm.timestamp, std::memory_order_relaxed);
  for (auto& t : main) t->push_watermark(wm);
  for (auto& [tag, targets] : sides)
    for (auto& t : targets) t->push_watermark(wm);
}

void HostOutput::emit_side(const std::string& tag, BatchPtr batch) {
  if (!batch || batch->empty()) return;
  auto it = sides.find(tag);
  if (it == sides.end()) {
    // Other side outputs nobody reads are discarded (as in Flink); dead letters never are.
    if (tag == kDeadLetterTag)
      throw ClinkError("records were routed to the '" + tag + "' side output, but nothing reads it");
    return;
  }
  fan_out(it->second, std::move(batch));
}

void HostOutput::end_network_outputs() {
  for (auto& t : main) t->push_end();
  for (auto& [tag, targets] : sides)
    for (auto& t : targets) t->push_end();
}

void HostOutput::barrier_network_outputs(const CheckpointBarrier& barrier) {
  for (auto& t : main) t->push_barrier(barrier);
  for (auto& [tag, targets] : sides)
    for (auto& t : targets) t->push_barrier(barrier);
}

void ChainedTarget::push(BatchPtr batch) {
  next_->metrics->count_in(batch->size());
  attributed(*next_, [&] {
    if (next_->probe) next_->probe->on_batch(batch->size());
    next_->op->process_batch(0, std::move(batch));
  });
}

void ChainedTarget::push_watermark(Watermark wm) {
  attributed(*next_, [&] { next_->op->process_watermark(wm); });
}

void NetworkTarget::push(BatchPtr batch) {
  partitioner_->partition(std::move(batch), scratch_);
  for (std::size_t i = 0; i < scratch_.size(); ++i) {
    if (!scratch_[i]) continue;
    time_->backpressured_ns.fetch_add(writers_[i]->push(std::move(scratch_[i])), std::memory_order_relaxed);
    scratch_[i] = nullptr;
  }
}

void NetworkTarget::push_watermark(Watermark wm) {
  for (auto& w : writers_) time_->backpressured_ns.fetch_add(w->push(wm), std::memory_order_relaxed);
}

void NetworkTarget::push_barrier(const CheckpointBarrier& barrier) {
  for (auto& w : writers_) time_->backpressured_ns.fetch_add(w->push(barrier), std::memory_order_relaxed);
}

void NetworkTarget::push_end() {
  for (auto& w : writers_) w->push(EndOfInput{});
}

// ---- task ----

void Task::post(std::function<void()> action) {
  {
    std::lock_guard lock(mailbox_mu_);
    mailbox_.push_back(std::move(action));
    mailbox_pending_.store(true, std::memory_order_release);
  }
  mailbox_cv_.notify_one();
  if (gate) gate->wake();
}

void Task::run_mailbox() {
  if (!mailbox_pending_.load(std::memory_order_acquire)) return;
  std::vector<std::function<void()>> actions;
  {
    std::lock_guard lock(mailbox_mu_);
    actions.swap(mailbox_);
    mailbox_pending_.store(false, std::memory_order_release);
  }
  for (auto& a : actions) a();
}

void Task::trigger_checkpoint(CheckpointBarrier barrier, bool drain) {
  post([this, barrier, drain] {
    // Stop with drain: a running source's final watermark, in the same mailbox action
    // as the barrier, so no record comes between them (it would be late for every window).
    if (drain && !gate && !ended_) {
      OperatorHost& head = *chain.front();
      attributed(head, [&] { head.output.emit_watermark(Watermark::max()); });
    }
    perform_checkpoint(barrier);
    if (barrier.stops_sources) stopped_at_savepoint_ = true;
  });
}

void Task::resume_after_failed_stop() {
  post([this] { stopped_at_savepoint_ = false; });
}

void Task::notify_checkpoint_complete(std::int64_t checkpoint_id) {
  post([this, checkpoint_id] {
    for (auto& host : chain) {
      try {
        if (auto* backend = host->ctx->keyed_state_backend()) backend->notify_checkpoint_complete(checkpoint_id);
        host->op->notify_checkpoint_complete(checkpoint_id);
      } catch (const TaskCancelled&) {
        throw;
      } catch (const std::exception& e) {
        throw OperatorFailure(host->display_name + " failed to commit checkpoint " + std::to_string(checkpoint_id) +
                              ": " + e.what());
      }
    }
    // A checkpoint that snapshotted this task after its end of input covers all it did.
    if (first_checkpoint_after_end_ > 0 && checkpoint_id >= first_checkpoint_after_end_)
      final_checkpoint_completed_ = true;
    job_.checkpoint_committed(index_, checkpoint_id);
    // After the chain committed and said so: the failure follows a completed checkpoint,
    // which the restart restores.
    for (auto& host : chain)
      if (host->probe) attributed(*host, [&] { host->probe->on_checkpoint_complete(checkpoint_id); });
  });
}

void Task::perform_checkpoint(const CheckpointBarrier& barrier, std::int64_t alignment_ns) {
  namespace fs = std::filesystem;
  // After the end of input the outputs have ended: downstream tasks count the end as
  // this checkpoint's barrier (MultiInputAlignment), so none follows it.
  auto pass_barrier_on = [&] {
    if (!ended_)
      for (auto& h : chain) h->output.barrier_network_outputs(barrier);
  };
  if (barrier.checkpoint_id <= last_checkpoint_) return;  // triggered twice around the end of input
  last_checkpoint_ = barrier.checkpoint_id;
  if (ended_ && first_checkpoint_after_end_ == 0) first_checkpoint_after_end_ = barrier.checkpoint_id;
  // A backend writes one snapshot at a time (the coordinator triggers the next after the
  // previous completed, so this waits only after an abort).
  join_async_snapshot();
  const Clock::time_point started = Clock::now();
  const fs::path dir = job_.checkpoint_directory(barrier.checkpoint_id);
  TaskSnapshot snapshot;
  if (!job_.checkpoint_pending(barrier.checkpoint_id)) {  // aborted already: just pass the barrier on
    pass_barrier_on();
    return;
  }
  // A snapshot that will never be acknowledged (the checkpoint was aborted meanwhile, an
  // operator failed, or the task was cancelled) discards the new shared files it uploaded:
  // no checkpoint will ever reference them.
  std::vector<AsyncKeyedSnapshot> keyed;
  auto discard = [&] {
    give_up(snapshot, keyed);
    job_.discard_snapshot(barrier.checkpoint_id, std::move(snapshot));
  };
  for (auto& host : chain) {
    try {
      if (host->probe) host->probe->on_snapshot(barrier.checkpoint_id);
      host->op->snapshot_state(barrier.checkpoint_id);
      RuntimeContext& ctx = *host->ctx;
      OperatorSubtaskState state;
      state.subtask = ctx.subtask_index();
      const std::string sub = host->node->uid + "-" + std::to_string(ctx.subtask_index());
      fs::create_directories(dir / sub);
      if (auto* backend = ctx.keyed_state_backend())
        // Names its own files. Savepoints are self-contained (no shared incremental files).
        keyed.push_back({snapshot.size(), host->display_name,
                         backend->begin_snapshot(barrier.checkpoint_id, dir, barrier.is_savepoint)});
      snapshot.emplace_back(host->node->uid, std::move(state));
      OperatorSubtaskState& taken = snapshot.back().second;
      const TimerService& timers = ctx.timer_service();
      if (timers.event_time_timer_count() + timers.processing_time_timer_count() > 0) {
        write_timers(timers, dir / sub / "timers");
        taken.timers_file = sub + "/timers";
      }
      if (!ctx.operator_state().empty()) {
        ctx.operator_state().write(dir / sub / "operator_state");
        taken.operator_state_file = sub + "/operator_state";
      }
    } catch (const TaskCancelled&) {
      discard();
      throw;
    } catch (const std::exception& e) {
      discard();
      // A checkpoint aborted meanwhile (its directory is gone) is no failure of ours.
      if (!job_.checkpoint_pending(barrier.checkpoint_id)) {
        pass_barrier_on();
        return;
      }
      throw OperatorFailure(host->display_name + " failed in checkpoint " + std::to_string(barrier.checkpoint_id) +
                            ": " + e.what());
    }
  }
  // The barrier goes on only after the snapshot, so nothing emitted after it can be
  // part of this checkpoint's downstream state.
  try {
    pass_barrier_on();
  } catch (const TaskCancelled&) {
    discard();
    throw;
  }
  const std::int64_t sync_ms = ns_since(started) / 1'000'000;
  if (keyed.empty()) {
    log::debug("checkpoint {}: synchronous part {} ms", barrier.checkpoint_id, sync_ms);
    job_.acknowledge_checkpoint(index_, barrier.checkpoint_id, std::move(snapshot),
                                CheckpointTaskTimes{alignment_ns, sync_ms, 0});
    return;
  }
  // The keyed state is written while the task goes on; the acknowledgement follows it.
  async_snapshot_ = std::thread([this, id = barrier.checkpoint_id, alignment_ns, sync_ms,
                                 snapshot = std::move(snapshot), keyed = std::move(keyed)]() mutable {
    write_keyed_snapshots(id, std::move(snapshot), std::move(keyed), alignment_ns, sync_ms);
  });
}

void Task::write_keyed_snapshots(std::int64_t id, TaskSnapshot snapshot, std::vector<AsyncKeyedSnapshot> keyed,
                                 std::int64_t alignment_ns, std::int64_t sync_ms) {
  log::ScopedContext context(log_context);
  const Clock::time_point started = Clock::now();
  const std::string* writing = nullptr;
  try {
    auto cancelled = [this] { return job_.cancelled(); };
    for (auto it = keyed.begin(); it != keyed.end(); it = keyed.erase(it)) {
      writing = &it->operator_name;
      snapshot[it->entry].second.keyed.push_back(it->write(cancelled));
    }
  } catch (const TaskCancelled&) {
    give_up(snapshot, keyed);
    job_.discard_snapshot(id, std::move(snapshot));
    return;
  } catch (const std::exception& e) {
    give_up(snapshot, keyed);
    job_.discard_snapshot(id, std::move(snapshot));
    // A checkpoint aborted meanwhile (its directory is gone) is no failure of ours.
    if (!job_.cancelled() && job_.checkpoint_pending(id))
      job_.fail(index_, *writing + " failed in checkpoint " + std::to_string(id) + ": " + e.what());
    return;
  }
  const std::int64_t async_ms = ns_since(started) / 1'000'000;
  log::debug("checkpoint {}: synchronous part {} ms, asynchronous part {} ms", id, sync_ms, async_ms);
  job_.acknowledge_checkpoint(index_, id, std::move(snapshot), CheckpointTaskTimes{alignment_ns, sync_ms, async_ms});
}

void Task::give_up(TaskSnapshot& snapshot, std::vector<AsyncKeyedSnapshot>& keyed) {
  for (auto& k : keyed) {
    try {
      snapshot[k.entry].second.keyed.push_back(k.write([] { return true; }));
    } catch (const std::exception&) {  // cancelled (or failed): nothing written
    }
  }
  keyed.clear();
}

void Task::join_async_snapshot() {
  if (async_snapshot_.joinable()) async_snapshot_.join();
}

void Task::run() {
  if (finished_on_restore) {
    // Its operators finished before the checkpoint it restores: running them again would
    // read or emit twice. Downstream sees its outputs end.
    try {
      for (auto& host : chain) host->output.end_network_outputs();
      job_.task_finished(index_);
    } catch (const TaskCancelled&) {
    }
    return;
  }
  std::size_t opened = 0;
  try {
    for (auto& host : chain) {
      try {
        host->op->open(*host->ctx);
      } catch (const std::exception& e) {
        throw OperatorFailure(host->display_name + " failed to open: " + e.what());
      }
      ++opened;
    }
    // Its two-phase-commit sinks committed the restored checkpoint's transactions in open().
    if (restored_checkpoint > 0) job_.checkpoint_committed(index_, restored_checkpoint);
    if (gate) run_inputs();
    else run_source();
    if (checkpoints_.enabled()) await_final_checkpoint();
    join_async_snapshot();  // its acknowledgement comes before the task's end
    job_.task_finished(index_);
  } catch (const TaskCancelled&) {
    // The job is being cancelled or another task failed: leave quietly.
  } catch (const OperatorFailure& e) {
    log::debug("task failed: {}", e.what());  // the job reports it (a restart, its end)
    job_.fail(index_, e.what());
  } catch (const std::exception& e) {
    log::debug("task failed: {}", e.what());
    job_.fail(index_, name_ + " failed: " + e.what());
  }
  for (std::size_t i = 0; i < opened; ++i) {
    try {
      chain[i]->op->close();
    } catch (const std::exception& e) {
      job_.fail(index_, chain[i]->display_name + " failed to close: " + e.what());
    }
  }
  join_async_snapshot();
}

std::chrono::steady_clock::time_point Task::next_wakeup() const {
  // Wake for the earliest processing-time timer of the chain, and at least every 50 ms.
  auto wake = Clock::now() + std::chrono::milliseconds(50);
  std::int64_t now = clock_.now_ms();
  for (const auto& host : chain) {
    if (auto t = host->ctx->timer_service().next_processing_time()) {
      auto at = Clock::now() + std::chrono::milliseconds(std::max<std::int64_t>(0, *t + 1 - now));
      if (at < wake) wake = at;
    }
  }
  return wake;
}

// A processing-time timer for t fires once the clock has passed t (now >= t + 1), as
// Flink's ProcessingTimeServiceUtil delays it: a processing-time window [s, e) fires at
// e - 1, and a row arriving within that same millisecond must still find the window
// open, not start a second firing of it.
void Task::fire_processing_timers() {
  for (auto& host : chain) {
    auto next = host->ctx->timer_service().next_processing_time();
    if (!next) continue;
    std::int64_t now = clock_.now_ms();
    if (*next >= now) continue;
    attributed(*host, [&] { host->op->process_processing_time(now - 1); });
  }
}

void Task::run_source() {
  OperatorHost& head = *chain.front();
  auto& source = static_cast<SourceOperator&>(*head.op);
  for (;;) {
    if (job_.cancelled()) throw TaskCancelled();
    auto start = Clock::now();
    std::int64_t bp_before = time_->backpressured_ns.load(std::memory_order_relaxed);
    fire_processing_timers();
    run_mailbox();
    if (stopped_at_savepoint_) {  // wait for the cancel (or a resume), still running commits
      std::this_thread::sleep_until(next_wakeup());
      continue;
    }
    SourceOperator::PollStatus status{};
    attributed(head, [&] { status = source.poll_next(); });
    std::int64_t bp = time_->backpressured_ns.load(std::memory_order_relaxed) - bp_before;
    time_->busy_ns.fetch_add(ns_since(start) - bp, std::memory_order_relaxed);
    if (status == SourceOperator::PollStatus::kEnd) {
      run_mailbox();  // a barrier triggered meanwhile still covers everything polled
      break;
    }
    if (status == SourceOperator::PollStatus::kNothingAvailable) {
      auto wait_start = Clock::now();
      auto hint = std::clamp<std::int64_t>(source.wait_hint_ms(), 0, 50);
      auto until = std::min(Clock::now() + std::chrono::milliseconds(hint), next_wakeup());
      {
        // A post to the mailbox (an operator's asynchronous result) ends the wait early.
        std::unique_lock lock(mailbox_mu_);
        mailbox_cv_.wait_until(lock, until, [&] { return mailbox_pending_.load(std::memory_order_acquire); });
      }
      time_->idle_ns.fetch_add(ns_since(wait_start), std::memory_order_relaxed);
    }
  }
  // A bounded source ends with the final watermark, so every open event-time window
  // fires. Pending processing-time timers are not fired at the end of input (Flink quiesces
  // the processing-time service before finish()): only those the clock passed already fired.
  attributed(head, [&] { chain.front()->output.emit_watermark(Watermark::max()); });
  end_of_input();
}

void Task::run_inputs() {
  MultiInputAlignment alignment(gate->channels());
  std::size_t open_channels = gate->channels();
  OperatorHost& head = *chain.front();
  const bool exactly_once = checkpoints_.mode == CheckpointingMode::kExactlyOnce;
  Clock::time_point alignment_start{};
  auto on_aligned = [&](std::optional<CheckpointBarrier> done) {
    if (done) {
      std::int64_t aligned_ns = alignment_start == Clock::time_point{} ? 0 : ns_since(alignment_start);
      alignment_start = {};
      perform_checkpoint(*done, aligned_ns);
    } else if (alignment.aligning() && alignment_start == Clock::time_point{}) {
      alignment_start = Clock::now();
    }
    // Exactly-once: hold back inputs that already delivered the barrier being aligned.
    for (std::size_t c = 0; c < gate->channels(); ++c)
      gate->set_blocked(c, exactly_once && alignment.barrier_received(c));
  };
  while (open_channels > 0) {
    auto wait_start = Clock::now();
    auto popped = gate->pop(next_wakeup());
    time_->idle_ns.fetch_add(ns_since(wait_start), std::memory_order_relaxed);
    if (job_.cancelled()) throw TaskCancelled();

    auto start = Clock::now();
    std::int64_t bp_before = time_->backpressured_ns.load(std::memory_order_relaxed);
    fire_processing_timers();
    run_mailbox();
    if (popped) {
      std::size_t channel = popped->channel;
      StreamElement& element = popped->element;
      if (auto* batch = std::get_if<BatchPtr>(&element)) {
        head.metrics->count_in((*batch)->size());
        int input = gate->input_of(channel);
        attributed(head, [&] {
          if (head.probe) head.probe->on_batch((*batch)->size());
          ChannelWatermarkScope lateness(*head.ctx, alignment.input_watermark(channel));
          head.op->process_batch(input, std::move(*batch));
        });
      } else if (auto* wm = std::get_if<Watermark>(&element)) {
        if (auto out = alignment.on_watermark(channel, *wm)) {
          if (!out->idle) head.metrics->input_watermark.store(out->timestamp, std::memory_order_relaxed);
          attributed(head, [&] { head.op->process_watermark(*out); });
        }
      } else if (std::holds_alternative<EndOfInput>(element)) {
        --open_channels;
        if (auto out = alignment.on_end_of_input(channel)) {
          if (!out->idle) head.metrics->input_watermark.store(out->timestamp, std::memory_order_relaxed);
          attributed(head, [&] { head.op->process_watermark(*out); });
        }
        on_aligned(alignment.completed_by_close());
      } else if (auto* barrier = std::get_if<CheckpointBarrier>(&element)) {
        on_aligned(alignment.on_barrier(channel, *barrier));
      }
    }
    std::int64_t bp = time_->backpressured_ns.load(std::memory_order_relaxed) - bp_before;
    time_->busy_ns.fetch_add(ns_since(start) - bp, std::memory_order_relaxed);
  }
  end_of_input();
}

void Task::end_of_input() {
  // Flush in topological order: each operator's finish() may emit into the next.
  for (auto& host : chain) attributed(*host, [&] { host->op->finish(); });
  for (auto& host : chain) host->output.end_network_outputs();
}

// FLIP-147: with checkpointing, what finish() left pending (a transactional sink's last
// transaction) is committed by the first checkpoint to complete after it, not at once: a
// task failing elsewhere later restores an earlier checkpoint, and this task's input
// since then is read again. Until that checkpoint completes, the task snapshots through
// its mailbox (the coordinator triggers it), then exits. Processing-time timers stay
// quiet, as after Flink's finish().
void Task::await_final_checkpoint() {
  ended_ = true;
  job_.task_ended(index_);
  for (;;) {
    if (job_.cancelled()) throw TaskCancelled();
    run_mailbox();
    if (final_checkpoint_completed_) return;
    std::unique_lock lock(mailbox_mu_);
    // A cancel sets no mailbox item: look at it again every 20 ms.
    mailbox_cv_.wait_for(lock, std::chrono::milliseconds(20),
                         [&] { return mailbox_pending_.load(std::memory_order_acquire); });
  }
}

}  // namespace clink::detail
