#pragma once
// Operator-level window test harness: drives a WindowOperator keyed by int64 directly
// (batches, watermarks), takes checkpoints of its keyed state backend (memory or
// RocksDB) and restores a new operator from them; and a backend that counts the writes
// reaching it (incremental checkpoints).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "clink/state/keyed_state_backend.hpp"
#include "clink/windows/window_operator.hpp"

namespace clink::test {

using P = std::pair<std::int64_t, std::int64_t>;  // key, value
struct FirstOf {
  std::int64_t operator()(const P& p) const { return p.first; }
};

struct Step {
  std::vector<Record<P>> records;
  EventTime watermark;
};
using Script = std::vector<Step>;

// `steps` steps of `per_step` records over 12 keys; time advances 7 per step, records
// are up to 40 behind (some late for the watermark, some beyond any lateness); the
// watermark after step s is 7 s - 10.
inline Script random_script(std::uint64_t seed, int steps, int per_step) {
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  auto next = [&x] {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x >> 33;
  };
  Script script;
  for (int s = 0; s < steps; ++s) {
    Step st;
    for (int i = 0; i < per_step; ++i) {
      const auto key = static_cast<std::int64_t>(next() % 12);
      const auto value = static_cast<std::int64_t>(next() % 101) - 50;
      const EventTime t = 7 * s + static_cast<EventTime>(next() % 48) - 40;
      st.records.push_back(Record<P>{P{key, value}, t});
    }
    st.watermark = 7 * s - 10;
    script.push_back(std::move(st));
  }
  return script;
}

// Forwards to a real backend and counts the writes (put, append, remove, map writes).
class CountingBackend final : public KeyedStateBackend {
 public:
  explicit CountingBackend(std::unique_ptr<KeyedStateBackend> inner)
      : KeyedStateBackend(inner->key_groups(), inner->max_parallelism(), inner->clock()), inner_(std::move(inner)) {}
  std::int64_t puts = 0, removes = 0;

  StateId register_state(const std::string& name, StateKind kind, std::int64_t ttl_ms) override {
    return inner_->register_state(name, kind, ttl_ms);
  }
  bool get(StateId id, std::string& out) override { return sync().get(id, out); }
  void put(StateId id, std::string_view value) override {
    ++puts;
    sync().put(id, value);
  }
  void append(StateId id, std::string_view bytes) override {
    ++puts;
    sync().append(id, bytes);
  }
  void remove(StateId id) override {
    ++removes;
    sync().remove(id);
  }
  bool map_get(StateId id, std::string_view uk, std::string& out) override { return sync().map_get(id, uk, out); }
  void map_put(StateId id, std::string_view uk, std::string_view v) override {
    ++puts;
    sync().map_put(id, uk, v);
  }
  void map_remove(StateId id, std::string_view uk) override {
    ++removes;
    sync().map_remove(id, uk);
  }
  void map_for_each(StateId id, const std::function<bool(std::string_view, std::string_view)>& fn) override {
    sync().map_for_each(id, fn);
  }
  void map_clear(StateId id) override {
    ++removes;
    sync().map_clear(id);
  }
  void for_each_entry(StateId id, int kg,
                      const std::function<void(std::string_view, std::string_view, std::string_view)>& fn) override {
    inner_->for_each_entry(id, kg, fn);
  }
  KeyedStateHandle snapshot(std::int64_t id, const std::filesystem::path& dir) override {
    return inner_->snapshot(id, dir);
  }
  void restore(const std::vector<KeyedStateHandle>& handles) override { inner_->restore(handles); }
  void notify_checkpoint_complete(std::int64_t id) override { inner_->notify_checkpoint_complete(id); }
  void reset_counts() { puts = removes = 0; }

 private:
  KeyedStateBackend& sync() {
    inner_->set_current_key(current_key(), current_key_group());
    inner_->set_current_namespace(current_namespace());
    return *inner_;
  }
  std::unique_ptr<KeyedStateBackend> inner_;
};

inline constexpr const char* kWindowStates[] = {"window-contents", "trigger-state", "merging-windows", "window-panes",
                                                "window-keys"};

// Every entry of the window states: "state key-bytes ns-bytes" -> value. The watermark
// a window-keys entry records (when its key last changed) is left out: an incremental
// checkpoint keeps the one of the key's last change, a full write the current one;
// both restore the same windows.
inline std::map<std::string, std::string> window_entries(KeyedStateBackend& b) {
  std::map<std::string, std::string> all;
  for (const char* name : kWindowStates) {
    const StateId id = b.register_state(name, StateKind::kValue);
    for (int kg = b.key_groups().first; kg <= b.key_groups().last; ++kg)
      b.for_each_entry(id, kg, [&](std::string_view k, std::string_view ns, std::string_view v) {
        std::string value(v);
        if (std::string_view(name) == "window-keys" && !value.empty() && !(value[0] & 1)) {
          std::size_t n = 1;
          while (n < value.size() && (static_cast<unsigned char>(value[n]) & 0x80)) ++n;
          value.erase(1, n);  // the zig-zag varint after the flags
        }
        all.emplace(std::string(name) + " " + std::string(k) + " " + std::string(ns), std::move(value));
      });
  }
  return all;
}

struct Checkpoint {
  std::int64_t id = 0;
  KeyedStateHandle handle;
  OperatorStateStore operator_state;
  std::map<std::string, std::string> entries;
};

class CollectingOutput final : public Output {
 public:
  explicit CollectingOutput(std::function<void(BatchBase&)> on_batch) : on_batch_(std::move(on_batch)) {}
  void emit(BatchPtr batch) override { on_batch_(*batch); }
  void emit_watermark(Watermark) override {}
  void emit_side(const std::string&, BatchPtr) override {}

