#pragma once
// Binary encoding of one key's NFA state (computation states, held-back matches and the
// key's part of the shared buffer: its events with ids and reference counts, its nodes
// with their versioned, counted edges) for checkpoints. Events use StateCodec<T>. Part
// of the checkpoint format of the CEP operator.
#include <cstdint>
#include <tuple>

#include <absl/container/flat_hash_map.h>
#include <string>
#include <string_view>
#include <vector>

#include "clink/cep/nfa.hpp"
#include "clink/state/state_codec.hpp"

namespace clink::cep {

namespace codec_detail {
inline void put_i64(std::int64_t v, std::string& out) { put_varint(zigzag(v), out); }
inline std::int64_t get_i64(std::string_view& in) { return unzigzag(get_varint(in)); }

inline void encode_cs(const ComputationState& cs, std::string& out) {
  put_varint(static_cast<std::uint64_t>(cs.state), out);
  put_i64(cs.node, out);
  cs.version.encode(out);
  put_i64(cs.start_ts, out);
  put_i64(cs.prev_ts, out);
  out.push_back(cs.has_start_event ? 1 : 0);
  if (cs.has_start_event) {
    put_i64(cs.start_ts, out);  // the start event's timestamp (the format keeps both)
    put_i64(cs.start_id, out);
  }
}
inline ComputationState decode_cs(std::string_view& in, std::size_t states) {
  ComputationState cs;
  const std::uint64_t state = get_varint(in);
  if (state >= states)
    throw ClinkError("cep: restored NFA state " + std::to_string(state) + " does not exist in the pattern (" +
                     std::to_string(states) + " states); was the pattern changed?");
  cs.state = static_cast<std::int16_t>(state);
  cs.node = static_cast<std::int32_t>(get_i64(in));
  cs.version = DeweyNumber::decode(in);
  cs.start_ts = get_i64(in);
  cs.prev_ts = get_i64(in);
  if (in.empty()) throw ClinkError("cep: truncated computation state");
  cs.has_start_event = in.front() != 0;
  in.remove_prefix(1);
  if (cs.has_start_event) {
    const EventTime event_ts = get_i64(in);
    if (event_ts != cs.start_ts)
      throw ClinkError("cep: restored computation state starts at " + std::to_string(cs.start_ts) +
                       " but its first event is at " + std::to_string(event_ts) + " (corrupt state)");
    cs.start_id = static_cast<std::int32_t>(get_i64(in));
  }
  return cs;
}
}  // namespace codec_detail

// A key's nodes are those reachable from its computation states; they are written with
// key-local numbers (events first, then nodes, each in first-reached order).
template <class T>
void encode_nfa_state(const NfaKeyState<T>& st, std::string& out) {
  using namespace codec_detail;
  const SharedBuffer<T>& buf = st.buffer;
  std::vector<std::int32_t> nodes, events;
  absl::flat_hash_map<std::int32_t, std::int32_t> node_local, event_local;
  std::vector<std::int32_t> stack;
  auto reach = [&](std::int32_t n) {
    if (n < 0 || node_local.contains(n)) return;
    stack.push_back(n);
    while (!stack.empty()) {
      const std::int32_t cur = stack.back();
      stack.pop_back();
      if (!node_local.try_emplace(cur, static_cast<std::int32_t>(nodes.size())).second) continue;
      nodes.push_back(cur);
      const auto& node = buf.node(cur);
      if (event_local.try_emplace(node.event, static_cast<std::int32_t>(events.size())).second)
        events.push_back(node.event);
      for (const auto& e : node.edges)
        if (e.target >= 0 && !node_local.contains(e.target)) stack.push_back(e.target);
    }
  };
  for (const auto& cs : st.partial) reach(cs.node);
  for (const auto& cs : st.completed) reach(cs.node);
  if (nodes.size() != buf.live_nodes() || events.size() != buf.live_events())
    throw ClinkError("cep: shared buffer of a key holds " + std::to_string(buf.live_nodes()) + " nodes / " +
                     std::to_string(buf.live_events()) + " events but " + std::to_string(nodes.size()) + " / " +
                     std::to_string(events.size()) + " are reachable (reference counting is broken)");
  auto local_node = [&](std::int32_t n) { return n < 0 ? -1 : node_local.at(n); };
  auto write_cs = [&](const ComputationState& cs) {
    ComputationState c = cs;
    c.node = local_node(cs.node);
    encode_cs(c, out);
  };
  put_varint(st.partial.size(), out);
  for (const auto& cs : st.partial) write_cs(cs);
  put_varint(st.completed.size(), out);
  for (const auto& cs : st.completed) write_cs(cs);
  put_varint(events.size(), out);
  for (const std::int32_t e : events) {
    const auto& slot = buf.event_slot(e);
    put_i64(slot.refs, out);
    put_i64(slot.id.ts, out);
    put_i64(slot.id.id, out);
    StateCodec<T>::encode(slot.value, out);
  }
  put_varint(nodes.size(), out);
  for (const std::int32_t n : nodes) {
    const auto& node = buf.node(n);
    put_i64(node.refs, out);
    put_i64(event_local.at(node.event), out);
    put_i64(node.page, out);
    put_varint(node.edges.size(), out);
    for (const auto& e : node.edges) {
      put_i64(local_node(e.target), out);
      put_i64(e.refs, out);
      e.version.encode(out);
    }
  }
  put_varint(buf.counters().size(), out);
  for (const auto& [ts, n] : buf.counters()) {
    put_i64(ts, out);
    put_i64(n, out);
  }
}

template <class T>
NfaKeyState<T> decode_nfa_state(std::string_view in, const CompiledNfa<T>& nfa, SharedBufferPool<T>* pool = nullptr) {
  using namespace codec_detail;
  NfaKeyState<T> st(pool);
  const std::size_t n_states = nfa.states.size();
  for (auto n = get_varint(in); n > 0; --n) st.partial.push_back(decode_cs(in, n_states));
  for (auto n = get_varint(in); n > 0; --n) st.completed.push_back(decode_cs(in, n_states));
  std::vector<std::int32_t> events(get_varint(in));
  for (auto& e : events) {
    const auto refs = static_cast<std::int32_t>(get_i64(in));
    EventId id;
    id.ts = get_i64(in);
    id.id = static_cast<std::int32_t>(get_i64(in));
    e = st.buffer.import_event(StateCodec<T>::decode(in), id, refs);
  }
  const auto n_nodes = get_varint(in);
  std::vector<std::int32_t> nodes;
  std::vector<std::vector<std::tuple<std::int32_t, std::int32_t, DeweyNumber>>> edges(n_nodes);
  for (std::uint64_t i = 0; i < n_nodes; ++i) {
    const auto refs = static_cast<std::int32_t>(get_i64(in));
    const auto ev = get_i64(in);
    const auto page = get_i64(in);
    if (ev < 0 || static_cast<std::size_t>(ev) >= events.size() || page < 0 ||
        static_cast<std::size_t>(page) >= nfa.pages.size())
      throw ClinkError("cep: restored shared buffer node refers to a missing event or pattern name");
    nodes.push_back(st.buffer.import_node(events[static_cast<std::size_t>(ev)], static_cast<std::int32_t>(page), refs));
    for (auto k = get_varint(in); k > 0; --k) {
      const auto target = static_cast<std::int32_t>(get_i64(in));
      const auto erefs = static_cast<std::int32_t>(get_i64(in));
      edges[i].emplace_back(target, erefs, DeweyNumber::decode(in));
    }
  }
  auto global = [&](std::int32_t local) {
    if (local < 0) return -1;
    if (static_cast<std::size_t>(local) >= nodes.size()) throw ClinkError("cep: restored edge to a missing node");
    return nodes[static_cast<std::size_t>(local)];
  };
  for (std::size_t i = 0; i < nodes.size(); ++i)
    for (auto& [target, refs, version] : edges[i])
      st.buffer.mutable_node(nodes[i]).edges.push_back({global(target), refs, std::move(version)});
  for (auto& cs : st.partial) cs.node = global(cs.node);
  for (auto& cs : st.completed) cs.node = global(cs.node);
  absl::InlinedVector<std::pair<EventTime, std::int32_t>, 1> counters(get_varint(in));
  for (auto& [ts, n] : counters) {
    ts = get_i64(in);
    n = static_cast<std::int32_t>(get_i64(in));
  }
  st.buffer.set_counters(std::move(counters));
  if (!in.empty()) throw ClinkError("cep: trailing bytes after a restored NFA state");
  return st;
}

}  // namespace clink::cep
