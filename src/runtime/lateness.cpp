#include "clink/runtime/lateness.hpp"

#include <algorithm>

#include "clink/runtime/runtime_context.hpp"

namespace clink {

namespace {

// The head operator processing a batch on this (task) thread, and its channel's watermark.
struct ChannelWatermark {
  const RuntimeContext* head = nullptr;
  EventTime watermark = kMinEventTime;
};
thread_local ChannelWatermark current;

}  // namespace

EventTime lateness_watermark(RuntimeContext& ctx) {
  const EventTime own = ctx.timer_service().current_watermark();
  return current.head == &ctx ? std::max(own, current.watermark) : own;
}

std::optional<EventTime> channel_watermark(const RuntimeContext& ctx) {
  if (current.head != &ctx) return std::nullopt;
  return current.watermark;
}

ChannelWatermarkScope::ChannelWatermarkScope(const RuntimeContext& head, EventTime channel_watermark)
    : previous_head_(current.head), previous_watermark_(current.watermark) {
  current = {&head, channel_watermark};
}

ChannelWatermarkScope::~ChannelWatermarkScope() { current = {previous_head_, previous_watermark_}; }

}  // namespace clink
