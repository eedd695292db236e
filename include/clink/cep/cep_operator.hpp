#pragma once
// CepOperator<T, U, K>: matches a Pattern<T> against each key's events (Flink's
// CepOperator). One NFA (compiled once per subtask) serves all keys; each key has its
// NFA state and shared buffer, and in event time a buffer of records not yet passed by
// the watermark.
//
// Event time (default): a record with t <= watermark is late (late-data side output if
// set, else dropped and counted in numLateRecordsDropped); otherwise it is buffered
// under its key. When the watermark W passes a key's earliest buffered timestamp, the
// key's records with t <= W are fed to the NFA in timestamp order (arrival order among
// equal timestamps), each timestamp preceded by advancing the NFA's time to it; then
// time advances to W, which times out partial matches whose window (within) has passed
// (to the function's timed-out handler; for a trailing not_followed_by: a match). Keys
// wake through one timer each (its earliest buffered record or window deadline).
//
// Processing time: each record is processed on arrival at the current processing time;
// windows expire through processing-time timers.
//
// Outputs carry the match's event time (the last event's timestamp; the window end for
// timeouts; the advancing watermark for a trailing not_followed_by); in processing time
// they carry none.
//
// State: the per-key tables are the hot copy; a checkpoint writes the keys changed since
// the previous one into keyed state ("cep-nfa": NFA state + shared buffer, value state;
// "cep-queue": buffered records, map state timestamp -> records) and the watermark into
// operator state; open() restores them (at any parallelism: keys follow key groups).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/container/inlined_vector.h>

#include "clink/api/operators.hpp"
#include "clink/cep/nfa.hpp"
#include "clink/cep/nfa_codec.hpp"
#include "clink/cep/pattern_process_function.hpp"
#include "clink/core/error.hpp"
#include "clink/core/huge_page_allocator.hpp"
#include "clink/core/output_tag.hpp"
#include "clink/core/prefetch.hpp"
#include "clink/runtime/lateness.hpp"
#include "clink/state/keyed_state_backend.hpp"

namespace clink::cep {

template <class T>
struct CepOptions {
  bool event_time = true;
  std::optional<OutputTag<T>> late_data_tag;
};

template <class T>
concept HasStateCodec = requires(const T& v, std::string& out, std::string_view& in) {
  StateCodec<T>::encode(v, out);
  StateCodec<T>::decode(in);
};

template <class T, class U, class K>
class CepOperator final : public FunctionOperatorBase<U> {
 public:
  using KeySelector = std::function<K(const T&)>;
  static constexpr const char* kNfaState = "cep-nfa";
  static constexpr const char* kQueueState = "cep-queue";
  static constexpr const char* kWatermarkList = "cep-watermark";

  CepOperator(const Pattern<T>& pattern, KeySelector key_fn, PatternProcessFunctionPtr<T, U> fn, CepOptions<T> options)
      : nfa_(pattern, fn->handles_timed_out_matches()),
        key_fn_(std::move(key_fn)),
        fn_(std::move(fn)),
        options_(std::move(options)) {}

  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    backend_ = ctx.keyed_state_backend_or_private();
    nfa_id_ = backend_->register_state(kNfaState, StateKind::kValue);
    queue_id_ = backend_->register_state(kQueueState, StateKind::kMap);
    fctx_ = std::make_unique<typename PatternProcessFunction<T, U>::Context>(ctx, this->sides_);
    fn_->open(ctx);
    if (ctx.is_restored()) restore_state();
  }
  void close() override { fn_->close(); }

  void process_batch(int, BatchPtr batch) override {
    this->begin_call();
    auto& recs = batch_cast<T>(*batch).records;
    if (options_.event_time) {
      buffer_batch(recs);
    } else {
      const std::int64_t now = this->ctx().timer_service().current_processing_time();
      for (auto& r : recs) {
        const std::int32_t s = slot_for(key_fn_(r.value));
        Slot& sl = slots_[static_cast<std::size_t>(s)];
        advance(sl, now);
        feed(sl, r.value, now);
        after_change(s);
      }
    }
    this->flush_output();
  }

