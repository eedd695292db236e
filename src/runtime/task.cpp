#include "task.hpp"

#include <chrono>
#include <thread>

#include "clink/connectors/dead_letter.hpp"
#include "clink/core/error.hpp"
#include "clink/runtime/multi_input_alignment.hpp"

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
  fan_out(main, std::move(batch));
}

void HostOutput::emit_watermark(Watermark wm) {
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

void ChainedTarget::push(BatchPtr batch) {
  next_->metrics->count_in(batch->size());
  try {
    next_->op->process_batch(0, std::move(batch));
  } catch (const OperatorFailure&) {
    throw;
  } catch (const TaskCancelled&) {
    throw;
  } catch (const std::exception& e) {
    throw OperatorFailure(next_->display_name + " failed: " + e.what());
  }
}

void ChainedTarget::push_watermark(Watermark wm) {
  try {
    next_->op->process_watermark(wm);
  } catch (const OperatorFailure&) {
    throw;
  } catch (const TaskCancelled&) {
    throw;
  } catch (const std::exception& e) {
    throw OperatorFailure(next_->display_name + " failed: " + e.what());
  }
}

void NetworkTarget::push(BatchPtr batch) {
  partitioner_->partition(std::move(batch), scratch_);
  for (std::size_t i = 0; i < scratch_.size(); ++i) {
    if (!scratch_[i]) continue;
    time_->backpressured_ns.fetch_add(gates_[i]->push(channels_[i], std::move(scratch_[i])),
                                      std::memory_order_relaxed);
    scratch_[i] = nullptr;
  }
}

void NetworkTarget::push_watermark(Watermark wm) {
  for (std::size_t i = 0; i < gates_.size(); ++i)
    time_->backpressured_ns.fetch_add(gates_[i]->push(channels_[i], wm), std::memory_order_relaxed);
}

void NetworkTarget::push_end() {
  for (std::size_t i = 0; i < gates_.size(); ++i) gates_[i]->push(channels_[i], EndOfInput{});
}

// ---- task ----

void Task::call_head(const char* what, const std::function<void()>& fn) {
  (void)what;
  try {
    fn();
  } catch (const OperatorFailure&) {
    throw;
  } catch (const TaskCancelled&) {
    throw;
  } catch (const std::exception& e) {
    throw OperatorFailure(chain.front()->display_name + " failed: " + e.what());
  }
}

void Task::run() {
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
    if (gate) run_inputs();
    else run_source();
  } catch (const TaskCancelled&) {
    // The job is being cancelled or another task failed: leave quietly.
  } catch (const OperatorFailure& e) {
    job_.fail(e.what());
  } catch (const std::exception& e) {
    job_.fail(name_ + " failed: " + e.what());
  }
  for (std::size_t i = 0; i < opened; ++i) {
    try {
      chain[i]->op->close();
    } catch (const std::exception& e) {
      job_.fail(chain[i]->display_name + " failed to close: " + e.what());
    }
  }
}

std::chrono::steady_clock::time_point Task::next_wakeup() const {
  // Wake for the earliest processing-time timer of the chain, and at least every 50 ms.
  auto wake = Clock::now() + std::chrono::milliseconds(50);
  std::int64_t now = clock_.now_ms();
  for (const auto& host : chain) {
    if (auto t = host->ctx->timer_service().next_processing_time()) {
      auto at = Clock::now() + std::chrono::milliseconds(std::max<std::int64_t>(0, *t - now));
      if (at < wake) wake = at;
    }
  }
  return wake;
}

void Task::fire_processing_timers() {
  for (auto& host : chain) {
    auto next = host->ctx->timer_service().next_processing_time();
    if (!next) continue;
    std::int64_t now = clock_.now_ms();
    if (*next > now) continue;
    try {
      host->op->process_processing_time(now);
    } catch (const OperatorFailure&) {
      throw;
    } catch (const TaskCancelled&) {
      throw;
    } catch (const std::exception& e) {
      throw OperatorFailure(host->display_name + " failed: " + e.what());
    }
  }
}

void Task::run_source() {
  auto& source = static_cast<SourceOperator&>(*chain.front()->op);
  for (;;) {
    if (job_.cancelled()) throw TaskCancelled();
    auto start = Clock::now();
    std::int64_t bp_before = time_->backpressured_ns.load(std::memory_order_relaxed);
    fire_processing_timers();
    SourceOperator::PollStatus status{};
    call_head("poll", [&] { status = source.poll_next(); });
    std::int64_t bp = time_->backpressured_ns.load(std::memory_order_relaxed) - bp_before;
    time_->busy_ns.fetch_add(ns_since(start) - bp, std::memory_order_relaxed);
    if (status == SourceOperator::PollStatus::kEnd) break;
    if (status == SourceOperator::PollStatus::kNothingAvailable) {
      auto wait_start = Clock::now();
      auto hint = std::clamp<std::int64_t>(source.wait_hint_ms(), 0, 50);
      auto until = std::min(Clock::now() + std::chrono::milliseconds(hint), next_wakeup());
      std::this_thread::sleep_until(until);
      time_->idle_ns.fetch_add(ns_since(wait_start), std::memory_order_relaxed);
    }
  }
  // A bounded source ends with the final watermark, so every open window fires.
  call_head("watermark", [&] { chain.front()->output.emit_watermark(Watermark::max()); });
  end_of_input();
}

void Task::run_inputs() {
  MultiInputAlignment alignment(gate->channels());
  std::size_t open_channels = gate->channels();
  OperatorHost& head = *chain.front();
  while (open_channels > 0) {
    auto wait_start = Clock::now();
    auto popped = gate->pop(next_wakeup());
    time_->idle_ns.fetch_add(ns_since(wait_start), std::memory_order_relaxed);
    if (job_.cancelled()) throw TaskCancelled();

    auto start = Clock::now();
    std::int64_t bp_before = time_->backpressured_ns.load(std::memory_order_relaxed);
    fire_processing_timers();
    if (popped) {
      std::size_t channel = popped->channel;
      StreamElement& element = popped->element;
      if (auto* batch = std::get_if<BatchPtr>(&element)) {
        head.metrics->count_in((*batch)->size());
        int input = gate->input_of(channel);
        call_head("batch", [&] { head.op->process_batch(input, std::move(*batch)); });
      } else if (auto* wm = std::get_if<Watermark>(&element)) {
        if (auto out = alignment.on_watermark(channel, *wm))
          call_head("watermark", [&] { head.op->process_watermark(*out); });
      } else if (std::holds_alternative<EndOfInput>(element)) {
        --open_channels;
        if (auto out = alignment.on_end_of_input(channel))
          call_head("watermark", [&] { head.op->process_watermark(*out); });
      }
      // CheckpointBarrier: aligned and acted on by the checkpointing layer (state issue).
    }
    std::int64_t bp = time_->backpressured_ns.load(std::memory_order_relaxed) - bp_before;
    time_->busy_ns.fetch_add(ns_since(start) - bp, std::memory_order_relaxed);
  }
  end_of_input();
}

void Task::end_of_input() {
  // Flush in topological order: each operator's finish() may emit into the next.
  for (auto& host : chain) {
    try {
      host->op->finish();
    } catch (const OperatorFailure&) {
      throw;
    } catch (const TaskCancelled&) {
      throw;
    } catch (const std::exception& e) {
      throw OperatorFailure(host->display_name + " failed: " + e.what());
    }
  }
  for (auto& host : chain) host->output.end_network_outputs();
}

}  // namespace clink::detail
