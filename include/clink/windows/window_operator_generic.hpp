#pragma once
// WindowOperator, continued: the trigger context and the generic and merging paths
// (state per (key, window), Flink's algorithm with any trigger, per-key timers).
// Included at the end of window_operator.hpp, which declares these members.
#include "clink/windows/window_operator.hpp"

namespace clink {

// The trigger context of one (key, window): timers go to the TimerService under the
// key bytes with the window as namespace; trigger state lives in trigger_state_.
template <class K, class In, class KeyFn, class Policy>
class WindowOperator<K, In, KeyFn, Policy>::Ctx final : public OnMergeContext {
 public:
  Ctx(WindowOperator& op, const K& key, const TimeWindow& w, Entry* e) : op_(op), key_(key), w_(w), e_(e) {}
  EventTime current_watermark() const override { return op_.watermark(); }
  std::int64_t current_processing_time() const override { return op_.now(); }
  void register_event_time_timer(std::int64_t t) override { reg(1, t); }
  void register_processing_time_timer(std::int64_t t) override { reg(2, t); }
  void delete_event_time_timer(std::int64_t t) override { del(1, t); }
  void delete_processing_time_timer(std::int64_t t) override { del(2, t); }
  std::optional<std::int64_t> get_state() override {
    auto it = op_.trigger_state_.find(WKey{key_, w_});
    if (it == op_.trigger_state_.end()) return std::nullopt;
    return it->second;
  }
  void set_state(std::int64_t v) override {
    op_.trigger_state_[WKey{key_, w_}] = v;
    op_.trigger_dirty_.insert(WKey{key_, w_});
    if (op_.trigger_dirty_.size() > 2 * op_.trigger_state_.size() + 4096) op_.compact_change_lists();
  }
  void clear_state() override {
    if (op_.trigger_state_.erase(WKey{key_, w_})) op_.trigger_dirty_.insert(WKey{key_, w_});
  }
  void merge_state(const std::function<std::int64_t(std::int64_t, std::int64_t)>& fold) override {
    std::optional<std::int64_t> acc = get_state();
    for (const auto& m : *merged_) {
      auto it = op_.trigger_state_.find(WKey{key_, m});
      if (it == op_.trigger_state_.end()) continue;
      acc = acc ? fold(*acc, it->second) : it->second;
      op_.trigger_state_.erase(it);
      op_.trigger_dirty_.insert(WKey{key_, m});
    }
    if (acc) set_state(*acc);
  }
  void set_merged(const std::vector<TimeWindow>* m) { merged_ = m; }

