#pragma once
// The window engine: one keyed operator for every window kind (Flink's WindowOperator
// and EvictingWindowOperator), generic over the key type K, the input type and a
// window policy (what a window keeps and what firing emits; window_functions.hpp).
// The SQL window operators instantiate it with encoded keys and compiled aggregates.
//
// Rules (SEMANTICS.md). A window fires when the trigger says so (default: the
// watermark passes its max timestamp end - 1) and is cleaned when the watermark passes
// end - 1 + allowed lateness L. An element whose windows were all cleaned and with
// t + L <= W goes to the late side output if one is set, else it is dropped and
// numLateRecordsDropped grows; an element reaching a window between the two deadlines
// fires it again at once with the complete result (a LATE pane). Every emission
// carries a PaneInfo and the window's max timestamp as event time.
//
// Three execution paths, one set of rules (the tests run each case through the
// generic path and the sliced one and expect the same emissions):
//  - generic: state per (key, window), Flink's algorithm with any trigger, per-key
//    timers in the TimerService (key bytes, namespace = encoded window);
//  - merging (sessions): as generic, plus a MergingWindowSet per key;
//  - sliced: aligned event-time windows (tumbling, sliding) with an incremental
//    function and the default trigger. Each element updates one pane of
//    gcd(size, slide); a sliding window keeps per key a running combination of its
//    panes (pane_combination.hpp), so neither an element nor a firing costs more
//    with size / slide. One timer per window (empty key) fires every key
//    that has panes in it; results are ordered by key bytes, as the per-key timers of
//    the generic path order them.
//
// State lives in typed in-memory tables (the hot path); a checkpoint writes what
// changed since the previous one into the operator's keyed state backend and a restore
// reads the tables back (see "durability" at the end of the class).
#include <algorithm>
#include <bit>
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include "clink/api/operators.hpp"
#include "clink/core/chunked_vector.hpp"
#include "clink/core/error.hpp"
#include "clink/core/huge_page_allocator.hpp"
#include "clink/core/linear_probe_map.hpp"
#include "clink/core/output_tag.hpp"
#include "clink/core/prefetch.hpp"
#include "clink/runtime/lateness.hpp"
#include "clink/state/keyed_state_backend.hpp"
#include "clink/state/state_codec.hpp"
#include "clink/time/window_arithmetic.hpp"
#include "clink/windows/merging_window_set.hpp"
#include "clink/windows/slice_list.hpp"
#include "clink/windows/time_window.hpp"
#include "clink/windows/window_assigners.hpp"
#include "clink/windows/window_functions.hpp"
#include "clink/windows/window_operator_detail.hpp"
#include "clink/windows/window_trigger.hpp"
#include "clink/windows/pane_combination.hpp"

namespace clink {

// How a window operator is configured (everything but the key selector and policy).
template <class In>
struct WindowConfig {
  WindowAssignerPtr assigner;
  std::function<std::int64_t(const In&)> dynamic_gap;  // dynamic session gaps
  TriggerPtr trigger;                                  // null: the assigner's default
  std::int64_t allowed_lateness = 0;
  std::optional<OutputTag<In>> late_data_tag;
  bool allow_slicing = true;  // false forces the generic path (tests compare the two)
  // true: a sliced sliding window's firing merges all its panes instead of updating the
  // key's running combination (pane_combination.hpp); tests compare the two.
  bool combine_all_panes = false;
};

template <class K, class In, class KeyFn, class Policy>
class WindowOperator final : public FunctionOperatorBase<typename Policy::Out> {
 public:
  using Out = typename Policy::Out;
  using State = typename Policy::State;
  using Base = FunctionOperatorBase<Out>;

  WindowOperator(WindowConfig<In> config, KeyFn key_fn, Policy policy)
      : config_(std::move(config)), key_fn_(std::move(key_fn)), policy_(std::move(policy)) {
    if (!config_.assigner) throw ClinkError("window: no window assigner");
    if (config_.allowed_lateness < 0)
      throw ClinkError("window: allowed lateness must be >= 0, got " + std::to_string(config_.allowed_lateness));
    assigner_ = config_.assigner->clone();
    trigger_ = config_.trigger ? config_.trigger : assigner_->default_trigger();
    event_time_ = assigner_->is_event_time();
    merging_ = assigner_->is_merging();
    if (merging_ && !trigger_->can_merge())
      throw ClinkError("window: trigger " + trigger_->describe() + " cannot be used with merging windows (" +
                       assigner_->describe() + ")");
    lateness_ = event_time_ ? config_.allowed_lateness : 0;
    auto spec = assigner_->slicing();
    if (spec && config_.allow_slicing && Policy::kIncremental && !config_.dynamic_gap &&
        dynamic_cast<const EventTimeTrigger*>(trigger_.get()) != nullptr) {
      sliced_ = true;
      size_ = spec->size;
      offset_ = spec->offset;
      g_ = gcd_i64(spec->size, spec->slide);
      n_ = spec->size / g_;
      m_ = spec->slide / g_;
      // A sliding window's key keeps n + 1 panes (n - 1 older ones while the newest
      // fills, more with allowed lateness): up to 64, its ring grows there at once.
      if (n_ > 1) ring_steady_ = std::bit_ceil(static_cast<std::size_t>(std::min<std::int64_t>(n_ + 1, 64)));
      j_safe_lo_ = kSafeLo / g_;
      j_safe_hi_ = kSafeHi / g_;
    }
  }

  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    wctx_ = std::make_unique<WindowContext>(ctx, this->sides_);
    policy_.open(ctx);
    if (ctx.is_restored()) restore_state();
  }
  void close() override { policy_.close(); }

