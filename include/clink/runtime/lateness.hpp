#pragma once
// Which watermark a record is late against: the greater of its operator's watermark and
// the watermark its own input channel had sent before it.
//
// An operator with several input channels (two inputs, or one input fed by several
// upstream subtasks) runs on the minimum of their watermarks. A record already behind
// its own channel's watermark but not behind that minimum would be dropped as late or
// kept depending on how far the other channels had got when it arrived: on thread
// timing, so the same bounded input gave different results from run to run (issue 15).
// Judged against its channel's watermark, lateness depends only on that channel's own
// sequence of records and watermarks: the same output on every run, and at parallelism
// 1 the same as before. It is the outcome Flink gives when the other channels happen to
// be ahead. Windows, timers and everything else still go by the operator's watermark,
// which never passes a channel's, so a window that fired is late for every channel.
//
// The task sets the channel's watermark around its head operator's process_batch (a
// chained operator's records come from its predecessor, not a channel, and its
// lateness is its own watermark's). Kept out of RuntimeContext, which ~240 translation
// units include, behind this function.
#include <optional>

#include "clink/core/event_time.hpp"

namespace clink {

class RuntimeContext;

// The watermark the records of the batch `ctx`'s operator is processing are late
// against: at least ctx.timer_service().current_watermark().
EventTime lateness_watermark(RuntimeContext& ctx);

// The watermark of the channel the batch `ctx`'s operator is processing came on; none
// for a chained operator, or outside process_batch.
std::optional<EventTime> channel_watermark(const RuntimeContext& ctx);

// While alive, the batch `head` processes came on a channel whose watermark is
// `channel_watermark` (the task; and an operator running its engine on shifted time,
// with the channel's watermark shifted alike). Nests: the previous one comes back.
class ChannelWatermarkScope {
 public:
  ChannelWatermarkScope(const RuntimeContext& head, EventTime channel_watermark);
  ~ChannelWatermarkScope();
  ChannelWatermarkScope(const ChannelWatermarkScope&) = delete;
  ChannelWatermarkScope& operator=(const ChannelWatermarkScope&) = delete;

 private:
  const RuntimeContext* previous_head_;
  EventTime previous_watermark_;
};

}  // namespace clink
