#pragma once
// WindowOperator, continued: the sliced path (aligned windows kept as panes of
// gcd(size, slide) per key).
// Included at the end of window_operator.hpp, which declares these members.
#include "clink/windows/window_operator.hpp"

namespace clink {

template <class K, class In, class KeyFn, class Policy>
inline void WindowOperator<K, In, KeyFn, Policy>::spill_hot(SKey& sk) {
  SCold& c = cold(sk);
  c.older.get_or_create(sk.hot_idx, [&] { return std::move(sk.hot); }, ring_steady_);
  if (sk.ck & kHotDirty) c.dirty_from = std::min(c.dirty_from, sk.hot_idx);
  if (sk.ck & kHotStored) c.saved_max = std::max(c.saved_max, sk.hot_idx);
  sk.ck = static_cast<std::uint8_t>((sk.ck & ~(kHotDirty | kHotStored)) | kHotSpilled);
}

template <class K, class In, class KeyFn, class Policy>
auto WindowOperator<K, In, KeyFn, Policy>::pane(SKey& sk, std::int64_t i) -> std::pair<State*, bool> {
  if (i == sk.hot_idx && !(sk.ck & kHotSpilled)) return {&sk.hot, false};
  if (sk.hot_idx == kNoPane || i > sk.hot_idx) {
    if (has_hot(sk)) spill_hot(sk);
    start_pane(sk, i);
    return {&sk.hot, true};
  }
  SCold& c = cold(sk);
  c.dirty_from = std::min(c.dirty_from, i);
  return c.older.get_or_create(i, [this] { return policy_.create(); }, ring_steady_);
}

template <class K, class In, class KeyFn, class Policy>
void WindowOperator<K, In, KeyFn, Policy>::drop_panes_before(const K& key, SKey& sk, std::int64_t idx) {
  if (sk.cold != kNoCold) {
    SCold& c = colds_[sk.cold];
    c.comb.evict_before(policy_, panes_of(sk), idx);
    if (c.saved_max != kNoPane)
      c.older.for_range(kNoPane, std::min(idx, sat_add(c.saved_max, 1)),
                        [&](std::int64_t i, const State&) { removed_panes_.emplace_back(key, i); });
    c.older.drop_before(idx);
  }
  if (sk.hot_idx != kNoPane && sk.hot_idx < idx) {
    // A spilled newest pane went with the older ones; its registrations stay known.
    if (sk.ck & kHotStored) removed_panes_.emplace_back(key, sk.hot_idx);
    if (sk.cold != kNoCold) colds_[sk.cold].hi_registered = hi_registered(sk);
    sk.ck &= static_cast<std::uint8_t>(~(kHotDirty | kHotStored | kHotSpilled));
    sk.hot_idx = kNoPane;
  }
}

template <class K, class In, class KeyFn, class Policy>
bool WindowOperator<K, In, KeyFn, Policy>::combine(const SKey& sk, std::int64_t j, State& acc) {
  const std::int64_t end = sat_add(j, n_);
  const SCold* c = cold_if(sk);
  bool any = false;
  if (n_ == 1) {  // tumbling: the window is its one pane (no merge needed)
    if (sk.hot_idx == j && has_hot(sk)) {
      acc = sk.hot;
      return true;
    }
    if (c) c->older.for_range(j, end, [&](std::int64_t, const State& p) {
        acc = p;
        any = true;
      });
    return any;
  }
  if (c) c->older.for_range(j, end, [&](std::int64_t, const State& p) {
      policy_.merge(acc, p);
      any = true;
    });
  if (has_hot(sk) && sk.hot_idx >= j && sk.hot_idx < end) {
    policy_.merge(acc, sk.hot);
    any = true;
  }
  return any;
}

template <class K, class In, class KeyFn, class Policy>
void WindowOperator<K, In, KeyFn, Policy>::sliced_batch(const std::vector<Record<In>>& recs) {
  batch_keys_.resize(recs.size());
  batch_panes_.resize(recs.size());
  for (std::size_t k = 0; k < recs.size(); ++k) {
    if (event_time_ && recs[k].event_time == kNoEventTime) fail_no_event_time();
    batch_keys_[k] = key_fn_(recs[k].value);
    batch_panes_[k] = record_pane_index(recs[k].event_time);
  }
  constexpr std::size_t kHash = 24, kResolve = 8, kPanes = 4, kRing = 16;
  struct Resolved {
    SKey* sk;
    std::uint64_t inserts;
  };
  std::array<Resolved, kRing> ring{};
  const std::size_t n = recs.size();
  // The first pane that no window has ended in yet (the watermark holds in a batch).
  const std::int64_t open_from = pane_index(sat_add(watermark(), 1));
  for (std::size_t i = 0; i < n && i < kHash - kResolve; ++i) skeys_.prefetch(batch_keys_[i]);
  for (std::size_t t = 0; t < n + kResolve; ++t) {
    if (t + kHash - kResolve < n) skeys_.prefetch(batch_keys_[t + kHash - kResolve]);
    if (t < n) {
      SEntry* e = skeys_.find_entry(batch_keys_[t]);
      SKey* sk = e ? &e->second : nullptr;
      if (sk && sk->cold != kNoCold && needs_side_data(*sk, batch_panes_[t]))
        clink::prefetch(&colds_[sk->cold]);
      ring[t % kRing] = {sk, inserts_};
    }
    if (t >= kResolve - kPanes && t - (kResolve - kPanes) < n) {
      const std::size_t q = t - (kResolve - kPanes);
      const Resolved& r = ring[q % kRing];
      if (r.sk && r.inserts == inserts_ && r.sk->cold != kNoCold && needs_side_data(*r.sk, batch_panes_[q]))
        colds_[r.sk->cold].older.prefetch_append();
    }
    if (t >= kResolve) {
      const std::size_t p = t - kResolve;
      const Resolved& r = ring[p % kRing];
      SKey* sk = r.inserts == inserts_ ? r.sk : nullptr;
      // Most records add to their key's newest pane, still open (so late for nothing,
      // covered by no combination) and already marked for the next checkpoint.
      // Or they start its next pane, in order (next_pane_in_order).
      const std::int64_t i = batch_panes_[p];
      if (sk && ((sk->hot_idx == i && i >= open_from &&
                  (sk->ck & (kListed | kHotDirty | kHotSpilled)) == (kListed | kHotDirty)) ||
                 next_pane_in_order(*sk, i, open_from)))
        policy_.add(sk->hot, recs[p].value, recs[p].event_time);
      else
        sliced_element(recs[p], batch_keys_[p], sk);
    }
  }
}

template <class K, class In, class KeyFn, class Policy>
void WindowOperator<K, In, KeyFn, Policy>::sliced_element(const Record<In>& r, const K& key, SKey* hint) {
  const EventTime w_now = watermark();
  const std::int64_t i = record_pane_index(r.event_time);
  const std::int64_t j_last = last_window_of_pane(i);
  const TimeWindow last = window_of(j_last);
  if (sat_add(last.max_timestamp(), lateness_) <= w_now) {
    if (element_late(r.event_time)) late_element(r);
    return;
  }
  SKey* skp = hint;
  if (!skp) {
    auto [it, created] = skeys_.try_emplace(key);
    if (created) ++inserts_;
    skp = &it->second;
  }
  SKey& sk = *skp;
  const std::int64_t newest_before = sk.hot_idx;
  auto [state, new_pane] = pane(sk, i);
  policy_.add(*state, r.value, r.event_time);
  // Checkpoint bookkeeping: the newest pane (the common case) or the key's side data.
  const bool in_hot = i == sk.hot_idx && !(sk.ck & kHotSpilled);
  if (new_pane) mark(key, sk, in_hot ? kHotDirty | kKeyDirty : kKeyDirty);
  else if ((sk.ck & (kListed | kHotDirty)) != (kListed | kHotDirty)) mark(key, sk, in_hot ? kHotDirty : 0);
  // A late record into a pane a running combination covers: it is rebuilt at the next
  // firing (only records behind the watermark can reach such a pane).
  if (i < comb_hi_max_ && sk.cold != kNoCold && colds_[sk.cold].comb.covers(i)) colds_[sk.cold].comb.invalidate();
  if (!new_pane && last.max_timestamp() > w_now && m_ >= n_) return;  // the common case: done
  // No window holding the pane has ended (they all end after the pane does).
  const bool pane_open = i < kSafeHi && i128(offset_) + i128(i + 1) * g_ - 1 > w_now;
  if (!new_pane && pane_open) return;
  const std::int64_t j_first = first_window_of_pane(i);
  if (new_pane) register_windows(key, sk, i, newest_before, j_first, j_last, w_now);
  // Windows between their end and their cleanup fire again at once (late panes).
  if (!pane_open && window_of(j_first).max_timestamp() <= w_now) {
    for (std::int64_t j = j_last; j >= j_first; j -= m_) {
      if (!window_representable(j) && j != j_last) break;
      TimeWindow w = window_of(j);
      if (cleanup_time(w) <= w_now) continue;
      if (w.max_timestamp() <= w_now) sliced_fire_late(key, sk, j, w);
    }
  }
}

template <class K, class In, class KeyFn, class Policy>
void WindowOperator<K, In, KeyFn, Policy>::register_windows(const K& key, SKey& sk, std::int64_t i, std::int64_t newest_before,
                                                           std::int64_t j_first, std::int64_t j_last, EventTime w_now) {
  const bool in_order = i >= sk.hot_idx;  // the new pane became the newest
  // An in-order pane registers only the windows past the highest one registered (one
  // window per pane when slide = pane), without walking the size / slide before it.
  // Nothing is stored here: a newest pane's windows are the highest registered.
  const std::int64_t hi = hi_registered(sk, newest_before);
  std::int64_t j_from = j_first;
  if (in_order && hi >= j_first) {
    if (hi >= j_last) return;
    j_from = m_ == 1 ? hi + 1 : static_cast<std::int64_t>(i128(j_first) + ((i128(hi) - j_first) / m_ + 1) * m_);
  }
  for (std::int64_t j = j_from; j <= j_last; j += m_) {
    if (!window_representable(j) && j != j_last) continue;
    TimeWindow w = window_of(j);
    const std::int64_t c = cleanup_time(w);
    if (c <= w_now) continue;
    // The window of the newest pane is the same for most records in a row: looked up
    // once (map iterators stay valid until the window is erased; sliced_timer resets).
    if (wkeys_last_ != wkeys_.end() && wkeys_last_->first == w.start) {
      add_window_key(wkeys_last_->second, key);
      continue;
    }
    auto [it, created] = wkeys_.try_emplace(w.start, WKeys{j, {}, dense_windows_});
    if (created && !dense_windows_ && !spare_keys_.empty()) {  // a cleaned window's list, its capacity kept
      it->second.keys = std::move(spare_keys_.back());
      spare_keys_.pop_back();
    }
    add_window_key(it->second, key);
    wkeys_last_ = it;
    if (created) {
      ns_.clear();
      encode_window(w, ns_);
      if (w.max_timestamp() > w_now) timers().register_event_time_timer(w.max_timestamp(), {}, ns_);
      if (c != w.max_timestamp() && c != kMaxEventTime) timers().register_event_time_timer(c, {}, ns_);
    }
  }
}

template <class K, class In, class KeyFn, class Policy>
void WindowOperator<K, In, KeyFn, Policy>::sliced_fire_late(const K& key, SKey& sk, std::int64_t j, const TimeWindow& w) {
  State acc = policy_.create();
  if (!combine(sk, j, acc)) return;
  mark(key, sk, kKeyDirty);
  PaneInfo pane = next_pane(sliced_stats(sk, j), w, false, false);
  emit_state(key, w, acc, pane);
}

// The last stages of the firing pipeline of window j over the keys in scan_: side data
// prefetched kCold keys ahead, pane storage kPanes ahead (the oldest pane if fn drops
// it: it is before `leave`; the newest if it enters window j), then fn.
template <class K, class In, class KeyFn, class Policy>
template <class Fn>
void WindowOperator<K, In, KeyFn, Policy>::for_resolved(std::int64_t j, std::int64_t leave, Fn&& fn) {
  const std::size_t n = scan_.size();
  constexpr std::size_t kCold = 24, kPanes = 12;
  for (std::size_t t = 0; t < n; ++t) {
    if (t + kCold < n) {
      const SKey& sk = scan_[t + kCold]->second;
      if (sk.cold != kNoCold) {  // a firing reads all of it (two lines, invertible)
        clink::prefetch(&colds_[sk.cold]);
        clink::prefetch(&colds_[sk.cold].comb);
        if (lateness_ > 0) clink::prefetch(&colds_[sk.cold].stats);
      }
    }
    if (t + kPanes < n) {
      const SKey& sk = scan_[t + kPanes]->second;
      // Its older panes hold the window's newest pane only if a newer one exists (or
      // the firing of a late record spilled it); a newest pane the firing spills
      // (spills_complete) is appended there.
      if (sk.cold != kNoCold) {
        const SCold& c = colds_[sk.cold];
        c.older.prefetch(leave, sk.hot_idx >= sat_add(j, n_) || (sk.ck & kHotSpilled));
        if (spills_complete(sk, j)) c.older.prefetch_append();
      }
    }
    fn(scan_[t]->first, scan_[t]->second);
  }
}

template <class K, class In, class KeyFn, class Policy>
template <class Fn>
void WindowOperator<K, In, KeyFn, Policy>::for_keys(const std::vector<K>& keys, std::int64_t j, std::int64_t leave, Fn&& fn) {
  constexpr std::size_t kHash = 24;
  scan_.clear();
  const std::size_t n = keys.size();
  for (std::size_t i = 0; i < n && i < kHash; ++i) skeys_.prefetch(keys[i]);
  for (std::size_t t = 0; t < n; ++t) {
    if (t + kHash < n) skeys_.prefetch(keys[t + kHash]);
    if (SEntry* e = skeys_.find_entry(keys[t])) scan_.push_back(e);
  }
  for_resolved(j, leave, fn);
}

// A key is in the list of window j exactly when it has a pane in [j, j + n): its panes
// register every window holding them that is not cleaned, and a cleaning drops only the
// panes of windows before j. So the scan visits the keys the list names (once each).
template <class K, class In, class KeyFn, class Policy>
template <class Fn>
void WindowOperator<K, In, KeyFn, Policy>::for_keys_in_window(std::int64_t j, std::int64_t leave, bool prefetch, Fn&& fn) {
  const std::int64_t end = sat_add(j, n_);
  const auto hot_in_window = [&](const SKey& sk) { return sk.hot_idx >= j && sk.hot_idx < end; };
  // Side data in table order makes this scan read it sequentially (the hardware
  // prefetches it) instead of at random: it is put back in order when too much is out
  // of order (new keys, freed slots, a rehash).
  std::size_t unordered = 0, with_side = 0;  // side data not right after the previous key's
  std::uint32_t prev = kNoCold;
  const auto count_order = [&](const SKey& sk) {
    if (sk.cold == kNoCold) return;
    ++with_side;
    unordered += sk.cold != prev + 1;
    prev = sk.cold;
  };
  if (!prefetch) {  // one pass, visiting as it goes; the order is mended for the next scan
    skeys_.for_each([&](SEntry& e) {
      SKey& sk = e.second;
      count_order(sk);
      if (hot_in_window(sk) || (sk.cold != kNoCold && colds_[sk.cold].older.any_in(j, end))) fn(e.first, sk);
    });
    if (unordered > with_side / 16) pack_side_data();
    return;
  }
  scan_.clear();
  skeys_.for_each([&](SEntry& e) {
    count_order(e.second);
    if (hot_in_window(e.second) || e.second.cold != kNoCold) scan_.push_back(&e);
  });
  if (unordered > with_side / 16) pack_side_data();
  for_resolved(j, leave, [&](const K& key, SKey& sk) {
    if (hot_in_window(sk) || colds_[sk.cold].older.any_in(j, end)) fn(key, sk);
  });
}

// Moves the keys' side data into table order (see for_keys_in_window).
template <class K, class In, class KeyFn, class Policy>
void WindowOperator<K, In, KeyFn, Policy>::pack_side_data() {
  decltype(colds_) packed;
  packed.reserve(colds_.size() - cold_free_.size());
  for (auto& e : skeys_) {
    SKey& sk = e.second;
    if (sk.cold == kNoCold) continue;
    packed.push_back(std::move(colds_[sk.cold]));
    sk.cold = static_cast<std::uint32_t>(packed.size() - 1);
  }
  colds_.swap(packed);
  cold_free_.clear();
}

template <class K, class In, class KeyFn, class Policy>
bool WindowOperator<K, In, KeyFn, Policy>::slide_key(const K& key, SKey& sk, std::int64_t j) {
  if constexpr (!policy_invertible<Policy>) {
    return false;
  } else {
    if (sk.cold == kNoCold) return false;
    SCold& c = colds_[sk.cold];
    const std::int64_t last = sat_add(j, n_ - 1);  // the window's last pane
    // It enters if it is the newest pane; else the key must have no pane there (its
    // newest pane, older, already moved to the older panes by the last firing).
    const bool enters = has_hot(sk) && sk.hot_idx == last;
    if (!enters && (has_hot(sk) || sk.hot_idx >= last)) return false;
    // The newest pane outlives the cleaning (so the key stays), the running combination
    // covers [j, last) exactly, and no older pane is before j.
    if (sk.hot_idx <= j || last == std::numeric_limits<std::int64_t>::max() || c.last_fired >= j || !c.comb.valid() ||
        c.comb.lo() != j || c.comb.hi() != last || (!c.older.empty() && c.older.front_index() < j))
      return false;
    c.last_fired = j;
    const bool leaves = !c.older.empty() && c.older.front_index() == j;
    State acc{};
    if (c.comb.advance(policy_, enters ? &sk.hot : nullptr, leaves ? &c.older.front() : nullptr, acc))
      fired_.emplace_back(key, std::move(acc));
    if (leaves) {  // what drop_panes_before(key, sk, j + 1) does here
      if (c.saved_max != kNoPane && j <= c.saved_max) removed_panes_.emplace_back(key, j);
      c.older.pop_front();
    }
    if (enters) spill_hot(sk);
    return true;
  }
}

// The order of a firing's results by key bytes (fired_order_: positions in fired_, the
// order the generic path's per-key timers fire in). A sliding window fires the same
// keys in the same (table) order window after window: when this firing's keys are the
// last one's in the same order (one sequential comparison), the last order holds and
// nothing is sorted.
template <class K, class In, class KeyFn, class Policy>
void WindowOperator<K, In, KeyFn, Policy>::order_fired() {
  const std::size_t n = fired_.size();
  bool same = n == fired_keys_.size();
  for (std::size_t t = 0; same && t < n; ++t) same = fired_[t].first == fired_keys_[t];
  if (same) return;
  fired_keys_.clear();
  std::vector<std::pair<K, std::uint32_t>> by_position, scratch;  // (only while sorting)
  by_position.reserve(n);
  for (std::size_t t = 0; t < n; ++t) {
    fired_keys_.push_back(fired_[t].first);
    by_position.emplace_back(fired_[t].first, static_cast<std::uint32_t>(t));
  }
  window_detail::sort_by_key_bytes(by_position, scratch);
  fired_order_.resize(n);
  for (std::size_t r = 0; r < n; ++r) fired_order_[r] = by_position[r].second;
}

template <class K, class In, class KeyFn, class Policy>
void WindowOperator<K, In, KeyFn, Policy>::sliced_timer(const Timer& t) {
  const TimeWindow w = decode_window(t.ns);
  auto it = wkeys_.find(w.start);
  if (it == wkeys_.end()) return;
  const std::int64_t c = cleanup_time(w);
  const bool fire = t.time == w.max_timestamp();
  const bool clean = t.time == c;
  WKeys& wk = it->second;
  const bool is_last = watermark() >= c;
  const std::int64_t keep_from = sat_add(wk.j, m_);
  fired_.clear();
  erase_.clear();
  // A sliding window's on-time firing that also cleans the window (no allowed lateness)
  // moves most keys' running combinations by one pane (slide_key).
  const bool slide = fire && clean && slides_by_one_pane();
  if (slide) comb_hi_max_ = std::max(comb_hi_max_, sat_add(wk.j, n_));
  auto visit = [&](const K& key, SKey& sk) {
    // Firing and cleaning change the key's side data (last fired, pane numbering, and
    // the watermark it records: which of its windows are cleaned).
    mark(key, sk, kKeyDirty);
    if (slide && slide_key(key, sk, wk.j)) return;
    if (fire) {
      SCold& cd = cold(sk);
      if (cd.last_fired < wk.j) {
        cd.last_fired = wk.j;
        State acc = policy_.create();
        if (window_result(sk, wk.j, acc)) fired_.emplace_back(key, std::move(acc));
        if (!is_last && lateness_ > 0) ++sliced_stats(sk, wk.j).emissions;
      }
    }
    if (spills_complete(sk, wk.j)) spill_hot(sk);
    if (clean) {
      drop_panes_before(key, sk, keep_from);
      // Only windows with allowed lateness keep pane numbering (they fire again after their
      // end): without it the firing leaves that third line of side data alone.
      if (lateness_ > 0 && sk.cold != kNoCold) std::erase_if(colds_[sk.cold].stats, [&](const auto& e) { return e.first <= wk.j; });
      if (key_empty(sk)) {
        if (sk.ck & kKeyStored) removed_keys_.push_back(key);
        free_cold(sk);
        erase_.push_back(key);  // not while for_keys holds pointers into the table
      }
    }
  };
  // A dense window or a list naming an eighth of the table: scanning the table in order
  // beats a random lookup per key.
  // Firing evicts the panes before the window, cleaning those before the next one.
  const std::int64_t leave = clean ? keep_from : wk.j;
  if (fire) dense_windows_ = dense_share(wk.added);
  if (wk.dense || scan_pays(wk.keys.size())) for_keys_in_window(wk.j, leave, !slide, visit);
  else for_keys(wk.keys, wk.j, leave, visit);
  for (const K& key : erase_) skeys_.erase(key);
  if (fire) {
    order_fired();
    PaneStats first;  // the on-time pane: always the first of the window for each key
    emit_states(w, next_pane(first, w, true, is_last), fired_, fired_order_);
  }
  if (clean) {
    if (wkeys_last_ == it) wkeys_last_ = wkeys_.end();
    if (spare_keys_.size() < 4 && wk.keys.capacity() > 0) {
      spare_keys_.push_back(std::move(wk.keys));
      spare_keys_.back().clear();
    }
    wkeys_.erase(it);
  }
}

}  // namespace clink