  void process_batch(int, BatchPtr batch) override {
    this->begin_call();
    auto& recs = batch_cast<In>(*batch).records;
    if (event_time_) drop_late_for_channel(recs);
    if (sliced_) {
      sliced_batch(recs);
    } else {
      batch_now_ = now();  // processing-time assigners and staggers: once per batch
      for (const auto& r : recs) {
        if (event_time_ && r.event_time == kNoEventTime) fail_no_event_time();
        if (merging_) merging_element(r);
        else generic_element(r);
      }
    }
    this->flush_output();
  }

  void process_watermark(Watermark wm) override {
    if (!wm.idle) {
      this->begin_call();
      this->ctx().timer_service().advance_watermark(wm.timestamp, [this](const Timer& t) { on_timer(t, true); });
      this->flush_output();
    }
    this->output().emit_watermark(wm);
  }
  void process_processing_time(std::int64_t now) override {
    this->begin_call();
    this->ctx().timer_service().advance_processing_time(now, [this](const Timer& t) { on_timer(t, false); });
    this->flush_output();
  }

  // Writes the window tables into the keyed state backend (see "durability" below).
  void snapshot_state(std::int64_t) override { write_state(); }

  // Introspection (tests, explain).
  bool sliced() const { return sliced_; }
  std::size_t window_state_count() const { return sliced_ ? wkeys_.size() : table_.size(); }
  // Changes waiting for the next checkpoint (listed entries and keys, removals).
  std::size_t pending_changes() const {
    return dirty_entries_.size() + removed_entries_.size() + trigger_dirty_.size() + merging_dirty_.size() +
           dirty_keys_.size() + removed_keys_.size() + removed_panes_.size();
  }

 private:
  using WKey = std::pair<K, TimeWindow>;
  using PaneStats = window_detail::PaneStats;
  struct Entry {
    State state{};
    bool has_contents = false;
    std::uint8_t ck = 0;  // checkpoint flags: kListed, kStored
    PaneStats stats;
    window_detail::TimerCache cache;
  };
  // Checkpoint bookkeeping flags (generic entries and sliced keys): what changed since
  // the last checkpoint and what the keyed state backend already holds.
  enum : std::uint8_t {
    kListed = 1,     // in the list of changed entries / keys
    kStored = 2,     // generic entry: the backend holds it
    kHotDirty = 4,   // sliced key: its newest pane changed
    kKeyDirty = 8,   // sliced key: its side data (window-keys entry) changed
    kHotStored = 16,  // sliced key: the backend holds its newest pane
    kKeyStored = 32,  // sliced key: the backend holds its window-keys entry
    kHotSpilled = 64  // sliced key: its newest pane (hot_idx) is in the older panes, hot unused
  };

  class Ctx;  // the trigger context (window_operator_generic.hpp)

  TimerService& timers() { return this->ctx().timer_service(); }
  EventTime watermark() { return timers().current_watermark(); }
  std::int64_t now() { return timers().current_processing_time(); }
  const std::string& key_bytes(const K& key) {
    if (!key_bytes_valid_) {
      key_bytes_.clear();
      KeyCodec<K>::encode(key, key_bytes_);
      key_bytes_valid_ = true;
    }
    return key_bytes_;
  }

  std::int64_t cleanup_time(const TimeWindow& w) const {
    return event_time_ ? sat_add(w.max_timestamp(), lateness_) : w.max_timestamp();
  }
  bool window_late(const TimeWindow& w) { return event_time_ && cleanup_time(w) <= watermark(); }
  // Time has reached the window's cleanup: this firing is its last (is_last).
  bool past_cleanup(const TimeWindow& w) { return (event_time_ ? watermark() : now()) >= cleanup_time(w); }
  bool element_late(EventTime ts) { return event_time_ && sat_add(ts, lateness_) <= watermark(); }

  void assign(const Record<In>& r, std::vector<TimeWindow>& out) {
    if (config_.dynamic_gap) {
      std::int64_t gap = config_.dynamic_gap(r.value);
      if (gap <= 0) throw ClinkError("window: a dynamic session gap must be positive, got " + std::to_string(gap));
      EventTime t = event_time_ ? r.event_time : batch_now_;
      out.push_back(TimeWindow{t, sat_add(t, gap)});
    } else {
      assigner_->assign(r.event_time, batch_now_, out);
    }
  }

