// Sliding windows keep, per key, a running combination of their panes
// (pane_combination.hpp): subtract-on-evict for invertible aggregates, two stacks
// otherwise. These tests drive the operator directly with random out-of-order input
// (late records within and beyond the allowed lateness) and require the emissions of
// merging every pane at each firing and of the generic path (state per window), also
// across restores from incremental checkpoints in the middle, on both backends.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "clink/state/keyed_state_backend.hpp"
#include "clink/windows/window_operator.hpp"

#include "../support/checkpoint_support.hpp"
#include "window_checkpoint_support.hpp"

namespace clink::test {
namespace {

struct InvertibleSum final : AggregateFunction<P, std::int64_t, std::int64_t> {
  std::int64_t create_accumulator() const override { return 0; }
  void add(const P& v, std::int64_t& acc) const override { acc += v.second; }
  std::int64_t get_result(const std::int64_t& acc) const override { return acc; }
  void merge(std::int64_t& acc, const std::int64_t& o) const override { acc += o; }
  void retract(std::int64_t& acc, const std::int64_t& o) const { acc -= o; }
};
struct InvertibleCount final : AggregateFunction<P, std::int64_t, std::int64_t> {
  std::int64_t create_accumulator() const override { return 0; }
  void add(const P&, std::int64_t& acc) const override { ++acc; }
  std::int64_t get_result(const std::int64_t& acc) const override { return acc; }
  void merge(std::int64_t& acc, const std::int64_t& o) const override { acc += o; }
  void retract(std::int64_t& acc, const std::int64_t& o) const { acc -= o; }
};
// The same sum without retract(): two stacks.
struct PlainSum final : AggregateFunction<P, std::int64_t, std::int64_t> {
  std::int64_t create_accumulator() const override { return 0; }
  void add(const P& v, std::int64_t& acc) const override { acc += v.second; }
  std::int64_t get_result(const std::int64_t& acc) const override { return acc; }
  void merge(std::int64_t& acc, const std::int64_t& o) const override { acc += o; }
};
struct Min final : AggregateFunction<P, std::int64_t, std::int64_t> {
  std::int64_t create_accumulator() const override { return std::numeric_limits<std::int64_t>::max(); }
  void add(const P& v, std::int64_t& acc) const override { acc = std::min(acc, v.second); }
  std::int64_t get_result(const std::int64_t& acc) const override { return acc; }
  void merge(std::int64_t& acc, const std::int64_t& o) const override { acc = std::min(acc, o); }
};
struct Max final : AggregateFunction<P, std::int64_t, std::int64_t> {
  std::int64_t create_accumulator() const override { return std::numeric_limits<std::int64_t>::min(); }
  void add(const P& v, std::int64_t& acc) const override { acc = std::max(acc, v.second); }
  std::int64_t get_result(const std::int64_t& acc) const override { return acc; }
  void merge(std::int64_t& acc, const std::int64_t& o) const override { acc = std::max(acc, o); }
};
// Associative but not commutative: the values in pane order, "3,-1,4".
struct Sequence final : AggregateFunction<P, std::string, std::string> {
  std::string create_accumulator() const override { return {}; }
  void add(const P& v, std::string& acc) const override {
    if (!acc.empty()) acc += ',';
    acc += std::to_string(v.second);
  }
  std::string get_result(const std::string& acc) const override { return acc; }
  void merge(std::string& acc, const std::string& o) const override {
    if (o.empty()) return;
    if (!acc.empty()) acc += ',';
    acc += o;
  }
};

static_assert(IncrementalPolicy<P, InvertibleSum, EmitResult<std::int64_t>>::kInvertible);
static_assert(!IncrementalPolicy<P, PlainSum, EmitResult<std::int64_t>>::kInvertible);
static_assert(!IncrementalPolicy<P, Sequence, EmitResult<std::string>>::kInvertible);

struct Shape {
  std::int64_t size, slide, offset, lateness;
};
const Shape kShapes[] = {{30, 10, 0, 0}, {30, 10, 0, 25}, {40, 10, 3, 12}, {25, 5, 0, 0}, {60, 15, -7, 40}, {20, 8, 0, 10}};

WindowConfig<P> sliding(const Shape& s, bool slicing, bool combine_all) {
  WindowConfig<P> cfg;
  cfg.assigner = std::make_shared<SlidingEventTimeWindows>(s.size, s.slide, s.offset);
  cfg.allowed_lateness = s.lateness;
  cfg.allow_slicing = slicing;
  cfg.combine_all_panes = combine_all;
  return cfg;
}

// The running combination (sliced), merging all panes at each firing (sliced) and the
// generic path emit exactly the same, pane by pane, in order.
template <class Agg>
void expect_same_as_merging_all_panes() {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const Script script = random_script(seed, 90, 14);
    for (const Shape& s : kShapes) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " window " + std::to_string(s.size) + "/" +
                   std::to_string(s.slide) + " offset " + std::to_string(s.offset) + " lateness " +
                   std::to_string(s.lateness));
      Harness<Agg> incremental(sliding(s, true, false));
      ASSERT_TRUE(incremental.op().sliced());
      const auto expected = Harness<Agg>::run(script, sliding(s, true, true));
      ASSERT_GT(expected.size(), 100u);
      EXPECT_EQ(incremental.run_all(script), expected);
      // The generic path folds records in arrival order, panes combine in pane order:
      // the same for a commutative aggregate only.
      if constexpr (!std::is_same_v<Agg, Sequence>) {
        EXPECT_EQ(Harness<Agg>::run(script, sliding(s, false, false)), expected);
      }
      // Late records re-fired windows (LATE panes) in these runs.
      if (s.lateness > 0) {
        EXPECT_NE(std::find_if(expected.begin(), expected.end(),
                               [](const std::string& e) { return e.find("LATE") != std::string::npos; }),
                  expected.end());
      }
    }
  }
}

