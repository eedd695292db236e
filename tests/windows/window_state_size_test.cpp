// What a checkpoint of window state costs: the serialised bytes (key + namespace +
// value, as the keyed state backend stores them) per (key, window) pane of a COUNT
// keyed by int64, on the sliced and the generic path; and a snapshot / restore round
// trip of the operator by itself.
#include <gtest/gtest.h>

#include <iostream>

#include "clink/state/keyed_state_backend.hpp"
#include "clink/windows/window_operator.hpp"
#include "window_test_support.hpp"

namespace clink::test {
namespace {

using P = std::pair<std::int64_t, std::int64_t>;
struct FirstOf {
  std::int64_t operator()(const P& p) const { return p.first; }
};
struct Count final : AggregateFunction<P, std::int64_t, std::int64_t> {
  std::int64_t create_accumulator() const override { return 0; }
  void add(const P&, std::int64_t& acc) const override { ++acc; }
  std::int64_t get_result(const std::int64_t& acc) const override { return acc; }
  void merge(std::int64_t& acc, const std::int64_t& o) const override { acc += o; }
};
using Policy = IncrementalPolicy<P, Count, EmitResult<std::int64_t>>;
using Op = WindowOperator<std::int64_t, P, FirstOf, Policy>;

struct NullOutput final : Output {
  void emit(BatchPtr) override {}
  void emit_watermark(Watermark) override {}
  void emit_side(const std::string&, BatchPtr) override {}
};

TEST(WindowStateSize, CountKeyedByInt64BytesPerPane) {
  constexpr std::int64_t kKeys = 10000, kPerKey = 100;
  for (bool slicing : {true, false}) {
    NullOutput out;
    RuntimeContext ctx("w", "w", 0, 1, 128, &out, std::make_shared<OperatorMetrics>(), SystemClock::instance());
    ctx.set_keyed_state_backend(
        make_keyed_state_backend(StateBackendConfig{}, "w", 0, ctx.key_groups(), 128, SystemClock::instance()));
    WindowConfig<P> cfg;
    cfg.assigner = WindowAssignerPtr(TumblingEventTimeWindows::of(60000).clone());
    cfg.allow_slicing = slicing;
    Op op(cfg, FirstOf{}, Policy(Count{}, {}));
    ASSERT_EQ(op.sliced(), slicing);
    op.open(ctx);
    auto batch = std::make_unique<Batch<P>>();
    // Realistic keys (ids up to 2^40) and times (epoch milliseconds).
    const std::int64_t t0 = 1'764'000'000'000;
    for (std::int64_t k = 0; k < kKeys; ++k)
      for (std::int64_t i = 0; i < kPerKey; ++i) batch->records.push_back(Record<P>{{k * 1'000'003, i}, t0 + i});
    op.process_batch(0, std::move(batch));
    op.process_watermark(Watermark{t0 - 1, false});
    op.snapshot_state(1);
    KeyedStateBackend& b = *ctx.keyed_state_backend();
    std::size_t total = 0, entries = 0;
    std::string per_state;
    for (const char* name : {"window-contents", "trigger-state", "merging-windows", "window-panes", "window-keys"}) {
      StateId id = b.register_state(name, StateKind::kValue);
      std::size_t bytes = 0, n = 0;
      for (int kg = b.key_groups().first; kg <= b.key_groups().last; ++kg)
        b.for_each_entry(id, kg, [&](std::string_view k, std::string_view ns, std::string_view v) {
          bytes += k.size() + ns.size() + v.size();
          ++n;
        });
      total += bytes;
      entries += n;
      if (n) per_state += std::string(" ") + name + ": " + std::to_string(n) + " entries, " + std::to_string(bytes) + " bytes;";
    }
    const double per_pane = static_cast<double>(total) / kKeys;
    std::cout << (slicing ? "sliced" : "generic") << " path: " << per_pane << " bytes per (key, window) pane;"
              << per_state << "\n";
    EXPECT_LE(per_pane, 32.0) << (slicing ? "sliced" : "generic");
    op.close();
  }
}

}  // namespace
}  // namespace clink::test