  [[noreturn]] void fail_no_event_time() {
    throw ClinkError("window: record has no event time (INT64_MIN, the no-timestamp marker) for the event-time "
                     "assigner " + assigner_->describe() +
                     "; is it meant to be a processing-time window, or did you forget to call "
                     "assign_timestamps_and_watermarks(...)?");
  }

  // A record every window of which its channel's watermark passed is late, even where
  // this operator's own watermark (the minimum over its channels) is still behind
  // (runtime/lateness.hpp). Its windows that fired are late for every channel anyway.
  void drop_late_for_channel(std::vector<Record<In>>& recs) {
    const EventTime late_at = lateness_watermark(this->ctx());
    if (late_at <= watermark()) return;  // one channel, or this one not ahead: the engine decides
    std::size_t kept = 0;
    for (std::size_t i = 0; i < recs.size(); ++i) {
      Record<In>& r = recs[i];
      if (r.event_time != kNoEventTime && sat_add(r.event_time, lateness_) <= late_at && windows_late_at(r, late_at)) {
        late_element(r);
        continue;
      }
      if (kept != i) recs[kept] = std::move(r);
      ++kept;
    }
    recs.resize(kept);
  }
  // Whether every window `r` would count in is cleaned at `late_at`. A session's window is
  // the merge with the key's sessions it touches: late only if each of them is too (the
  // channel being ahead, those would have fired and gone).
  bool windows_late_at(const Record<In>& r, EventTime late_at) {
    windows_.clear();
    assign(r, windows_);
    auto late = [&](const TimeWindow& w) { return cleanup_time(w) <= late_at; };
    if (!std::all_of(windows_.begin(), windows_.end(), late)) return false;
    if (!merging_) return true;
    auto set = merging_sets_.find(key_fn_(r.value));
    if (set == merging_sets_.end()) return true;
    for (const TimeWindow& own : windows_)
      for (const auto& [w, state_window] : set->second.mapping())
        if (w.intersects(own) && !late(w)) return false;
    return true;
  }

  void late_element(const Record<In>& r) {
    if (config_.late_data_tag) this->sides_.add(*config_.late_data_tag, r.value, r.event_time);
    else this->ctx().metrics().late_records_dropped.fetch_add(1, std::memory_order_relaxed);
  }

  // ---- emission ----
  PaneInfo next_pane(PaneStats& s, const TimeWindow& w, bool from_timer, bool is_last) {
    std::int64_t time = event_time_ ? watermark() : now();
    PaneTiming timing;
    if (time < w.max_timestamp()) {
      timing = PaneTiming::kEarly;
    } else if (from_timer && !s.on_time_done) {
      timing = PaneTiming::kOnTime;
      s.on_time_done = true;
    } else {
      timing = PaneTiming::kLate;
      s.on_time_done = true;
    }
    PaneInfo p{.index = s.emissions, .timing = timing, .is_first = s.emissions == 0, .is_last = is_last};
    ++s.emissions;
    return p;
  }
  void emit_state(const K& key, const TimeWindow& w, State& state, PaneInfo pane) {
    wctx_->set(w, pane);
    this->collector_.set_timestamp(w.max_timestamp());
    fire_state(key, w, state);
  }
  // The policy's output for one key of the window the context is set to; a full batch
  // goes out (the next one keeps the window's timestamp).
  void fire_state(const K& key, const TimeWindow& w, State& state) {
    policy_.fire(key, state, *wctx_, this->collector_);
    if (this->out_->records.size() >= kDefaultBatchSize) {
      this->output().emit(std::move(this->out_));
      this->begin_call();
      this->collector_.set_timestamp(w.max_timestamp());
    }
  }
  // The results of one firing of window w for many keys, all with the same pane (a
  // sliced window's on-time firing), in `order` (positions in results): the context and
  // the timestamp are set once.
  void emit_states(const TimeWindow& w, PaneInfo pane, std::vector<std::pair<K, State>>& results,
                   const std::vector<std::uint32_t>& order) {
    wctx_->set(w, pane);
    this->collector_.set_timestamp(w.max_timestamp());
    constexpr std::size_t kAhead = 16;  // the order jumps about in results
    const std::size_t n = order.size();
    for (std::size_t r = 0; r < n; ++r) {
      if (r + kAhead < n) clink::prefetch(&results[order[r + kAhead]]);
      auto& [key, state] = results[order[r]];
      fire_state(key, w, state);
    }
  }
  void emit(const K& key, const TimeWindow& w, Entry& e, bool from_timer, bool is_last) {
    if (!e.has_contents) return;
    emit_state(key, w, e.state, next_pane(e.stats, w, from_timer, is_last));
    if constexpr (!Policy::kIncremental) e.has_contents = !policy_.empty(e.state);
  }
  void purge(Entry& e) {
    e.state = policy_.create();
    e.has_contents = false;
  }