TEST(SlidingPaneCombination, InvertibleSumEqualsMergingAllPanes) { expect_same_as_merging_all_panes<InvertibleSum>(); }
TEST(SlidingPaneCombination, InvertibleCountEqualsMergingAllPanes) { expect_same_as_merging_all_panes<InvertibleCount>(); }
TEST(SlidingPaneCombination, TwoStacksSumEqualsMergingAllPanes) { expect_same_as_merging_all_panes<PlainSum>(); }
TEST(SlidingPaneCombination, TwoStacksMinEqualsMergingAllPanes) { expect_same_as_merging_all_panes<Min>(); }
TEST(SlidingPaneCombination, TwoStacksMaxEqualsMergingAllPanes) { expect_same_as_merging_all_panes<Max>(); }
TEST(SlidingPaneCombination, TwoStacksNonCommutativeMergeKeepsPaneOrder) {
  expect_same_as_merging_all_panes<Sequence>();
}

// Hundreds of keys fire per window (the sliced path then radix-sorts a firing's integral
// keys), keys over the whole int64 range, negative ones included, so every byte of the
// key decides the order somewhere: the emissions, in order, are the generic path's
// (per-key timers ordered by key bytes) and merging every pane's.
TEST(SlidingPaneCombination, ManyKeysFireInKeyOrder) {
  Script script = random_script(5, 60, 3000);
  std::uint64_t x = 12345;
  for (Step& st : script)
    for (Record<P>& r : st.records) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      const auto k = static_cast<std::int64_t>((x >> 33) % 700);
      // 700 keys, spread over all 8 bytes; one in four small (only the low bytes differ).
      r.value.first = k % 4 == 0 ? k - 350 : static_cast<std::int64_t>(static_cast<std::uint64_t>(k) * 0x9E3779B97F4A7C15ull);
    }
  for (const Shape& s : {Shape{30, 10, 0, 0}, Shape{40, 10, 3, 12}}) {
    SCOPED_TRACE("window " + std::to_string(s.size) + "/" + std::to_string(s.slide));
    const auto expected = Harness<InvertibleSum>::run(script, sliding(s, false, false));
    ASSERT_GT(expected.size(), 20000u);
    EXPECT_EQ(Harness<InvertibleSum>::run(script, sliding(s, true, false)), expected);
    EXPECT_EQ(Harness<InvertibleSum>::run(script, sliding(s, true, true)), expected);
    EXPECT_EQ(Harness<Min>::run(script, sliding(s, true, false)), Harness<Min>::run(script, sliding(s, false, false)));
  }
}

