#pragma once
// The running combination of one key's panes over a sliding range [lo, hi) of pane
// indices, so that firing a sliding window (size n panes, slide m panes) costs O(1)
// amortised merges per key instead of n.
//
// Two strategies, chosen at compile time by the window policy:
//  - invertible aggregates (the policy has retract(acc, pane), e.g. COUNT and SUM):
//    one accumulator; a pane entering the range is merged in, a pane leaving it is
//    retracted (subtract-on-evict);
//  - any other associative merge (MIN, MAX, arbitrary merge()): two stacks. The front
//    holds the suffix combinations of the oldest panes ([i, mid) for each pane i), the
//    back the combination of the newer panes [mid, hi). Evicting pops the front; when
//    the front is empty and the back holds evicted panes, the back's panes are re-read
//    and turned into suffix combinations (a flip: each pane is merged at most twice).
//    The result create() (+) front (+) back merges in pane order, so a merge that is
//    associative but not commutative gives what combining every pane in order gives.
//
// The panes themselves stay in the key's pane list; `panes(lo, hi, fn)` visits those
// present in [lo, hi) in index order as fn(index, state). A pane changing inside the
// range (a late record, an out-of-order pane) invalidates the combination; the next
// firing rebuilds it from the panes. Nothing here is checkpointed: a restored key
// starts invalid and is rebuilt exactly at its first firing.
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

namespace clink {

template <class State, bool kInvertible>
class PaneCombination {
 public:
  bool valid() const { return lo_ != kInvalid; }
  // Whether pane i is inside the combined range (changing it requires invalidate()).
  bool covers(std::int64_t i) const { return lo_ != kInvalid && i >= lo_ && i < hi_; }
  std::int64_t hi() const { return hi_; }
  std::int64_t lo() const { return lo_; }

  // Invertible only. Moves the range [lo, hi) one pane on: merges pane hi (entering,
  // null if absent), writes the combination of [lo, hi + 1) into out (false: it holds
  // no pane, out untouched), then retracts pane lo (leaving, null if absent). A sliding
  // window's on-time firing and cleaning in one step, with no pane list to visit.
  template <class P>
  bool advance(const P& p, const State* entering, const State* leaving, State& out) {
    static_assert(kInvertible);
    if (entering) {
      p.merge(back_, *entering);
      ++back_n_;
    }
    ++hi_;
    const bool any = back_n_ > 0;
    if (any) out = back_;
    if (leaving) {
      p.retract(back_, *leaving);
      --back_n_;
    }
    ++lo_;
    return any;
  }
  void invalidate() {
    lo_ = kInvalid;
    if constexpr (!kInvertible) {
      stacks_.front.clear();
      stacks_.head = 0;
    }
    back_ = State{};
    back_n_ = 0;
  }

  // Removes the panes below x from the range (before the pane list drops them).
  template <class P, class Panes>
  void evict_before(const P& p, const Panes& panes, std::int64_t x) {
    if (lo_ == kInvalid || x <= lo_) return;
    if (x >= hi_) {
      reset(p, x);
      return;
    }
    if constexpr (kInvertible) {
      panes(lo_, x, [&](std::int64_t, const State& s) {
        p.retract(back_, s);
        --back_n_;
      });
    } else {
      auto& [mid, front, head] = stacks_;
      while (head < front.size() && front[head].first < x) ++head;
      if (head == front.size() && mid < x) flip(p, panes, x);
      else if (head >= 16 && head * 2 >= front.size()) {
        front.erase(front.begin(), front.begin() + static_cast<std::ptrdiff_t>(head));
        head = 0;
      }
    }
    lo_ = x;
  }

  // Moves the range to [lo, hi) and writes the combination of its panes into out;
  // false (out untouched) if it holds no pane. Ranges move forward (the on-time firings
  // of successive windows); anything else rebuilds.
  template <class P, class Panes>
  bool query(const P& p, const Panes& panes, std::int64_t lo, std::int64_t hi, State& out) {
    if (lo_ == kInvalid || lo < lo_ || lo > hi_ || hi < hi_) reset(p, lo);
    else if (lo > lo_) evict_before(p, panes, lo);  // (a cleaning usually evicted them already)
    panes(hi_, hi, [&](std::int64_t, const State& s) {
      if (kInvertible || back_n_ > 0) {
        p.merge(back_, s);
      } else {
        back_ = s;
      }
      ++back_n_;
    });
    hi_ = hi;
    if constexpr (kInvertible) {
      if (back_n_ == 0) return false;
      out = back_;
    } else {
      const bool has_front = stacks_.head < stacks_.front.size();
      if (!has_front && back_n_ == 0) return false;
      out = p.create();
      if (has_front) p.merge(out, stacks_.front[stacks_.head].second);
      if (back_n_ > 0) p.merge(out, back_);
    }
    return true;
  }

 private:
  static constexpr std::int64_t kInvalid = std::numeric_limits<std::int64_t>::min();

  template <class P>
  void reset(const P& p, std::int64_t x) {
    lo_ = hi_ = x;
    if constexpr (!kInvertible) {
      stacks_.mid = x;
      stacks_.front.clear();
      stacks_.head = 0;
    }
    back_ = kInvertible ? p.create() : State{};
    back_n_ = 0;
  }

  // The panes [x, hi) become the front (suffix combinations); the back is empty.
  template <class P, class Panes>
  void flip(const P& p, const Panes& panes, std::int64_t x) {
    auto& [mid, front, head] = stacks_;
    front.clear();
    head = 0;
    panes(x, hi_, [&](std::int64_t i, const State& s) { front.emplace_back(i, s); });
    for (std::size_t k = front.size(); k-- > 1;) p.merge(front[k - 1].second, front[k].second);
    mid = hi_;
    back_ = State{};
    back_n_ = 0;
  }

  // The front stack (two stacks only): suffix combinations of the panes [i, mid), the
  // oldest first; head: the first still in the range. Invertible aggregates need none
  // of it, so their combination stays small (it shares the key's cache lines).
  struct Stacks {
    std::int64_t mid = 0;
    std::vector<std::pair<std::int64_t, State>> front;
    std::size_t head = 0;
  };
  struct NoStacks {};

  std::int64_t lo_ = kInvalid, hi_ = 0;
  State back_{};
  std::uint32_t back_n_ = 0;  // panes combined in back_
  [[no_unique_address]] std::conditional_t<kInvertible, NoStacks, Stacks> stacks_;
};

}  // namespace clink