  void process_watermark(Watermark wm) override {
    if (!wm.idle && wm.timestamp > watermark_) {
      watermark_ = wm.timestamp;
      this->ctx().timer_service().advance_watermark(wm.timestamp, [](const Timer&) {});
      if (options_.event_time) {
        this->begin_call();
        fire_until(watermark_, [this](std::int32_t s) { on_event_time(s); });
        this->flush_output();
      }
    }
    this->output().emit_watermark(wm);
  }

  void process_processing_time(std::int64_t now) override {
    this->ctx().timer_service().advance_processing_time(now, [](const Timer&) {});
    if (options_.event_time) return;
    this->begin_call();
    fire_until(now, [this, now](std::int32_t s) {
      Slot& sl = slots_[static_cast<std::size_t>(s)];
      advance(sl, now);
      after_change(s);
    });
    this->flush_output();
  }

  void snapshot_state(std::int64_t) override { write_state(); }

  // Introspection (tests, benchmarks).
  std::size_t live_keys() const { return index_.size(); }
  std::size_t live_partial_matches() const {
    std::size_t n = 0;
    for (const auto& s : slots_)
      if (s.live) n += s.nfa.partial.size() - 1;  // minus the start state
    return n;
  }
  std::size_t buffered_records() const {
    std::size_t n = 0;
    for (const auto& s : slots_)
      if (s.live) n += s.queue.size();
    return n;
  }
  // Events and nodes held in the shared buffers of all keys (each stored once).
  std::size_t stored_events() const {
    std::size_t n = 0;
    for (const auto& s : slots_)
      if (s.live) n += s.nfa.buffer.live_events();
    return n;
  }
  std::size_t stored_nodes() const {
    std::size_t n = 0;
    for (const auto& s : slots_)
      if (s.live) n += s.nfa.buffer.live_nodes();
    return n;
  }
  const Nfa<T>& nfa() const { return nfa_; }
  // What the next checkpoint has to write or remove (slots listed, keys to remove).
  std::size_t pending_state_changes() const { return dirty_.size() + removed_keys_.size(); }

 private:
  struct Slot {
    explicit Slot(SharedBufferPool<T>* pool) : nfa(pool) {}
    K key{};
    NfaKeyState<T> nfa;
    // By timestamp, arrival order among equals. Inline: a key rarely has more than one or
    // two records waiting for the watermark, and they are read with the partial matches.
    absl::InlinedVector<std::pair<EventTime, T>, 2> queue;
    // The times of this key's entries in the two timer heaps (max: none).
    EventTime records_at = std::numeric_limits<EventTime>::max();
    EventTime deadline_at = std::numeric_limits<EventTime>::max();
    std::uint32_t gen = 0;
    bool live = false;
    bool dirty = false;      // changed since the last checkpoint
    bool listed = false;     // in dirty_ (at most once: the list stays bounded by the slots)
    bool persisted = false;  // the key's state is in the backend (written or restored)
  };
  struct TimerRef {
    std::int32_t slot;
    std::uint32_t gen;
  };

  // Receives the NFA's matches and timeouts for the record or time being processed.
  struct Sink {
    CepOperator* op;
    EventTime ts;
    void on_match(const MatchView<T>& m) { op->emit_match(m, ts); }
    void on_timeout(const MatchView<T>& m, EventTime at) { op->emit_timeout(m, at); }
  };

