#pragma once
// The in-flight windows of one key for a merging assigner (sessions), and the state
// window each one keeps its contents in (Flink's MergingWindowSet). Windows merge
// when they intersect or touch; the merged window is [min start, max end) and keeps
// the state window of one of the windows that already had state (the earliest), into
// which the others' state is merged.
#include <algorithm>
#include <utility>
#include <vector>

#include "clink/windows/time_window.hpp"

namespace clink {

class MergingWindowSet {
 public:
  // (window, state window), in no particular order.
  using Mapping = std::vector<std::pair<TimeWindow, TimeWindow>>;

  const TimeWindow* state_window(const TimeWindow& w) const {
    for (const auto& [win, sw] : mapping_)
      if (win == w) return &sw;
    return nullptr;
  }
  void retire(const TimeWindow& w) {
    std::erase_if(mapping_, [&](const auto& e) { return e.first == w; });
  }
  bool empty() const { return mapping_.empty(); }
  const Mapping& mapping() const { return mapping_; }
  void restore(Mapping m) { mapping_ = std::move(m); }

  // Adds `w` and merges what it joins. For every merge, before the new element is
  // added, calls fn(merge_result, merged_windows, state_window_result,
  // merged_state_windows): merged_windows are the windows that disappear into
  // merge_result (without `w` itself), merged_state_windows the state windows to fold
  // into state_window_result. Returns the window the element belongs to now.
  template <class Fn>
  TimeWindow add_window(const TimeWindow& w, Fn&& fn) {
    std::vector<TimeWindow> windows;
    windows.reserve(mapping_.size() + 1);
    for (const auto& e : mapping_) windows.push_back(e.first);
    windows.push_back(w);
    std::sort(windows.begin(), windows.end());  // by start, then end

    TimeWindow result = w;
    bool merged_new = false;
    bool any_merge = false;
    std::size_t i = 0;
    while (i < windows.size()) {
      TimeWindow cover = windows[i];
      std::size_t j = i + 1;
      while (j < windows.size() && cover.intersects(windows[j])) cover = cover.cover(windows[j++]);
      if (j - i > 1) {
        any_merge = true;
        std::vector<TimeWindow> merged(windows.begin() + static_cast<std::ptrdiff_t>(i),
                                       windows.begin() + static_cast<std::ptrdiff_t>(j));
        if (auto it = std::find(merged.begin(), merged.end(), w); it != merged.end()) {
          merged.erase(it);
          merged_new = true;
          result = cover;
        }
        TimeWindow target = *state_window(merged.front());
        std::vector<TimeWindow> merged_states;
        for (const auto& m : merged) {
          if (const TimeWindow* sw = state_window(m)) merged_states.push_back(*sw);
          retire(m);
        }
        mapping_.emplace_back(cover, target);
        std::erase(merged_states, target);
        // Nothing to merge when the new window lies inside one existing window.
        if (!(merged.size() == 1 && merged.front() == cover)) fn(cover, merged, target, merged_states);
      }
      i = j;
    }
    if (!any_merge || (result == w && !merged_new)) mapping_.emplace_back(result, result);
    return result;
  }

 private:
  Mapping mapping_;
};

}  // namespace clink
