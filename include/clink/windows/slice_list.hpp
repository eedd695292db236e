#pragma once
// The panes (slices) of one key in a sliced window table, ordered by pane index: a ring
// buffer (power-of-two capacity), so appending the newest pane and dropping the oldest
// are O(1) and move nothing; an out-of-order pane is inserted in place (rare).
//
// Why a ring: a sliding window's key holds size / slide + 1 panes and, every slide,
// gains one at the back and loses one at the front. A vector with a moving head must be
// twice that long before it compacts (a 60 / 1 window: 2 KiB per key of 16-byte panes,
// reached only after two minutes of growth), a ring of 64 holds it in 1 KiB.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "clink/core/prefetch.hpp"

namespace clink {

template <class S, class Alloc = std::allocator<std::pair<std::int64_t, S>>>
class SliceList {
  using Pane = std::pair<std::int64_t, S>;

 public:
  SliceList() = default;
  explicit SliceList(const Alloc& alloc) : ring_(alloc) {}
  // The pane `idx`, created with make() if absent; second: whether it was created.
  // `steady`: the capacity a list that outgrows its first 4 panes grows to at once
  // (the panes a key keeps in steady state), instead of doubling through every size in
  // between: each step copies the panes and leaves its block in the pool's free lists,
  // and the fresh huge pages are zeroed by the kernel (7 % of a sliding window's time).
  template <class Make>
  std::pair<S*, bool> get_or_create(std::int64_t idx, Make&& make, std::size_t steady = 0) {
    if (count_ == 0 || back_ < idx) {
      if (count_ == 0) front_ = idx;
      back_ = idx;
      Pane& p = push_back(steady);
      p.first = idx;
      p.second = make();
      return {&p.second, true};
    }
    if (back_ == idx) return {&at(count_ - 1).second, false};
    std::size_t pos = lower_bound(idx);
    if (at(pos).first == idx) return {&at(pos).second, false};
    front_ = std::min(front_, idx);
    push_back(steady);
    for (std::size_t k = count_ - 1; k > pos; --k) at(k) = std::move(at(k - 1));  // rare: shift the newer ones
    at(pos).first = idx;
    at(pos).second = make();
    return {&at(pos).second, true};
  }
  // Calls fn(index, state) for every pane with lo <= index < hi, in index order.
  // The range is found from the newest pane backwards: it is usually the newest pane or
  // two (a sliding window's entering pane), and a binary search over a key's sixty
  // panes would miss the cache at every probe. The oldest and newest panes' indices are
  // kept here, so a range before the one or past the other touches no pane at all.
  template <class Fn>
  void for_range(std::int64_t lo, std::int64_t hi, Fn&& fn) const {
    if (count_ == 0 || front_ >= hi || back_ < lo) return;
    for (std::size_t k = front_ >= lo ? 0 : from_back(lo); k < count_ && at(k).first < hi; ++k)
      fn(at(k).first, at(k).second);
  }
  // Whether a pane with lo <= index < hi exists.
  bool any_in(std::int64_t lo, std::int64_t hi) const {
    if (count_ == 0 || front_ >= hi || back_ < lo) return false;
    const std::size_t k = front_ >= lo ? 0 : from_back(lo);
    return k < count_ && at(k).first < hi;
  }
  // Calls fn(index, state) for every pane with index >= lo, in index order.
  template <class Fn>
  void for_from(std::int64_t lo, Fn&& fn) const {
    for (std::size_t k = count_ == 0 ? 0 : lower_bound(lo); k < count_; ++k) fn(at(k).first, at(k).second);
  }
  // The oldest pane's index and state (the list must not be empty).
  std::int64_t front_index() const { return front_; }
  const S& front() const { return at(0).second; }
  // The highest pane index (the list must not be empty).
  std::int64_t last_index() const { return back_; }
  // Drops the oldest pane (the list must not be empty). The next one's index is known
  // without reading it when the panes are contiguous (a sliding window's key with a pane
  // every slide): one pane line fewer at random per firing.
  void pop_front() {
    const bool contiguous = static_cast<std::uint64_t>(back_) - static_cast<std::uint64_t>(front_) + 1 == count_;
    if constexpr (!std::is_trivially_destructible_v<S>) at(0).second = S{};
    head_ = (head_ + 1) & mask();
    if (--count_ == 0) head_ = 0;
    else front_ = contiguous ? front_ + 1 : at(0).first;
  }
  // Drops every pane with index < idx.
  void drop_before(std::int64_t idx) {
    if (count_ == 0 || front_ >= idx) return;
    while (count_ > 0 && at(0).first < idx) {
      if constexpr (!std::is_trivially_destructible_v<S>) at(0).second = S{};  // free what it holds
      head_ = (head_ + 1) & mask();
      --count_;
    }
    if (count_ == 0) head_ = 0;
    else front_ = at(0).first;
  }
  bool empty() const { return count_ == 0; }
  // Starts loading the slot the next append writes (a full ring reallocates instead).
  void prefetch_append() const {
    if (count_ < ring_.size()) clink::prefetch(&at(count_));
  }
  // Starts loading what a sliding window's firing reads: the oldest pane if it is
  // before `leaving` (the firing retracts it), the newest if `entering` (it enters).
  void prefetch(std::int64_t leaving, bool entering) const {
    if (count_ > 0) {
      if (front_ < leaving) {  // dropping it reads the next one's index (maybe the next line)
        clink::prefetch(&at(0));
        if (count_ > 1) clink::prefetch(&at(1));
      }
      if (entering) clink::prefetch(&at(count_ - 1));
    }
  }
  std::size_t size() const { return count_; }
  void clear() {
    if constexpr (!std::is_trivially_destructible_v<S>) {
      for (auto& p : ring_) p.second = S{};
    }
    head_ = count_ = 0;
  }
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (std::size_t k = 0; k < count_; ++k) fn(at(k).first, at(k).second);
  }

