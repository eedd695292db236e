#pragma once
// The panes (slices) of one key in a sliced window table, ordered by pane index: a
// vector with a moving head, so appending the newest pane and dropping the oldest are
// O(1) amortised; an out-of-order pane is inserted in place (rare).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace clink {

template <class S, class Alloc = std::allocator<std::pair<std::int64_t, S>>>
class SliceList {
 public:
  SliceList() = default;
  explicit SliceList(const Alloc& alloc) : v_(alloc) {}
  // The pane `idx`, created with make() if absent; second: whether it was created.
  template <class Make>
  std::pair<S*, bool> get_or_create(std::int64_t idx, Make&& make) {
    if (head_ == v_.size() || v_.back().first < idx) {
      if (head_ == v_.size()) front_ = idx;
      v_.emplace_back(idx, make());
      return {&v_.back().second, true};
    }
    if (v_.back().first == idx) return {&v_.back().second, false};
    auto first = v_.begin() + static_cast<std::ptrdiff_t>(head_);
    auto it = std::lower_bound(first, v_.end(), idx, [](const auto& e, std::int64_t i) { return e.first < i; });
    if (it != v_.end() && it->first == idx) return {&it->second, false};
    front_ = std::min(front_, idx);
    it = v_.emplace(it, idx, make());
    return {&it->second, true};
  }
  // Calls fn(index, state) for every pane with lo <= index < hi, in index order.
  // The range is found from the newest pane backwards: it is usually the newest pane or
  // two (a sliding window's entering pane), and a binary search over a key's sixty
  // panes would miss the cache at every probe. The oldest pane's index is kept here, so
  // a range before it or past the newest touches no pane at all.
  template <class Fn>
  void for_range(std::int64_t lo, std::int64_t hi, Fn&& fn) const {
    if (head_ == v_.size() || front_ >= hi || v_.back().first < lo) return;
    auto it = front_ >= lo ? first() : from_back(lo);
    for (; it != v_.end() && it->first < hi; ++it) fn(it->first, it->second);
  }
  // Whether a pane with lo <= index < hi exists.
  bool any_in(std::int64_t lo, std::int64_t hi) const {
    if (head_ == v_.size() || front_ >= hi || v_.back().first < lo) return false;
    auto it = front_ >= lo ? first() : from_back(lo);
    return it != v_.end() && it->first < hi;
  }
  // Calls fn(index, state) for every pane with index >= lo, in index order.
  template <class Fn>
  void for_from(std::int64_t lo, Fn&& fn) const {
    auto it = std::lower_bound(first(), v_.end(), lo, [](const auto& e, std::int64_t i) { return e.first < i; });
    for (; it != v_.end(); ++it) fn(it->first, it->second);
  }
  // The highest pane index (the list must not be empty).
  std::int64_t last_index() const { return v_.back().first; }
  // Drops every pane with index < idx.
  void drop_before(std::int64_t idx) {
    if (head_ == v_.size() || front_ >= idx) return;
    while (head_ < v_.size() && v_[head_].first < idx) ++head_;
    if (head_ == v_.size()) {
      v_.clear();
      head_ = 0;
    } else {
      front_ = v_[head_].first;
      if (head_ >= 8 && head_ * 2 >= v_.size()) {
        v_.erase(v_.begin(), v_.begin() + static_cast<std::ptrdiff_t>(head_));
        head_ = 0;
      }
    }
  }
  bool empty() const { return head_ == v_.size(); }
  void prefetch_back() const {
    if (head_ < v_.size()) __builtin_prefetch(&v_.back());
  }
  // Starts loading what a sliding window's firing reads: the oldest pane if it is
  // before `leaving` (the firing retracts it), the newest if `entering` (it enters).
  void prefetch(std::int64_t leaving, bool entering) const {
    if (head_ < v_.size()) {
      if (front_ < leaving) __builtin_prefetch(&v_[head_]);
      if (entering) __builtin_prefetch(&v_.back());
    }
  }
  std::size_t size() const { return v_.size() - head_; }
  void clear() {
    v_.clear();
    head_ = 0;
  }
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (std::size_t i = head_; i < v_.size(); ++i) fn(v_[i].first, v_[i].second);
  }

 private:
  auto first() const { return v_.begin() + static_cast<std::ptrdiff_t>(head_); }
  // The first pane with index >= lo, given one exists past the oldest pane (< lo).
  auto from_back(std::int64_t lo) const {
    auto it = v_.end();
    for (int steps = 0; (it - 1)->first >= lo;) {  // stops at the oldest, which is < lo
      --it;
      if (++steps == 4)
        return std::lower_bound(first(), it, lo, [](const auto& e, std::int64_t i) { return e.first < i; });
    }
    return it;
  }

  std::vector<std::pair<std::int64_t, S>, Alloc> v_;
  std::size_t head_ = 0;
  std::int64_t front_ = 0;  // the oldest pane's index (meaningless when empty)
};

}  // namespace clink