  // ---- generic and merging paths ----
  Entry& entry(const K& key, const TimeWindow& w) {
    auto [it, created] = table_.try_emplace(WKey{key, w});
    if (created) it->second.state = policy_.create();
    return it->second;
  }
  Entry* find(const K& key, const TimeWindow& w) {
    auto it = table_.find(WKey{key, w});
    return it == table_.end() ? nullptr : &it->second;
  }
  // The entry changed: the next checkpoint writes it.
  void touch(const K& key, const TimeWindow& w, Entry& e) {
    if (e.ck & kListed) return;
    e.ck |= kListed;
    dirty_entries_.push_back(WKey{key, w});
    if (dirty_entries_.size() > 2 * table_.size() + 4096) compact_change_lists();
  }
  void erase_entry(typename absl::flat_hash_map<WKey, Entry>::iterator it) {
    if (it->second.ck & kStored) removed_entries_.push_back(it->first);
    table_.erase(it);
  }
  // Generic and merging paths: window_operator_generic.hpp.
  void register_cleanup_timer(const K& key, const TimeWindow& w, Entry* e);
  void delete_cleanup_timer(const K& key, const TimeWindow& w);
  void generic_element(const Record<In>& r);
  void merging_element(const Record<In>& r);
  // The state of the merged-away state windows, in order, appended to the target's.
  void merge_states(const K& key, const TimeWindow& target, const std::vector<TimeWindow>& sources);
  void on_timer(const Timer& t, bool event);
  void clear_all_state(const K& key, const TimeWindow& w, const TimeWindow& state_window);

  // ---- sliced path ----
  // Per key, in the hash map: its newest pane (one 32-byte slot for int64 keys and
  // counts). The rest in a side vector: older panes, what the key registered and fired.
  static constexpr std::int64_t kNoPane = std::numeric_limits<std::int64_t>::min();
  static constexpr std::uint32_t kNoCold = std::numeric_limits<std::uint32_t>::max();
  // hot_idx is always the key's newest pane (kNoPane: none). A sliding window's firing
  // moves a complete newest pane to the older ones (kHotSpilled): the firing reads the
  // key's side data in order anyway, and the record that starts the key's next pane
  // then touches nothing but this slot (no side data, no pane ring at random).
  struct SKey {
    std::int64_t hot_idx = kNoPane;
    State hot{};
    std::uint32_t cold = kNoCold;
    std::uint8_t ck = 0;  // checkpoint flags: kListed, kHotDirty, kKeyDirty, kHotStored, kHotSpilled
  };
  static bool has_hot(const SKey& sk) { return sk.hot_idx != kNoPane && !(sk.ck & kHotSpilled); }
  // Cache-line aligned: what a new pane touches comes first (one line for small
  // states), what a firing touches after it.
  using PaneAlloc = HugePagePoolAllocator<std::pair<std::int64_t, State>>;
  struct alignas(64) SCold {
    explicit SCold(HugePagePool* pool) : older(PaneAlloc(pool)) {}
    SliceList<State, PaneAlloc> older;
    std::int64_t hi_registered = std::numeric_limits<std::int64_t>::min();  // window index
    // Checkpointing: older panes from dirty_from up changed since the last checkpoint;
    // the backend may hold older panes up to saved_max (a dropped one is removed).
    std::int64_t dirty_from = std::numeric_limits<std::int64_t>::max();
    std::int64_t saved_max = kNoPane;
    std::int64_t last_fired = std::numeric_limits<std::int64_t>::min();     // window index
    PaneCombination<State, policy_invertible<Policy>> comb;  // sliding windows: see window_result
    std::vector<std::pair<std::int64_t, PaneStats>> stats;                  // fired windows (L > 0)
  };
  // The keys with panes in one window (duplicates possible; firing skips them). A list
  // naming an eighth of the table is dropped (dense): its firing scans the table in
  // order, which beats looking up that many keys at random, and the record loop stops
  // appending to it (for a sliding window, every key's every new pane).
  // A window starts dense when the last one to fire was (a sliding window's keys are
  // mostly the same from one to the next), so its keys take the record loop's shortcut
  // from the first; `added` counts its keys all the same, for the next ones.
  struct WKeys {
    std::int64_t j = 0;
    std::vector<K> keys;
    bool dense = false;
    std::size_t added = 0;
  };
  static constexpr std::size_t kDenseMin = 256;
  // Whether a firing visits `keys` keys faster by scanning the table than by lookups.
  bool scan_pays(std::size_t keys) const { return keys * 8 >= skeys_.size(); }
  bool dense_share(std::size_t keys) const { return keys >= kDenseMin && scan_pays(keys); }
  void add_window_key(WKeys& wk, const K& key) {
    ++wk.added;
    if (wk.dense) return;
    wk.keys.push_back(key);
    if (dense_share(wk.keys.size())) {
      wk.dense = true;
      std::vector<K>().swap(wk.keys);
    }
  }
  bool dense_windows_ = false;  // the last window to fire was dense: new ones start so

