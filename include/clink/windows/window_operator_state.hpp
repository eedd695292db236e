#pragma once
// WindowOperator, continued: checkpointing of the window tables through the keyed state backend
// (the layout is described above write_state in window_operator.hpp).
// Included at the end of window_operator.hpp, which declares these members.
#include "clink/windows/window_operator.hpp"

namespace clink {

template <class K, class In, class KeyFn, class Policy>
void WindowOperator<K, In, KeyFn, Policy>::put_entry(int state, std::string_view key, std::string_view ns,
                                                     std::string_view value) {
  KeyedStateBackend& b = backend();
  b.set_current_key(key);
  b.set_current_namespace(ns);
  b.put(state_id(state), value);
}

template <class K, class In, class KeyFn, class Policy>
void WindowOperator<K, In, KeyFn, Policy>::remove_entry(int state, std::string_view key, std::string_view ns) {
  KeyedStateBackend& b = backend();
  b.set_current_key(key);
  b.set_current_namespace(ns);
  b.remove(state_id(state));
}

// Writes what changed since the last checkpoint: removals first (an entry removed and
// created again since is then written), then the changed entries and keys.
template <class K, class In, class KeyFn, class Policy>
void WindowOperator<K, In, KeyFn, Policy>::write_state() {
  if constexpr (!kCodec) {
    throw ClinkError("window '" + this->ctx().operator_name() + "': its window state type (" +
                     typeid(State).name() +
                     ") has no clink::StateCodec specialisation, so a job with this window cannot take "
                     "checkpoints or savepoints; define StateCodec<accumulator type> (state_codec.hpp)");
  } else {
    std::string kb, ns, v;
    auto key_of = [&](const K& k) {
      kb.clear();
      KeyCodec<K>::encode(k, kb);
    };
    auto window_ns = [&](const TimeWindow& w) {
      ns.clear();
      encode_window(w, ns);
    };
    for (const WKey& wk : removed_entries_) {
      key_of(wk.first);
      window_ns(wk.second);
      remove_entry(kContents, kb, ns);
    }
    for (const WKey& wk : dirty_entries_) {
      auto it = table_.find(wk);
      if (it == table_.end() || !(it->second.ck & kListed)) continue;  // gone, or listed twice
      Entry& e = it->second;
      key_of(wk.first);
      window_ns(wk.second);
      v.clear();
      v.push_back(static_cast<char>((e.has_contents ? 1 : 0) | (e.stats.on_time_done ? 2 : 0)));
      put_varint(static_cast<std::uint64_t>(e.stats.emissions), v);
      StateCodec<State>::encode(e.state, v);
      put_entry(kContents, kb, ns, v);
      e.ck = static_cast<std::uint8_t>((e.ck & ~kListed) | kStored);
    }
    for (const WKey& wk : trigger_dirty_) {
      key_of(wk.first);
      window_ns(wk.second);
      auto it = trigger_state_.find(wk);
      if (it == trigger_state_.end()) {
        remove_entry(kTrigger, kb, ns);
        continue;
      }
      v.clear();
      StateCodec<std::int64_t>::encode(it->second, v);
      put_entry(kTrigger, kb, ns, v);
    }
    for (const K& k : merging_dirty_) {
      key_of(k);
      auto it = merging_sets_.find(k);
      if (it == merging_sets_.end()) {
        remove_entry(kMerging, kb, {});
        continue;
      }
      v.clear();
      put_varint(it->second.mapping().size(), v);
      for (const auto& [w, sw] : it->second.mapping()) {
        encode_window(w, v);
        encode_window(sw, v);
      }
      put_entry(kMerging, kb, {}, v);
    }
    for (const auto& [k, i] : removed_panes_) {
      key_of(k);
      ns.clear();
      StateCodec<std::int64_t>::encode(i, ns);
      remove_entry(kPanes, kb, ns);
    }
    for (const K& k : removed_keys_) {
      key_of(k);
      remove_entry(kKeys, kb, {});
    }
    for (const K& k : dirty_keys_) {
      auto it = skeys_.find(k);
      if (it == skeys_.end() || !(it->second.ck & kListed)) continue;
      write_sliced_key(k, it->second, kb, ns, v);
    }
    dirty_entries_.clear();
    removed_entries_.clear();
    trigger_dirty_.clear();
    merging_dirty_.clear();
    removed_panes_.clear();
    removed_keys_.clear();
    dirty_keys_.clear();
    this->ctx().operator_state().list(kWatermarkList, Redistribution::kUnion).assign(1, std::to_string(watermark()));
  }
}

template <class K, class In, class KeyFn, class Policy>
void WindowOperator<K, In, KeyFn, Policy>::compact_change_lists() {
  constexpr std::uint8_t kSeen = 128;
  std::erase_if(dirty_keys_, [&](const K& k) {
    auto it = skeys_.find(k);
    if (it == skeys_.end() || !(it->second.ck & kListed) || (it->second.ck & kSeen)) return true;
    it->second.ck |= kSeen;
    return false;
  });
  for (const K& k : dirty_keys_) skeys_.find(k)->second.ck &= static_cast<std::uint8_t>(~kSeen);
  std::erase_if(dirty_entries_, [&](const WKey& wk) {
    auto it = table_.find(wk);
    if (it == table_.end() || !(it->second.ck & kListed) || (it->second.ck & kSeen)) return true;
    it->second.ck |= kSeen;
    return false;
  });
  for (const WKey& wk : dirty_entries_) table_.find(wk)->second.ck &= static_cast<std::uint8_t>(~kSeen);
  if constexpr (kCodec) {
    KeyedStateBackend* b = this->ctx().keyed_state_backend();
    std::string kb, ns;
    if (trigger_dirty_.size() > 2 * trigger_state_.size() + 4096) {
      for (auto it = trigger_dirty_.begin(); it != trigger_dirty_.end();) {
        auto cur = it++;
        if (trigger_state_.contains(*cur)) continue;
        if (b) {
          kb.clear();
          KeyCodec<K>::encode(cur->first, kb);
          ns.clear();
          encode_window(cur->second, ns);
          remove_entry(kTrigger, kb, ns);
        }
        trigger_dirty_.erase(cur);
      }
    }
    if (merging_dirty_.size() > 2 * merging_sets_.size() + 4096) {
      for (auto it = merging_dirty_.begin(); it != merging_dirty_.end();) {
        auto cur = it++;
        if (merging_sets_.contains(*cur)) continue;
        if (b) {
          kb.clear();
          KeyCodec<K>::encode(*cur, kb);
          remove_entry(kMerging, kb, {});
        }
        merging_dirty_.erase(cur);
      }
    }
  }
}

// A changed key of the sliced path: its changed panes and, if changed, its side data.
template <class K, class In, class KeyFn, class Policy>
void WindowOperator<K, In, KeyFn, Policy>::write_sliced_key(const K& k, SKey& sk, std::string& kb, std::string& ns,
                                                            std::string& v) {
  if constexpr (kCodec) {
    kb.clear();
    KeyCodec<K>::encode(k, kb);
    auto put_pane = [&](std::int64_t i, const State& st) {
      ns.clear();
      StateCodec<std::int64_t>::encode(i, ns);
      v.clear();
      StateCodec<State>::encode(st, v);
      put_entry(kPanes, kb, ns, v);
    };
    SCold* c = sk.cold == kNoCold ? nullptr : &colds_[sk.cold];
    if (c && c->dirty_from != std::numeric_limits<std::int64_t>::max()) {
      c->older.for_from(c->dirty_from, put_pane);
      c->dirty_from = std::numeric_limits<std::int64_t>::max();
    }
    if (c && !c->older.empty()) c->saved_max = std::max(c->saved_max, c->older.last_index());
    if ((sk.ck & kHotDirty) && sk.hot_idx != kNoPane) {
      put_pane(sk.hot_idx, sk.hot);
      sk.ck |= kHotStored;
    }
    if ((sk.ck & kKeyDirty) || !(sk.ck & kKeyStored)) {
      const SCold none(nullptr);
      const SCold& cd = c ? *c : none;
      // Relative to the newest pane (small numbers): flags (which fields are absent:
      // 1 watermark, 2 highest registered, 4 last fired, 8 no fired windows), then the
      // present ones as zig-zag varint differences.
      const EventTime wm = watermark();
      const std::int64_t hi_reg = hi_registered(sk);
      const std::int64_t base = sk.hot_idx == kNoPane ? 0 : sk.hot_idx;
      const std::int64_t base_time = rel(base, g_, 0);
      constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
      v.clear();
      v.push_back(static_cast<char>((wm == kMin ? 1 : 0) | (hi_reg == kMin ? 2 : 0) |
                                    (cd.last_fired == kMin ? 4 : 0) | (cd.stats.empty() ? 8 : 0)));
      if (wm != kMin) StateCodec<std::int64_t>::encode(rel(wm, base_time, -1), v);
      if (hi_reg != kMin) StateCodec<std::int64_t>::encode(rel(hi_reg, base, -1), v);
      if (cd.last_fired != kMin) StateCodec<std::int64_t>::encode(rel(cd.last_fired, base, -1), v);
      if (!cd.stats.empty()) {
        put_varint(cd.stats.size(), v);
        for (const auto& [j, st] : cd.stats) {
          StateCodec<std::int64_t>::encode(rel(j, base, -1), v);
          StateCodec<std::int64_t>::encode(st.emissions, v);
          v.push_back(st.on_time_done ? 1 : 0);
        }
      }
      put_entry(kKeys, kb, {}, v);
      sk.ck |= kKeyStored;
    }
    sk.ck &= static_cast<std::uint8_t>(~(kListed | kHotDirty | kKeyDirty));
  }
}

template <class K, class In, class KeyFn, class Policy>
void WindowOperator<K, In, KeyFn, Policy>::restore_state() {
  if constexpr (kCodec) {
    KeyedStateBackend* b = this->ctx().keyed_state_backend();
    if (!b) return;
    // The watermark first (the lowest of the old subtasks'): no restored timer is due.
    const auto& wl = this->ctx().operator_state().list(kWatermarkList, Redistribution::kUnion);
    if (!wl.empty()) {
      EventTime w = kMaxEventTime;
      for (const auto& item : wl) w = std::min<EventTime>(w, std::stoll(item));
      timers().advance_watermark(w, [](const Timer&) {});
    }
    absl::flat_hash_map<K, EventTime> key_watermarks;
    const KeyGroupRange kgs = b->key_groups();
    for (int kg = kgs.first; kg <= kgs.last; ++kg) {
      b->for_each_entry(state_id(kContents), kg, [&](std::string_view k, std::string_view n, std::string_view val) {
        Entry& e = table_[WKey{decode_key<K>(k), decode_window(n)}];
        if (val.empty()) throw ClinkError("window state: truncated entry");
        const auto flags = static_cast<std::uint8_t>(val.front());
        val.remove_prefix(1);
        e.has_contents = (flags & 1) != 0;
        e.stats.on_time_done = (flags & 2) != 0;
        e.stats.emissions = static_cast<std::int64_t>(get_varint(val));
        e.state = StateCodec<State>::decode(val);
        e.ck = kStored;
      });
      b->for_each_entry(state_id(kTrigger), kg, [&](std::string_view k, std::string_view n, std::string_view val) {
        trigger_state_[WKey{decode_key<K>(k), decode_window(n)}] = StateCodec<std::int64_t>::decode(val);
      });
      b->for_each_entry(state_id(kMerging), kg, [&](std::string_view k, std::string_view, std::string_view val) {
        MergingWindowSet::Mapping m(get_varint(val));
        for (auto& [w, sw] : m) {
          if (val.size() < 32) throw ClinkError("window state: truncated merging windows");
          w = decode_window(val.substr(0, 16));
          sw = decode_window(val.substr(16, 16));
          val.remove_prefix(32);
        }
        merging_sets_[decode_key<K>(k)].restore(std::move(m));
      });
      b->for_each_entry(state_id(kPanes), kg, [&](std::string_view k, std::string_view n, std::string_view val) {
        SKey& sk = skeys_[decode_key<K>(k)];
        std::string_view idx = n;
        *pane(sk, StateCodec<std::int64_t>::decode(idx)).first = StateCodec<State>::decode(val);
      });
      b->for_each_entry(state_id(kKeys), kg, [&](std::string_view k, std::string_view, std::string_view val) {
        K key = decode_key<K>(k);
        SKey& sk = skeys_[key];
        SCold& cd = cold(sk);
        const std::int64_t base = sk.hot_idx == kNoPane ? 0 : sk.hot_idx;
        const std::int64_t base_time = rel(base, g_, 0);
        constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
        if (val.empty()) throw ClinkError("window state: truncated key entry");
        const auto flags = static_cast<std::uint8_t>(val.front());
        val.remove_prefix(1);
        auto field = [&](std::uint8_t absent, std::int64_t b) {
          return (flags & absent) ? kMin : rel(StateCodec<std::int64_t>::decode(val), b, 1);
        };
        key_watermarks[key] = field(1, base_time);
        cd.hi_registered = field(2, base);
        cd.last_fired = field(4, base);
        cd.stats.resize((flags & 8) ? 0 : get_varint(val));
        for (auto& [j, st] : cd.stats) {
          j = rel(StateCodec<std::int64_t>::decode(val), base, 1);
          st.emissions = StateCodec<std::int64_t>::decode(val);
          if (val.empty()) throw ClinkError("window state: truncated key entry");
          st.on_time_done = val.front() != 0;
          val.remove_prefix(1);
        }
      });
    }
    // What the backend holds now is what the tables hold: nothing to write yet.
    for (auto& [key, sk] : skeys_) {
      sk.ck = static_cast<std::uint8_t>(kKeyStored | (sk.hot_idx != kNoPane ? kHotStored : 0));
      if (sk.cold == kNoCold) continue;
      SCold& c = colds_[sk.cold];
      c.dirty_from = std::numeric_limits<std::int64_t>::max();
      c.saved_max = c.older.empty() ? kNoPane : c.older.last_index();
    }
    dirty_keys_.clear();
    if (sliced_) rebuild_window_lists(key_watermarks);
  }
}

template <class K, class In, class KeyFn, class Policy>
void WindowOperator<K, In, KeyFn, Policy>::rebuild_window_lists(const absl::flat_hash_map<K, EventTime>& key_watermarks) {
  std::vector<std::int64_t> idx;
  const EventTime now_wm = watermark();
  for (const auto& [key, sk] : skeys_) {
    auto kw = key_watermarks.find(key);
    const EventTime w_key = kw == key_watermarks.end() ? now_wm : kw->second;
    idx.clear();
    if (const SCold* c = cold_if(sk)) c->older.for_each([&](std::int64_t i, const State&) { idx.push_back(i); });
    if (has_hot(sk)) idx.push_back(sk.hot_idx);
    std::sort(idx.begin(), idx.end());
    std::int64_t done = std::numeric_limits<std::int64_t>::min();
    for (std::int64_t i : idx) {
      const std::int64_t j_last = last_window_of_pane(i);
      for (std::int64_t j = std::max(first_window_of_pane(i), done); j <= j_last; j += m_) {
        if (j == done) continue;
        if (!window_representable(j) && j != j_last) continue;
        TimeWindow w = window_of(j);
        const std::int64_t c = cleanup_time(w);
        if (c <= w_key) continue;
        auto [it, created] = wkeys_.try_emplace(w.start, WKeys{j, {}});
        add_window_key(it->second, key);
        if (created) {
          ns_.clear();
          encode_window(w, ns_);
          if (w.max_timestamp() > now_wm) timers().register_event_time_timer(w.max_timestamp(), {}, ns_);
          if (c != w.max_timestamp() && c != kMaxEventTime) timers().register_event_time_timer(c, {}, ns_);
        }
      }
      done = std::max(done, j_last);
    }
  }
}

}  // namespace clink