  // Two passes, so that the keys' scattered memory is fetched ahead: first each record's
  // key slot (the hash index prefetched a few records ahead), then the buffering (slot
  // and queue prefetched ahead). Records up to the first one without a timestamp are
  // buffered, then that one fails the call, as one pass would.
  void buffer_batch(std::vector<Record<T>>& recs) {
    const std::size_t n = recs.size();
    std::size_t valid = 0;
    auto& keys = batch_keys_;
    keys.clear();
    // Late against its channel's watermark, which may be ahead of this operator's
    // (runtime/lateness.hpp).
    const EventTime late_at = std::max(watermark_, lateness_watermark(this->ctx()));
    for (; valid < n && recs[valid].event_time != kNoEventTime; ++valid)
      if (recs[valid].event_time > late_at) keys.push_back(key_fn_(recs[valid].value));
    auto& slots = batch_slots_;
    slots.clear();
    constexpr std::size_t kIndexAhead = 8, kSlotAhead = 4;
    for (std::size_t i = 0, k = 0; i < valid; ++i) {
      if (recs[i].event_time <= late_at) {
        slots.push_back(-1);  // late
        continue;
      }
      if (k + kIndexAhead < keys.size()) index_.prefetch(keys[k + kIndexAhead]);
      slots.push_back(slot_for(keys[k++]));
    }
    for (std::size_t i = 0; i < valid; ++i) {
      if (i + kSlotAhead < valid && slots[i + kSlotAhead] >= 0)
        prefetch_slot(slots_[static_cast<std::size_t>(slots[i + kSlotAhead])]);
      buffer(recs[i], slots[i]);
    }
    if (valid < n)
      throw ClinkError("cep operator '" + this->ctx().operator_name() +
                       "': record has no event time; in event time the input needs timestamps (did you forget "
                       "assign_timestamps_and_watermarks, or mean in_processing_time()?)");
  }
  // Every cache line of a slot (its fields are spread over a few).
  static void prefetch_slot(const Slot& sl) {
    const char* p = reinterpret_cast<const char*>(&sl);
    for (std::size_t off = 0; off < sizeof(Slot); off += 64) clink::prefetch(p + off);
  }