  // Window j covers panes [j, j + n); starts are multiples of m.
  // The record loop calls these per new pane: the common case inline, the int64 limits
  // out of line.
  TimeWindow window_of(std::int64_t j) const {
    if (j > j_safe_lo_ && j < j_safe_hi_) [[likely]] {
      std::int64_t s = offset_ + j * g_;
      return TimeWindow{s, s + size_};
    }
    return window_at_the_limits(j);
  }
  [[gnu::noinline]] TimeWindow window_at_the_limits(std::int64_t j) const {
    std::int64_t s = saturate(i128(offset_) + i128(j) * g_);
    return TimeWindow{s, window_end_for(s, size_)};
  }
  bool window_representable(std::int64_t j) const {
    return (j > j_safe_lo_ && j < j_safe_hi_) ||
           i128(offset_) + i128(j) * g_ >= i128(std::numeric_limits<std::int64_t>::min());
  }
  std::int64_t pane_index(EventTime ts) const {
    if (ts > kSafeLo && ts < kSafeHi) {  // no overflow: plain 64-bit floor division
      std::int64_t d = ts - offset_;
      std::int64_t q = d / g_;
      return (d % g_ != 0 && d < 0) ? q - 1 : q;
    }
    i128 d = i128(ts) - offset_;
    i128 q = d / g_;
    if (d % g_ != 0 && d < 0) --q;
    return saturate(q);
  }
  // pane_index for the record loop: records come mostly in time order, so the last
  // pane's time range answers most of them without a division (g is only known at run
  // time: a 64-bit division per record was 6 % of sliding's time).
  std::int64_t record_pane_index(EventTime ts) {
    if (ts >= last_pane_lo_ && ts < last_pane_hi_) return last_pane_;
    const std::int64_t i = pane_index(ts);
    if (ts > kSafeLo && ts < kSafeHi) {
      last_pane_lo_ = offset_ + i * g_;
      last_pane_hi_ = last_pane_lo_ + g_;
      last_pane_ = i;
    }
    return i;
  }
  static constexpr std::int64_t kSafeLo = std::numeric_limits<std::int64_t>::min() / 4;
  static constexpr std::int64_t kSafeHi = std::numeric_limits<std::int64_t>::max() / 4;
  // Pane indices are times / g, so inside the safe range nothing below overflows.
  static std::int64_t fdiv(std::int64_t a, std::int64_t b) {
    std::int64_t q = a / b;
    return (a % b < 0) ? q - 1 : q;
  }
  std::int64_t first_window_of_pane(std::int64_t i) const {
    if (i > kSafeLo && i < kSafeHi) return m_ == 1 ? i - n_ + 1 : (fdiv(i - n_, m_) + 1) * m_;
    return saturate((i128(floor_div(sat_sub(i, n_), m_)) + 1) * m_);
  }
  std::int64_t last_window_of_pane(std::int64_t i) const {
    if (m_ == 1) return i;
    if (i > kSafeLo && i < kSafeHi) return fdiv(i, m_) * m_;
    return saturate(i128(floor_div(i, m_)) * m_);
  }