 private:
  void reg(std::uint8_t d, std::int64_t t) {
    if (e_ && e_->cache.hit(d, t)) return;
    auto& ts = op_.timers();
    op_.ns_.clear();
    encode_window(w_, op_.ns_);
    if (d == 1) ts.register_event_time_timer(t, op_.key_bytes(key_), op_.ns_);
    else ts.register_processing_time_timer(t, op_.key_bytes(key_), op_.ns_);
    if (e_) e_->cache.put(d, t);
  }
  void del(std::uint8_t d, std::int64_t t) {
    if (e_) e_->cache.erase(d, t);
    auto& ts = op_.timers();
    op_.ns_.clear();
    encode_window(w_, op_.ns_);
    if (d == 1) ts.delete_event_time_timer(t, op_.key_bytes(key_), op_.ns_);
    else ts.delete_processing_time_timer(t, op_.key_bytes(key_), op_.ns_);
  }
  WindowOperator& op_;
  const K& key_;
  TimeWindow w_;
  Entry* e_;
  const std::vector<TimeWindow>* merged_ = nullptr;
};

template <class K, class In, class KeyFn, class Policy>
void WindowOperator<K, In, KeyFn, Policy>::register_cleanup_timer(const K& key, const TimeWindow& w, Entry* e) {
  std::int64_t c = cleanup_time(w);
  if (c == kMaxEventTime) return;  // never cleaned (global and topmost windows), as in Flink
  Ctx ctx(*this, key, w, e);
  if (event_time_) ctx.register_event_time_timer(c);
  else ctx.register_processing_time_timer(c);
}

template <class K, class In, class KeyFn, class Policy>
void WindowOperator<K, In, KeyFn, Policy>::delete_cleanup_timer(const K& key, const TimeWindow& w) {
  std::int64_t c = cleanup_time(w);
  if (c == kMaxEventTime) return;
  Ctx ctx(*this, key, w, nullptr);
  if (event_time_) ctx.delete_event_time_timer(c);
  else ctx.delete_processing_time_timer(c);
}

template <class K, class In, class KeyFn, class Policy>
void WindowOperator<K, In, KeyFn, Policy>::generic_element(const Record<In>& r) {
  const K key = key_fn_(r.value);
  key_bytes_valid_ = false;
  windows_.clear();
  assign(r, windows_);
  bool skipped = true;
  for (const TimeWindow& w : windows_) {
    if (window_late(w)) continue;
    skipped = false;
    Entry& e = entry(key, w);
    policy_.add(e.state, r.value, r.event_time);
    e.has_contents = true;
    touch(key, w, e);
    Ctx ctx(*this, key, w, &e);
    TriggerResult res = trigger_->on_element(r.event_time, w, ctx);
    if (is_fire(res)) emit(key, w, e, false, false);
    if (is_purge(res)) purge(e);
    register_cleanup_timer(key, w, &e);
  }
  if (skipped && element_late(r.event_time)) late_element(r);
}

template <class K, class In, class KeyFn, class Policy>
void WindowOperator<K, In, KeyFn, Policy>::merging_element(const Record<In>& r) {
  const K key = key_fn_(r.value);
  key_bytes_valid_ = false;
  windows_.clear();
  assign(r, windows_);
  MergingWindowSet& set = merging_sets_[key];
  merging_dirty_.insert(key);
  if (merging_dirty_.size() > 2 * merging_sets_.size() + 4096) compact_change_lists();
  bool skipped = true;
  for (const TimeWindow& w : windows_) {
    TimeWindow actual = set.add_window(
        w, [&](const TimeWindow& result, const std::vector<TimeWindow>& merged, const TimeWindow& target,
               const std::vector<TimeWindow>& merged_states) {
          if (event_time_ ? sat_add(result.max_timestamp(), lateness_) <= watermark()
                          : result.max_timestamp() <= now()) {
            std::string s;
            to_string_into(result, s);
            throw ClinkError("window: the end of a window cannot become earlier than the current " +
                             std::string(event_time_ ? "watermark" : "processing time") + " by merging (window " +
                             s + ")");
          }
          Ctx mctx(*this, key, result, nullptr);
          mctx.set_merged(&merged);
          trigger_->on_merge(result, mctx);
          for (const TimeWindow& m : merged) {
            Ctx c(*this, key, m, nullptr);
            trigger_->clear(m, c);
            delete_cleanup_timer(key, m);
          }
          merge_states(key, target, merged_states);
        });
    if (window_late(actual)) {
      set.retire(actual);
      continue;
    }
    skipped = false;
    const TimeWindow state_window = *set.state_window(actual);
    Entry& e = entry(key, state_window);
    policy_.add(e.state, r.value, r.event_time);
    e.has_contents = true;
    touch(key, state_window, e);
    Ctx ctx(*this, key, actual, nullptr);
    TriggerResult res = trigger_->on_element(r.event_time, actual, ctx);
    if (is_fire(res)) emit(key, actual, e, false, false);
    if (is_purge(res)) purge(e);
    register_cleanup_timer(key, actual, nullptr);
  }
  if (set.empty()) merging_sets_.erase(key);
  if (skipped && element_late(r.event_time)) late_element(r);
}

// The state of the merged-away state windows, in order, appended to the target's.
template <class K, class In, class KeyFn, class Policy>
void WindowOperator<K, In, KeyFn, Policy>::merge_states(const K& key, const TimeWindow& target, const std::vector<TimeWindow>& sources) {
  std::vector<Entry> moved;
  for (const TimeWindow& s : sources) {
    auto it = table_.find(WKey{key, s});
    if (it == table_.end()) continue;
    moved.push_back(std::move(it->second));
    erase_entry(it);
  }
  Entry& t = entry(key, target);
  touch(key, target, t);
  for (Entry& src : moved) {
    if (src.has_contents) {
      policy_.merge(t.state, src.state);
      t.has_contents = true;
    }
    t.stats.emissions = std::max(t.stats.emissions, src.stats.emissions);
    t.stats.on_time_done = t.stats.on_time_done || src.stats.on_time_done;
  }
}

template <class K, class In, class KeyFn, class Policy>
void WindowOperator<K, In, KeyFn, Policy>::on_timer(const Timer& t, bool event) {
  if (sliced_ && t.key.empty()) return sliced_timer(t);
  const K key = decode_key<K>(t.key);
  key_bytes_.assign(t.key);
  key_bytes_valid_ = true;
  const TimeWindow w = decode_window(t.ns);
  const std::uint8_t domain = event ? 1 : 2;
  Entry* e = nullptr;
  std::optional<TimeWindow> state_window;
  if (merging_) {
    auto ms = merging_sets_.find(key);
    if (ms == merging_sets_.end()) return;
    const TimeWindow* sw = ms->second.state_window(w);
    if (!sw) return;  // a timer a trigger did not delete, of a window already gone
    state_window = *sw;
    e = find(key, *sw);
  } else {
    e = find(key, w);
    if (e) e->cache.erase(domain, t.time);
  }
  Ctx ctx(*this, key, w, merging_ ? nullptr : e);
  TriggerResult res = event ? trigger_->on_event_time(t.time, w, ctx) : trigger_->on_processing_time(t.time, w, ctx);
  const bool cleanup = event == event_time_ && t.time == cleanup_time(w);
  if ((is_fire(res) || is_purge(res)) && e) touch(key, state_window ? *state_window : w, *e);
  if (is_fire(res) && e) emit(key, w, *e, true, past_cleanup(w));
  if (is_purge(res) && e) purge(*e);
  if (cleanup) clear_all_state(key, w, state_window ? *state_window : w);
}

template <class K, class In, class KeyFn, class Policy>
void WindowOperator<K, In, KeyFn, Policy>::clear_all_state(const K& key, const TimeWindow& w, const TimeWindow& state_window) {
  if (auto it = table_.find(WKey{key, state_window}); it != table_.end()) erase_entry(it);
  Ctx ctx(*this, key, w, nullptr);
  trigger_->clear(w, ctx);
  wctx_->set(w, PaneInfo{});
  policy_.clear(key, *wctx_);
  if (merging_) {
    auto ms = merging_sets_.find(key);
    if (ms != merging_sets_.end()) {
      merging_dirty_.insert(key);
      ms->second.retire(w);
      if (ms->second.empty()) merging_sets_.erase(ms);
    }
  }
}

}  // namespace clink
