#include "clink/time/alignment_group.hpp"

#include <algorithm>
#include <chrono>

#include "clink/time/window_arithmetic.hpp"

namespace clink {

int AlignmentGroup::join() {
  std::lock_guard lock(mu_);
  int id = next_id_++;
  members_[id] = Member{};
  return id;
}

void AlignmentGroup::leave(int member) {
  {
    std::lock_guard lock(mu_);
    members_.erase(member);
  }
  changed_.notify_all();
}

void AlignmentGroup::publish(int member, EventTime watermark, bool idle) {
  {
    std::lock_guard lock(mu_);
    auto it = members_.find(member);
    if (it == members_.end()) return;
    it->second.watermark = std::max(it->second.watermark, watermark);
    it->second.idle = idle;
  }
  changed_.notify_all();
}

EventTime AlignmentGroup::min_locked() const {
  EventTime min = kMaxEventTime;
  for (const auto& [id, m] : members_)
    if (!m.idle) min = std::min(min, m.watermark);
  return min;
}

EventTime AlignmentGroup::min_watermark() const {
  std::lock_guard lock(mu_);
  return min_locked();
}

std::int64_t AlignmentGroup::wait_until_aligned(EventTime watermark, std::int64_t max_drift_ms,
                                                std::int64_t max_wait_ms) {
  auto start = std::chrono::steady_clock::now();
  std::unique_lock lock(mu_);
  // Saturating: a group minimum of INT64_MIN must not overflow into "far ahead is fine".
  changed_.wait_for(lock, std::chrono::milliseconds(max_wait_ms),
                    [&] { return watermark <= sat_add(min_locked(), max_drift_ms); });
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
}

AlignmentGroup& AlignmentGroupRegistry::group(const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<AlignmentGroup>> groups;
  std::lock_guard lock(mu);
  auto& g = groups[name];
  if (!g) g = std::make_unique<AlignmentGroup>();
  return *g;
}

}  // namespace clink