  SCold& cold(SKey& sk) {
    if (sk.cold == kNoCold) {
      if (!cold_free_.empty()) {
        sk.cold = cold_free_.back();
        cold_free_.pop_back();
      } else {
        sk.cold = static_cast<std::uint32_t>(colds_.size());
        colds_.emplace_back(&pane_pool_);
      }
    }
    return colds_[sk.cold];
  }
  const SCold* cold_if(const SKey& sk) const { return sk.cold == kNoCold ? nullptr : &colds_[sk.cold]; }
  void free_cold(SKey& sk) {
    if (sk.cold == kNoCold) return;
    colds_[sk.cold] = SCold(&pane_pool_);
    cold_free_.push_back(sk.cold);
    sk.cold = kNoCold;
  }
  bool key_empty(const SKey& sk) const {
    const SCold* c = cold_if(sk);
    // Pane numbering (stats) is kept only with allowed lateness.
    return sk.hot_idx == kNoPane && (!c || (c->older.empty() && (lateness_ == 0 || c->stats.empty())));
  }
  // The highest window index the key registered, its newest pane being `newest`: that
  // pane's last window (no window of an older pane is higher, and what a dropped pane
  // registered is no higher either: its windows are cleaned, so a record for an older
  // one is late), or, with no pane left, what the side data kept when the last one was
  // dropped. So registering a new pane reads no side data.
  std::int64_t hi_registered(const SKey& sk, std::int64_t newest) const {
    if (newest != kNoPane) return last_window_of_pane(newest);
    return sk.cold == kNoCold ? std::numeric_limits<std::int64_t>::min() : colds_[sk.cold].hi_registered;
  }
  std::int64_t hi_registered(const SKey& sk) const { return hi_registered(sk, sk.hot_idx); }
  // Makes pane i the key's (empty) newest pane; the caller spilled the one before.
  void start_pane(SKey& sk, std::int64_t i) {
    sk.ck &= static_cast<std::uint8_t>(~(kHotDirty | kHotStored | kHotSpilled));
    sk.hot_idx = i;
    sk.hot = policy_.create();
  }
  // Moves the key's newest pane to its older panes (with its checkpoint state).
  [[gnu::always_inline]] inline void spill_hot(SKey& sk);
  // Whether the firing of window j moves the key's newest pane to the older ones: a
  // sliding window's key whose newest pane is in the window is done with it (the
  // watermark passed its end), and the firing reads its side data in order anyway.
  bool spills_complete(const SKey& sk, std::int64_t j) const {
    return n_ > 1 && has_hot(sk) && sk.hot_idx < sat_add(j, n_) && sk.hot_idx >= j;
  }
  // A sliding window's record loop, the first record of a key's next pane: when the
  // firing moved the newest pane away, the new pane is open and needs registering only
  // in the window the previous pane did not reach, which a dense list already holds,
  // the new pane is just started here (what sliced_element would do, without its
  // checks). False: not that case, nothing done.
  bool next_pane_in_order(SKey& sk, std::int64_t i, std::int64_t open_from) {
    if ((sk.ck & (kListed | kHotSpilled)) != (kListed | kHotSpilled) || i <= sk.hot_idx || i < open_from) return false;
    // The previous pane registered every window up to the one before the new pane's last
    // (slide = pane: the pane right before it; i > hot_idx, so hot_idx + 1 is exact).
    std::int64_t j_last = i;
    if (m_ == 1) {
      if (i != sk.hot_idx + 1) return false;
    } else {
      j_last = last_window_of_pane(i);
      if (sat_add(last_window_of_pane(sk.hot_idx), m_) < j_last) return false;
    }
    if (wkeys_last_ == wkeys_.end() || !wkeys_last_->second.dense || wkeys_last_->second.j != j_last) return false;
    ++wkeys_last_->second.added;
    start_pane(sk, i);
    sk.ck |= kHotDirty | kKeyDirty;  // (listed already)
    return true;
  }
  // Whether a record for pane i reads the key's side data: a pane before the newest (or
  // the spilled newest one), or a newer pane that first spills the newest.
  static bool needs_side_data(const SKey& sk, std::int64_t i) {
    if (i > sk.hot_idx) return has_hot(sk);
    return i < sk.hot_idx || (sk.ck & kHotSpilled);
  }

  // The pane i of a key, created if absent; second: whether it was created. A newer
  // pane than the newest moves that one to the older panes (with its checkpoint state).
  std::pair<State*, bool> pane(SKey& sk, std::int64_t i);
  // The key changed (flags: what): the next checkpoint writes it.
  void mark(const K& key, SKey& sk, std::uint8_t what) {
    if (!(sk.ck & kListed)) {
      dirty_keys_.push_back(key);
      if (dirty_keys_.size() > 2 * skeys_.size() + 4096) compact_change_lists();
    }
    sk.ck |= static_cast<std::uint8_t>(what | kListed);
  }
  // Calls fn(index, state) for the key's panes in [lo, hi), in index order. The older
  // panes all precede the newest (pane() keeps them so), so a range starting at or past
  // the newest pane reads none of them: a firing whose entering pane is the newest.
  template <class Fn>
  void for_panes(const SKey& sk, std::int64_t lo, std::int64_t hi, Fn&& fn) const {
    const bool hot = has_hot(sk);
    if (const SCold* c = cold_if(sk); c && (hot ? sk.hot_idx > lo : true)) c->older.for_range(lo, hi, fn);
    if (hot && sk.hot_idx >= lo && sk.hot_idx < hi) fn(sk.hot_idx, sk.hot);
  }
  void drop_panes_before(const K& key, SKey& sk, std::int64_t idx);
  auto panes_of(const SKey& sk) const {
    return [this, &sk](std::int64_t lo, std::int64_t hi, auto&& fn) { for_panes(sk, lo, hi, fn); };
  }
  // The result of window j for a key into acc; false if it has no pane there. A sliding
  // window updates the key's running combination (the firings of successive windows
  // cost O(1) merges each, not size / slide).
  bool window_result(SKey& sk, std::int64_t j, State& acc) {
    if (n_ == 1 || config_.combine_all_panes || sk.cold == kNoCold) return combine(sk, j, acc);
    const std::int64_t end = sat_add(j, n_);
    comb_hi_max_ = std::max(comb_hi_max_, end);
    return colds_[sk.cold].comb.query(policy_, panes_of(sk), j, end, acc);
  }
  // Folds the panes [j, j + n) of a key into acc; false if it has none.
  bool combine(const SKey& sk, std::int64_t j, State& acc);