// A firing visits the keys of its window either through the window's key list (a hash
// lookup per key) or, when the list names most of the table, by scanning the table. Keys
// spread over time and far ahead of the watermark make the early windows hold few of
// the table's keys (lists), the last ones most (scans); late records re-fire windows.
// Both ways emit what the generic path emits, pane by pane.
TEST(SlidingPaneCombination, ListedAndScannedFiringsEmitTheSame) {
  Script script;
  Step first;
  for (std::int64_t k = 0; k < 400; ++k)
    for (std::int64_t d : {0, 5, 17}) first.records.push_back(Record<P>{P{k, k % 7 - d}, k * 3 + d});
  first.watermark = -100;
  script.push_back(std::move(first));
  for (std::int64_t t = 0; t <= 1300; t += 20) {
    Step st;
    for (std::int64_t k = 1000; k < 1010; ++k) {  // keys in every window
      st.records.push_back(Record<P>{P{k, t % 13}, t + k % 20});
      st.records.push_back(Record<P>{P{k, 1}, t - 25});  // late for the watermark below
    }
    st.watermark = t;
    script.push_back(std::move(st));
  }
  for (const Shape& s : {Shape{30, 10, 0, 0}, Shape{30, 10, 0, 25}, Shape{40, 8, 3, 12}}) {
    SCOPED_TRACE("window " + std::to_string(s.size) + "/" + std::to_string(s.slide) + " lateness " +
                 std::to_string(s.lateness));
    const auto expected = Harness<InvertibleSum>::run(script, sliding(s, false, false));
    ASSERT_GT(expected.size(), 2000u);
    EXPECT_EQ(Harness<InvertibleSum>::run(script, sliding(s, true, false)), expected);
    EXPECT_EQ(Harness<InvertibleSum>::run(script, sliding(s, true, true)), expected);
    EXPECT_EQ(Harness<Min>::run(script, sliding(s, true, false)), Harness<Min>::run(script, sliding(s, false, false)));
  }
}

// Restores in the middle, after several incremental checkpoints: the restored operator
// rebuilds the running combinations and emits exactly what the uninterrupted one emits;
// and the backend written incrementally holds exactly what one full write holds.
class PaneCombinationRestore : public ::testing::TestWithParam<std::string> {
 protected:
  template <class Agg>
  void check() {
    for (std::uint64_t seed : {7u, 8u}) {
      const Script script = random_script(seed, 80, 14);
      for (const Shape& s : kShapes) {
        SCOPED_TRACE("seed " + std::to_string(seed) + " window " + std::to_string(s.size) + "/" +
                     std::to_string(s.slide) + " lateness " + std::to_string(s.lateness));
        const auto expected = Harness<Agg>::run(script, sliding(s, true, true));
        TempDir dir;
        Harness<Agg> first(sliding(s, true, false), backend_config(dir.path / "a"));
        std::vector<std::string> out;
        std::optional<Checkpoint> last;
        // Checkpoints after steps 4, 13, 22, 31, 40; a failure after step 44 restores the
        // last one and replays from step 41 (what the first run emitted after it is lost,
        // as an exactly-once sink discards it).
        for (std::size_t i = 0; i <= 44; ++i) {
          first.step(script[i]);
          if (i % 9 == 4) last = first.checkpoint(dir.path / "chk", static_cast<std::int64_t>(i));
        }
        ASSERT_TRUE(last);
        ASSERT_EQ(last->id, 40);
        Harness<Agg> second(sliding(s, true, false), backend_config(dir.path / "b"), &*last);
        std::size_t from = static_cast<std::size_t>(last->id) + 1;
        auto before = first.emitted();
        before.resize(std::min(before.size(), first.emitted_at(from)));
        out = before;
        for (std::size_t i = from; i < script.size(); ++i) {
          second.step(script[i]);
          if (i % 9 == 4) second.checkpoint(dir.path / "chk2", static_cast<std::int64_t>(i));
        }
        second.finish();
        const auto& rest = second.emitted();
        out.insert(out.end(), rest.begin(), rest.end());
        EXPECT_EQ(out, expected);

        // Incremental writes == one full write of the same state.
        Harness<Agg> full(sliding(s, true, false), backend_config(dir.path / "c"));
        for (std::size_t i = 0; i <= static_cast<std::size_t>(last->id); ++i) full.step(script[i]);
        full.op().snapshot_state(1);
        EXPECT_EQ(full.backend_entries(), last->entries);
      }
    }
  }
  StateBackendConfig backend_config(const std::filesystem::path& dir) const {
    StateBackendConfig c;
    c.kind = GetParam();
    c.working_dir = dir;
    return c;
  }
};
INSTANTIATE_TEST_SUITE_P(Backends, PaneCombinationRestore, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

TEST_P(PaneCombinationRestore, InvertibleSum) { check<InvertibleSum>(); }
TEST_P(PaneCombinationRestore, TwoStacksSequence) { check<Sequence>(); }

}  // namespace
}  // namespace clink::test