 private:
  std::size_t mask() const { return ring_.size() - 1; }
  Pane& at(std::size_t k) { return ring_[(head_ + k) & mask()]; }
  const Pane& at(std::size_t k) const { return ring_[(head_ + k) & mask()]; }
  // A slot past the newest pane (a full ring grows, oldest first again).
  Pane& push_back(std::size_t steady) {
    if (count_ == ring_.size()) [[unlikely]] grow(steady);
    ++count_;
    return at(count_ - 1);
  }
  [[gnu::noinline]] void grow(std::size_t steady) {
    const std::size_t cap = ring_.empty() ? 4 : std::max(2 * ring_.size(), steady);
    std::vector<Pane, Alloc> grown(cap, ring_.get_allocator());
    for (std::size_t k = 0; k < count_; ++k) grown[k] = std::move(at(k));
    ring_.swap(grown);
    head_ = 0;
  }
  // The position of the first pane with index >= lo (count_ if none).
  std::size_t lower_bound(std::int64_t lo) const {
    std::size_t a = 0, b = count_;
    while (a < b) {
      const std::size_t m = (a + b) / 2;
      if (at(m).first < lo) a = m + 1;
      else b = m;
    }
    return a;
  }
  // The first pane with index >= lo, given one exists past the oldest pane (< lo).
  std::size_t from_back(std::int64_t lo) const {
    std::size_t k = count_;
    for (int steps = 0; at(k - 1).first >= lo;) {  // stops at the oldest, which is < lo
      --k;
      if (++steps == 4) return lower_bound(lo);
    }
    return k;
  }

  std::vector<Pane, Alloc> ring_;  // size: the capacity, a power of two (or empty)
  std::uint32_t head_ = 0, count_ = 0;
  // The oldest and newest panes' indices (meaningless when empty): kept here, beside the
  // ring's pointers, so a range test reads no pane (a firing would miss the cache on the
  // newest pane of every key).
  std::int64_t front_ = 0, back_ = 0;
};

}  // namespace clink
