#pragma once
// WindowOperator, continued: checkpointing of the window tables through the keyed state backend
// (the layout is described above write_state in window_operator.hpp).
// Included at the end of window_operator.hpp, which declares these members.
#include "clink/windows/window_operator.hpp"

namespace clink {

template <class K, class In, class KeyFn, class Policy>
void WindowOperator<K, In, KeyFn, Policy>::write_state() {
  if constexpr (!kCodec) {
    throw ClinkError("window '" + this->ctx().operator_name() + "': its window state type (" +
                     typeid(State).name() +
                     ") has no clink::StateCodec specialisation, so a job with this window cannot take "
                     "checkpoints or savepoints; define StateCodec<accumulator type> (state_codec.hpp)");
  } else {
    std::array<Slots, kStates> slots;
    std::string kb, ns, v;
    auto key_of = [&](const K& k) {
      kb.clear();
      KeyCodec<K>::encode(k, kb);
    };
    for (const auto& [wk, e] : table_) {
      key_of(wk.first);
      ns.clear();
      encode_window(wk.second, ns);
      v.clear();
      v.push_back(static_cast<char>((e.has_contents ? 1 : 0) | (e.stats.on_time_done ? 2 : 0)));
      put_varint(static_cast<std::uint64_t>(e.stats.emissions), v);
      StateCodec<State>::encode(e.state, v);
      slots[kContents].emplace(window_detail::state_slot(kb, ns), v);
    }
    for (const auto& [wk, t] : trigger_state_) {
      key_of(wk.first);
      ns.clear();
      encode_window(wk.second, ns);
      v.clear();
      StateCodec<std::int64_t>::encode(t, v);
      slots[kTrigger].emplace(window_detail::state_slot(kb, ns), v);
    }
    for (const auto& [k, set] : merging_sets_) {
      key_of(k);
      v.clear();
      put_varint(set.mapping().size(), v);
      for (const auto& [w, sw] : set.mapping()) {
        encode_window(w, v);
        encode_window(sw, v);
      }
      slots[kMerging].emplace(window_detail::state_slot(kb, {}), v);
    }
    const EventTime wm = watermark();
    for (const auto& [k, sk] : skeys_) {
      key_of(k);
      auto pane_entry = [&](std::int64_t i, const State& st) {
        ns.clear();
        StateCodec<std::int64_t>::encode(i, ns);
        v.clear();
        StateCodec<State>::encode(st, v);
        slots[kPanes].emplace(window_detail::state_slot(kb, ns), v);
      };
      const SCold* c = cold_if(sk);
      if (c) c->older.for_each(pane_entry);
      if (sk.hot_idx != kNoPane) pane_entry(sk.hot_idx, sk.hot);
      const SCold none;
      const SCold& cd = c ? *c : none;
      // Relative to the newest pane (small numbers): flags (which fields are absent:
      // 1 watermark, 2 highest registered, 4 last fired, 8 no fired windows), then the
      // present ones as zig-zag varint differences.
      const std::int64_t base = sk.hot_idx == kNoPane ? 0 : sk.hot_idx;
      const std::int64_t base_time = rel(base, g_, 0);
      constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
      v.clear();
      v.push_back(static_cast<char>((wm == kMin ? 1 : 0) | (cd.hi_registered == kMin ? 2 : 0) |
                                    (cd.last_fired == kMin ? 4 : 0) | (cd.stats.empty() ? 8 : 0)));
      if (wm != kMin) StateCodec<std::int64_t>::encode(rel(wm, base_time, -1), v);
      if (cd.hi_registered != kMin) StateCodec<std::int64_t>::encode(rel(cd.hi_registered, base, -1), v);
      if (cd.last_fired != kMin) StateCodec<std::int64_t>::encode(rel(cd.last_fired, base, -1), v);
      if (!cd.stats.empty()) {
        put_varint(cd.stats.size(), v);
        for (const auto& [j, st] : cd.stats) {
          StateCodec<std::int64_t>::encode(rel(j, base, -1), v);
          StateCodec<std::int64_t>::encode(st.emissions, v);
          v.push_back(st.on_time_done ? 1 : 0);
        }
      }
      slots[kKeys].emplace(window_detail::state_slot(kb, {}), v);
    }
    for (int i = 0; i < kStates; ++i) sync(i, slots[i]);
    this->ctx().operator_state().list(kWatermarkList, Redistribution::kUnion).assign(1, std::to_string(wm));
  }
}

template <class K, class In, class KeyFn, class Policy>
void WindowOperator<K, In, KeyFn, Policy>::sync(int i, Slots& cur) {
  KeyedStateBackend& b = backend();
  const StateId id = state_id(i);
  std::vector<std::string> gone;
  const KeyGroupRange kgs = b.key_groups();
  for (int kg = kgs.first; kg <= kgs.last; ++kg)
    b.for_each_entry(id, kg, [&](std::string_view k, std::string_view n, std::string_view val) {
      std::string slot = window_detail::state_slot(k, n);
      auto it = cur.find(slot);
      if (it == cur.end()) gone.push_back(std::move(slot));
      else if (it->second == val) cur.erase(it);
    });
  for (const auto& slot : gone) {
    auto [k, n] = window_detail::split_slot(slot);
    b.set_current_key(k);
    b.set_current_namespace(n);
    b.remove(id);
  }
  for (const auto& [slot, val] : cur) {
    auto [k, n] = window_detail::split_slot(slot);
    b.set_current_key(k);
    b.set_current_namespace(n);
    b.put(id, val);
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
    if (sk.hot_idx != kNoPane) idx.push_back(sk.hot_idx);
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
        it->second.keys.push_back(key);
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