  // The record loop is a software pipeline: for record t + 16 the hash slot is
  // prefetched, record t + 8 is looked up (and, if it starts a new pane, its side data
  // prefetched), record t + 4 gets its pane storage prefetched, record t is processed.
  // The table of a hundred thousand keys does not fit in cache; this way its misses
  // overlap. A lookup made before an insertion is redone (an insertion may move slots).
  void sliced_batch(const std::vector<Record<In>>& recs);

  // `hint`: the key's state if the pipeline already found it (else it is looked up).
  void sliced_element(const Record<In>& r, const K& key, SKey* hint);

  // Adds the key to the lists of the live windows holding pane i. In-order panes only
  // need the windows past the highest one registered; an older pane registers all.
  void register_windows(const K& key, SKey& sk, std::int64_t i, std::int64_t newest_before, std::int64_t j_first,
                        std::int64_t j_last, EventTime w_now);

  PaneStats& sliced_stats(SKey& sk, std::int64_t j) {
    auto& stats = cold(sk).stats;
    for (auto& [wj, st] : stats)
      if (wj == j) return st;
    return stats.emplace_back(j, PaneStats{}).second;
  }

  void sliced_fire_late(const K& key, SKey& sk, std::int64_t j, const TimeWindow& w);

  // Visits the keys of a window list with their state, prefetching ahead in stages
  // (hash slot, then side data, then pane storage) so the cache misses of a hundred
  // thousand keys overlap instead of queueing.
  template <class Fn>
  void for_keys(const std::vector<K>& keys, std::int64_t j, std::int64_t leave, Fn&& fn);
  // Visits the keys in the table with a pane in window j, in table order: a firing whose
  // list names many keys reads the table sequentially instead of one lookup per key.
  // Without `prefetch` one pass that visits each key as the scan finds it: a sliding
  // firing (slide_key) reads few enough lines per key, in table order, that the
  // hardware and out-of-order execution overlap them better than the prefetch stages,
  // which read each key's side data ahead to find its pane lines (measured, 100 k keys:
  // 32 -> 26 ns a key). A list's keys, looked up at random, are always prefetched.
  template <class Fn>
  void for_keys_in_window(std::int64_t j, std::int64_t leave, bool prefetch, Fn&& fn);
  void pack_side_data();
  // The pipeline's last stages (scan_ holds the keys); fn drops the panes before `leave`.
  template <class Fn>
  void for_resolved(std::int64_t j, std::int64_t leave, Fn&& fn);

  // A sliding window's firing of window j that also cleans it, for a key whose running
  // combination covers the window but its last pane, and that pane is the key's newest
  // (or absent): merge it, emit, retract and drop the pane leaving, move the newest to
  // the older panes, with no pane ranges to search. False (nothing done): not that
  // case, the general visit does it.
  bool slide_key(const K& key, SKey& sk, std::int64_t j);
  bool slides_by_one_pane() const {
    return policy_invertible<Policy> && n_ > 1 && m_ == 1 && lateness_ == 0 && !config_.combine_all_panes;
  }
  void order_fired();
  void sliced_timer(const Timer& t);

  // ---- durability ----
  // A checkpoint writes the tables into the keyed state backend, one state per table;
  // key = the key's KeyCodec bytes (so entries follow their key group on rescaling):
  //   window-contents  generic / merging; ns = (state) window; value = flags (1: has
  //                    contents, 2: on-time pane emitted), varint panes emitted,
  //                    StateCodec<State>
  //   trigger-state    ns = window; zig-zag varint
  //   merging-windows  ns = ""; varint n, n x (window, state window)
  //   window-panes     sliced; ns = pane index (zig-zag varint); StateCodec<State>
  //   window-keys      sliced; ns = ""; the key's side data, relative to its newest
  //                    pane: the watermark of the snapshot, highest window registered,
  //                    last window fired, then n x (window, panes emitted, on-time done)
  //                    of its fired windows (allowed lateness > 0)
  // and the operator's watermark as union operator state: a restored operator knows
  // what is late before the first watermark arrives. The sliced path's per-window key
  // lists and timers (which are keyless) are rebuilt from the panes on restore; the
  // generic path's timers are keyed and restored by the runtime.
  // Checkpoints are incremental: the tables remember what changed since the last one
  // (entries, keys, panes; flags plus lists) and what was removed, and a checkpoint
  // writes and removes only those: O(changes), not O(state).
  enum : int { kContents = 0, kTrigger, kMerging, kPanes, kKeys, kStates };
  static constexpr bool kCodec = window_detail::has_codec<State>::value;
  static constexpr const char* kWatermarkList = "window-watermark";

  KeyedStateBackend& backend() {
    KeyedStateBackend* b = this->ctx().keyed_state_backend();
    if (!b)
      throw ClinkError("window '" + this->ctx().operator_name() +
                       "': no keyed state backend (its input is not keyed), so its state cannot be checkpointed");
    return *b;
  }
  StateId state_id(int i) {
    static constexpr const char* kNames[kStates] = {"window-contents", "trigger-state", "merging-windows",
                                                    "window-panes", "window-keys"};
    if (!ids_[i].valid()) ids_[i] = backend().register_state(kNames[i], StateKind::kValue);
    return ids_[i];
  }