 private:
  std::function<void(BatchBase&)> on_batch_;
};

// One window operator (keyed by int64, COUNT / SUM / ... per window) with its context,
// backend and emissions as "key [start,end) value PANE @time".
template <class Agg>
class Harness {
 public:
  using R = typename Agg::output_type;
  using Policy = IncrementalPolicy<P, Agg, EmitWindowResult<std::int64_t, R>>;
  using Op = WindowOperator<std::int64_t, P, FirstOf, Policy>;
  static constexpr int kMaxParallelism = 128;

  explicit Harness(WindowConfig<P> cfg, std::optional<StateBackendConfig> backend = std::nullopt,
                   const Checkpoint* restore = nullptr)
      : out_([this](BatchBase& b) { collect(b); }),
        ctx_("w", "w", 0, 1, kMaxParallelism, &out_, std::make_shared<OperatorMetrics>(), SystemClock::instance()),
        op_(cfg, FirstOf{}, Policy(Agg{}, {})) {
    if (backend) {
      auto counting = std::make_unique<CountingBackend>(make_keyed_state_backend(
          *backend, "w", 0, ctx_.key_groups(), kMaxParallelism, SystemClock::instance()));
      backend_ = counting.get();
      if (restore) {
        counting->restore({restore->handle});
        ctx_.set_operator_state(restore->operator_state);
        ctx_.set_restored(true);
      }
      ctx_.set_keyed_state_backend(std::move(counting));
    }
    op_.open(ctx_);
  }
  ~Harness() { op_.close(); }

  Op& op() { return op_; }
  CountingBackend& backend() { return *backend_; }
  void step(const Step& s) {
    auto batch = std::make_unique<Batch<P>>();
    batch->records = s.records;
    op_.process_batch(0, std::move(batch));
    op_.process_watermark(Watermark{s.watermark, false});
    marks_.push_back(emitted_.size());
  }
  void finish() { op_.process_watermark(Watermark::max()); }
  // A checkpoint: the operator writes its changes, the backend snapshots.
  Checkpoint checkpoint(const std::filesystem::path& root, std::int64_t id) {
    Checkpoint c;
    c.id = id;
    op_.snapshot_state(id);
    c.handle = backend_->snapshot(id, root / ("chk-" + std::to_string(id)));
    backend_->notify_checkpoint_complete(id);
    c.operator_state = ctx_.operator_state();
    c.entries = window_entries(*backend_);
    return c;
  }
  std::map<std::string, std::string> backend_entries() { return window_entries(*backend_); }
  const std::vector<std::string>& emitted() const { return emitted_; }
  // How many emissions the steps before `step` made.
  std::size_t emitted_at(std::size_t step) const { return step == 0 ? 0 : marks_.at(step - 1); }

  std::vector<std::string> run_all(const Script& script) {
    for (const Step& s : script) step(s);
    finish();
    return emitted_;
  }
  static std::vector<std::string> run(const Script& script, WindowConfig<P> cfg) {
    Harness h(std::move(cfg));
    return h.run_all(script);
  }

 private:
  void collect(BatchBase& b) {
    for (const auto& r : batch_cast<WindowResult<std::int64_t, R>>(b).records) {
      std::string s = std::to_string(r.value.key) + " ";
      to_string_into(r.value.window, s);
      if constexpr (std::is_same_v<R, std::string>) s += " " + r.value.value + " ";
      else s += " " + std::to_string(r.value.value) + " ";
      to_string_into(r.value.pane, s);
      s += " @" + std::to_string(r.event_time);
      emitted_.push_back(std::move(s));
    }
  }

  CollectingOutput out_;
  RuntimeContext ctx_;
  Op op_;
  CountingBackend* backend_ = nullptr;
  std::vector<std::string> emitted_;
  std::vector<std::size_t> marks_;
};

}  // namespace clink::test