  // A record with a timestamp into its key's queue (slot s), or late (s < 0).
  void buffer(Record<T>& r, std::int32_t s) {
    if (s < 0) {  // late: behind the watermark
      if (options_.late_data_tag) this->sides_.add(*options_.late_data_tag, std::move(r.value), r.event_time);
      else this->ctx().metrics().late_records_dropped.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    auto& q = slots_[static_cast<std::size_t>(s)].queue;
    if (q.empty() || q.back().first <= r.event_time) {
      q.emplace_back(r.event_time, std::move(r.value));
    } else {
      auto it = std::upper_bound(q.begin(), q.end(), r.event_time,
                                 [](EventTime t, const std::pair<EventTime, T>& e) { return t < e.first; });
      q.insert(it, std::pair<EventTime, T>(r.event_time, std::move(r.value)));
    }
    schedule(s, q.front().first, false);
    mark_dirty(s);
  }

  // The watermark passed this key's timer: feed its due records, then advance time.
  void on_event_time(std::int32_t s) {
    Slot& sl = slots_[static_cast<std::size_t>(s)];
    auto& q = sl.queue;
    std::size_t i = 0;
    while (i < q.size() && q[i].first <= watermark_) {
      const EventTime ts = q[i].first;
      advance(sl, ts);
      for (; i < q.size() && q[i].first == ts; ++i) feed(sl, q[i].second, ts);
    }
    q.erase(q.begin(), q.begin() + static_cast<std::ptrdiff_t>(i));
    advance(sl, watermark_);
    after_change(s);
  }

  void feed(Slot& sl, const T& value, EventTime ts) {
    Sink sink{this, ts};
    nfa_.process(sl.nfa, value, ts, sink);
  }
  void advance(Slot& sl, EventTime ts) {
    Sink sink{this, ts};
    nfa_.advance_time(sl.nfa, ts, sink);
  }

  // Reschedule the key's timers (next buffered record, next window deadline) or drop it.
  void after_change(std::int32_t s) {
    Slot& sl = slots_[static_cast<std::size_t>(s)];
    mark_dirty(s);
    if (sl.queue.empty() && sl.nfa.idle()) return free_slot(s);
    if (!sl.queue.empty()) schedule(s, sl.queue.front().first, false);
    if (nfa_.window() > 0)
      if (auto start = sl.nfa.earliest_start())
        schedule(s,
                 *start > std::numeric_limits<EventTime>::max() - nfa_.window() ? std::numeric_limits<EventTime>::max()
                                                                                 : *start + nfa_.window(),
                 true);
  }

  // Timers live in buckets by time (a key's timers are its earliest buffered record and
  // its earliest window deadline). A key has at most one live entry of each kind: a new
  // one only when its time gets earlier; the superseded entry is skipped when reached. A
  // deadline that moved later (its partial completed) fires early once, as a no-op.
  // Buckets fire in time order (records before deadlines at equal times), entries of a
  // bucket in the order they were added.
  void schedule(std::int32_t s, EventTime t, bool deadline) {
    Slot& sl = slots_[static_cast<std::size_t>(s)];
    EventTime& at = deadline ? sl.deadline_at : sl.records_at;
    if (t >= at) return;
    at = t;
    // The records of a batch mostly land in one or two buckets: the last one used is
    // kept at hand (no map look-up per record).
    LastBucket& last = deadline ? last_deadline_bucket_ : last_record_bucket_;
    if (!last.bucket || last.time != t) {
      auto& timers = deadline ? deadline_timers_ : record_timers_;
      auto [it, created] = timers.try_emplace(t);
      auto& spare = spare_buckets_[deadline ? 1 : 0];
      if (created && !spare.empty()) {
        it->second = std::move(spare.back());
        spare.pop_back();
      }
      last = LastBucket{t, &it->second};
    }
    last.bucket->push_back(TimerRef{s, sl.gen});
    if (!options_.event_time) this->ctx().timer_service().register_processing_time_timer(t, {}, {});
  }
  template <class F>
  void fire_until(EventTime t, F&& fire) {
    for (;;) {
      const bool rec = !record_timers_.empty() && record_timers_.begin()->first <= t;
      const bool dl = !deadline_timers_.empty() && deadline_timers_.begin()->first <= t;
      if (!rec && !dl) return;
      const bool deadline = dl && (!rec || deadline_timers_.begin()->first < record_timers_.begin()->first);
      auto& timers = deadline ? deadline_timers_ : record_timers_;
      auto it = timers.begin();
      const EventTime time = it->first;
      LastBucket& last = deadline ? last_deadline_bucket_ : last_record_bucket_;
      if (last.bucket == &it->second) last = LastBucket{};
      auto bucket = std::move(it->second);
      timers.erase(it);
      // Software pipelining: the keys a bucket wakes are scattered in memory, so their
      // slots, then their partial matches, buffered records and last nodes are prefetched
      // a few keys ahead.
      constexpr std::size_t kSlotAhead = 8, kDataAhead = 4;
      for (std::size_t i = 0; i < bucket.size(); ++i) {
        if (i + kSlotAhead < bucket.size()) prefetch_slot(slots_[static_cast<std::size_t>(bucket[i + kSlotAhead].slot)]);
        if (i + kDataAhead < bucket.size()) prefetch_slot_data(bucket[i + kDataAhead].slot);
        const TimerRef& e = bucket[i];
        Slot& sl = slots_[static_cast<std::size_t>(e.slot)];
        EventTime& at = deadline ? sl.deadline_at : sl.records_at;
        if (!sl.live || sl.gen != e.gen || at != time) continue;  // superseded
        at = std::numeric_limits<EventTime>::max();
        fire(e.slot);
      }
      bucket.clear();
      spare_buckets_[deadline ? 1 : 0].push_back(std::move(bucket));
    }
  }

  void prefetch_slot_data(std::int32_t s) const {
    const Slot& sl = slots_[static_cast<std::size_t>(s)];
    if (!sl.live) return;
    // The records and partial matches are in the slot; every partial match that changes
    // locks and releases its last node, and a completed one is read back along its path
    // (a key rarely has more than a few): the last two nodes of each are fetched.
    const auto& partial = sl.nfa.partial;
    const std::size_t n = std::min<std::size_t>(partial.size(), 4);
    const auto nodes = static_cast<std::int32_t>(pool_.nodes.size());
    for (std::size_t i = 0; i < n; ++i) {
      const std::int32_t last = partial[i].node, prev = partial[i].prev_node;
      if (last >= 0) clink::prefetch(pool_.nodes.data() + last);
      if (prev >= 0 && prev < nodes) clink::prefetch(pool_.nodes.data() + prev);  // (a hint: may be stale)
    }
  }

  std::int32_t slot_for(const K& key) {
    auto [it, inserted] = index_.try_emplace(key, 0);
    if (!inserted) return it->second;
    std::int32_t s;
    if (!free_.empty()) {
      s = free_.back();
      free_.pop_back();
    } else {
      s = static_cast<std::int32_t>(slots_.size());
      slots_.emplace_back(&pool_);
    }
    Slot& sl = slots_[static_cast<std::size_t>(s)];
    sl.key = key;
    nfa_.reset(sl.nfa);  // reuses the storage of the key that had the slot before
    sl.live = true;
    sl.records_at = sl.deadline_at = std::numeric_limits<EventTime>::max();
    it->second = s;
    return s;
  }
  void free_slot(std::int32_t s) {
    Slot& sl = slots_[static_cast<std::size_t>(s)];
    index_.erase(sl.key);
    // Only a key whose state the backend holds needs removing at the next checkpoint; it
    // is listed once: if it comes back, its new slot is not persisted until written.
    if (sl.persisted) removed_keys_.push_back(sl.key);
    sl.persisted = false;
    sl.live = false;
    sl.dirty = false;
    ++sl.gen;
    sl.nfa.partial.clear();  // (a list that grew past its inline room goes back inline)
    sl.queue.clear();
    free_.push_back(s);
  }
  void mark_dirty(std::int32_t s) {
    Slot& sl = slots_[static_cast<std::size_t>(s)];
    if (sl.dirty) return;
    sl.dirty = true;
    if (sl.listed) return;  // freed and reused since it was listed
    sl.listed = true;
    dirty_.push_back(s);
  }

  void emit_match(const MatchView<T>& m, EventTime ts) {
    const EventTime out_ts = options_.event_time ? ts : kNoEventTime;
    fctx_->set(ts, out_ts);
    this->collector_.set_timestamp(out_ts);
    fill_match(m);
    fn_->process_match(match_, *fctx_, this->collector_);
  }
  void emit_timeout(const MatchView<T>& m, EventTime at) {
    fctx_->set(at, options_.event_time ? at : kNoEventTime);
    fill_match(m);
    fn_->process_timed_out_match(match_, *fctx_);
  }
  void fill_match(const MatchView<T>& m) { match_.assign(m); }

  // ---- durability (cep_operator_state.hpp) ----
  void write_state();
  void restore_state();

  Nfa<T> nfa_;
  KeySelector key_fn_;
  PatternProcessFunctionPtr<T, U> fn_;
  CepOptions<T> options_;
  std::unique_ptr<typename PatternProcessFunction<T, U>::Context> fctx_;
  KeyedStateBackend* backend_ = nullptr;
  StateId nfa_id_, queue_id_;
  EventTime watermark_ = kMinEventTime;
  SharedBufferPool<T> pool_;  // every key's events and nodes (declared before the slots)
  std::vector<Slot, HugePageAllocator<Slot>> slots_;  // read at random: on huge pages once large
  std::vector<std::int32_t> free_;
  absl::flat_hash_map<K, std::int32_t> index_;
  // Two bucket maps: the record timers are few and near (a small, hot map), the window
  // deadlines spread over the window.
  std::map<EventTime, std::vector<TimerRef>> record_timers_, deadline_timers_;
  struct LastBucket {
    EventTime time = 0;
    std::vector<TimerRef>* bucket = nullptr;  // in the map (node-based: stable until erased)
  };
  LastBucket last_record_bucket_, last_deadline_bucket_;
  // Emptied buckets, reused by their own kind: a record bucket holds the keys of a whole
  // batch, a deadline bucket (one per millisecond of the window) a few; the deadline
  // buckets should not hold record-sized capacity for the whole window.
  std::vector<std::vector<TimerRef>> spare_buckets_[2];
  // Slots changed since the last checkpoint, and keys to remove from the backend: both
  // bounded (by the slots, by the keys the backend holds) when no checkpoint is taken.
  std::vector<std::int32_t> dirty_;
  std::vector<K> batch_keys_;            // scratch of buffer_batch
  std::vector<std::int32_t> batch_slots_;
  std::vector<K> removed_keys_;
  Match<T> match_;  // the match being reported (storage reused)
};

}  // namespace clink::cep

#include "clink/cep/cep_operator_state.hpp"