  void write_state();
  // Keeps the change lists in proportion to the tables between checkpoints (or without
  // any): drops entries of keys and windows gone or listed twice, and writes the
  // removal of trigger state and merging sets gone into the backend at once.
  void compact_change_lists();
  void write_sliced_key(const K& key, SKey& sk, std::string& kb, std::string& ns, std::string& v);
  void put_entry(int state, std::string_view key, std::string_view ns, std::string_view value);
  void remove_entry(int state, std::string_view key, std::string_view ns);

  // x + sign * b in wrapping arithmetic (sign 0: x * b): encodes differences that
  // decode exactly whatever the values.
  static std::int64_t rel(std::int64_t x, std::int64_t b, std::int64_t sign) {
    const auto ux = static_cast<std::uint64_t>(x), ub = static_cast<std::uint64_t>(b);
    if (sign == 0) return static_cast<std::int64_t>(ux * ub);
    return static_cast<std::int64_t>(sign > 0 ? ux + ub : ux - ub);
  }

  void restore_state();

  // The sliced path's window -> keys lists and window timers, from the restored panes:
  // a key is in the list of every window holding one of its panes that its subtask had
  // not cleaned (as register_windows put it there).
  void rebuild_window_lists(const absl::flat_hash_map<K, EventTime>& key_watermarks);

  WindowConfig<In> config_;
  KeyFn key_fn_;
  Policy policy_;
  std::unique_ptr<WindowAssigner> assigner_;
  TriggerPtr trigger_;
  bool event_time_ = true;
  bool merging_ = false;
  std::int64_t lateness_ = 0;
  std::unique_ptr<WindowContext> wctx_;
  std::int64_t batch_now_ = 0;

  // generic / merging
  absl::flat_hash_map<WKey, Entry> table_;
  absl::flat_hash_map<WKey, std::int64_t> trigger_state_;
  absl::flat_hash_map<K, MergingWindowSet> merging_sets_;
  std::vector<TimeWindow> windows_;
  std::string key_bytes_;
  bool key_bytes_valid_ = false;
  std::string ns_;

  // sliced
  bool sliced_ = false;
  std::int64_t size_ = 0, offset_ = 0, g_ = 1, n_ = 1, m_ = 1;
  // The window indices j for which window_of needs no 128-bit arithmetic (kSafeLo / g,
  // kSafeHi / g): computed once, a division per call was 8 % of a sliding window's time.
  std::int64_t j_safe_lo_ = kSafeLo, j_safe_hi_ = kSafeHi;
  std::size_t ring_steady_ = 0;  // SliceList::get_or_create's steady capacity
  std::int64_t last_pane_lo_ = 0, last_pane_hi_ = 0, last_pane_ = 0;  // record_pane_index's range
  // Read at random, so on huge pages; pane_pool_ outlives colds_ (which frees into it).
  HugePagePool pane_pool_;
  // Linear probing: the record loop's prefetch loads the very slot its find reads.
  using SKeyTable =
      LinearProbeMap<K, SKey, absl::Hash<K>, std::equal_to<K>, HugePageAllocator<std::pair<const K, SKey>>>;
  using SEntry = typename SKeyTable::Entry;
  SKeyTable skeys_;
  ChunkedVector<SCold> colds_;  // grows without relocating (chunked_vector.hpp)
  std::vector<std::uint32_t> cold_free_;
  std::vector<K> batch_keys_;
  std::vector<std::int64_t> batch_panes_;  // the records' pane indices
  std::uint64_t inserts_ = 0;
  std::vector<K> erase_;
  std::vector<SEntry*> scan_;  // for_keys' pipeline
  std::map<EventTime, WKeys> wkeys_;
  typename std::map<EventTime, WKeys>::iterator wkeys_last_ = wkeys_.end();  // register_windows' last
  std::vector<std::pair<K, State>> fired_;  // a firing's results, in the order visited
  std::vector<std::uint32_t> fired_order_;  // ... by key bytes (order_fired)
  std::vector<K> fired_keys_;               // the keys fired_order_ was computed for
  std::vector<std::vector<K>> spare_keys_;  // cleaned windows' key lists, for reuse
  std::int64_t comb_hi_max_ = kNoPane;  // no running combination reaches this pane

  // What changed since the last checkpoint (written by the next one; write_state).
  std::vector<WKey> dirty_entries_, removed_entries_;
  absl::flat_hash_set<WKey> trigger_dirty_;
  absl::flat_hash_set<K> merging_dirty_;
  std::vector<K> dirty_keys_, removed_keys_;
  std::vector<std::pair<K, std::int64_t>> removed_panes_;

  std::array<StateId, kStates> ids_{};
};

}  // namespace clink

#include "clink/windows/window_operator_generic.hpp"
#include "clink/windows/window_operator_sliced.hpp"
#include "clink/windows/window_operator_state.hpp"
