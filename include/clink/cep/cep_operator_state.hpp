#pragma once
// CepOperator, continued: checkpointing through the keyed state backend. Included at the
// end of cep_operator.hpp.
//
// Per key (the key's bytes address the entries, so key groups and rescaling work as for
// any keyed state): "cep-nfa" = encode_nfa_state (computation states + shared buffer),
// "cep-queue" = map timestamp -> the records buffered at that timestamp, in arrival
// order. Only keys changed since the last checkpoint are written; keys that went idle
// are removed. The watermark goes to operator state (union list; the lowest wins on a
// restore, so no restored record is wrongly late).
#include "clink/cep/cep_operator.hpp"

namespace clink::cep {

template <class T, class U, class K>
void CepOperator<T, U, K>::write_state() {
  if constexpr (!HasStateCodec<T>) {
    throw ClinkError("cep operator '" + this->ctx().operator_name() + "': the event type " + typeid(T).name() +
                     " has no clink::StateCodec specialisation, so a job with this pattern cannot take checkpoints "
                     "or savepoints; define StateCodec<event type> (state_codec.hpp)");
  } else {
    KeyedStateBackend& b = *backend_;
    b.set_current_namespace({});
    std::string kb, v, uk;
    for (const K& k : removed_keys_) {
      if (index_.contains(k)) continue;  // came back: written below
      kb.clear();
      KeyCodec<K>::encode(k, kb);
      b.set_current_key(kb);
      b.remove(nfa_id_);
      b.map_clear(queue_id_);
    }
    removed_keys_.clear();
    for (const std::int32_t s : dirty_) {
      Slot& sl = slots_[static_cast<std::size_t>(s)];
      sl.listed = false;
      if (!sl.live || !sl.dirty) continue;
      sl.dirty = false;
      sl.persisted = true;
      kb.clear();
      KeyCodec<K>::encode(sl.key, kb);
      b.set_current_key(kb);
      v.clear();
      encode_nfa_state(sl.nfa, v);
      b.put(nfa_id_, v);
      b.map_clear(queue_id_);
      for (std::size_t i = 0; i < sl.queue.size();) {
        const EventTime ts = sl.queue[i].first;
        std::size_t j = i;
        while (j < sl.queue.size() && sl.queue[j].first == ts) ++j;
        uk.clear();
        KeyCodec<EventTime>::encode(ts, uk);
        v.clear();
        put_varint(j - i, v);
        for (; i < j; ++i) StateCodec<T>::encode(sl.queue[i].second, v);
        b.map_put(queue_id_, uk, v);
      }
    }
    dirty_.clear();
    this->ctx().operator_state().list(kWatermarkList, Redistribution::kUnion).assign(1, std::to_string(watermark_));
  }
}

template <class T, class U, class K>
void CepOperator<T, U, K>::restore_state() {
  if constexpr (HasStateCodec<T>) {
    const auto& wl = this->ctx().operator_state().list(kWatermarkList, Redistribution::kUnion);
    if (!wl.empty()) {
      EventTime w = kMaxEventTime;
      for (const auto& item : wl) w = std::min<EventTime>(w, std::stoll(item));
      watermark_ = w;
      this->ctx().timer_service().advance_watermark(w, [](const Timer&) {});
    }
    KeyedStateBackend& b = *backend_;
    const KeyGroupRange kgs = b.key_groups();
    for (int kg = kgs.first; kg <= kgs.last; ++kg) {
      b.for_each_entry(nfa_id_, kg, [&](std::string_view k, std::string_view, std::string_view val) {
        const std::int32_t s = slot_for(decode_key<K>(k));
        slots_[static_cast<std::size_t>(s)].nfa = decode_nfa_state<T>(val, nfa_.compiled(), &pool_);
      });
      b.for_each_entry(queue_id_, kg, [&](std::string_view k, std::string_view, std::string_view entry) {
        const std::int32_t s = slot_for(decode_key<K>(k));
        const auto n_uk = get_varint(entry);
        std::string_view uk = entry.substr(0, n_uk);
        entry.remove_prefix(n_uk);
        const auto n_uv = get_varint(entry);
        std::string_view uv = entry.substr(0, n_uv);
        const EventTime ts = KeyCodec<EventTime>::decode(uk);
        auto& q = slots_[static_cast<std::size_t>(s)].queue;
        for (auto n = get_varint(uv); n > 0; --n) q.emplace_back(ts, StateCodec<T>::decode(uv));
      });
    }
    for (std::size_t s = 0; s < slots_.size(); ++s) {
      Slot& sl = slots_[s];
      if (!sl.live) continue;
      std::stable_sort(sl.queue.begin(), sl.queue.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      sl.persisted = true;  // (an idle one is freed here and removed at the next checkpoint)
      after_change(static_cast<std::int32_t>(s));
      sl.dirty = false;  // as restored: nothing to write until it changes
    }
    for (const std::int32_t s : dirty_) slots_[static_cast<std::size_t>(s)].listed = false;
    dirty_.clear();
  }
}

}  // namespace clink::cep
