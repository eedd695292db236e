#pragma once
// Binary encoding of one key's NFA state (computation states, held-back matches and the
// shared buffer) for checkpoints. The shared buffer is written as it is: event slots
// with their ids and reference counts, nodes with their versioned, counted edges; free
// slots are kept (one byte) so node and event references stay valid. Events use
// StateCodec<T>. Part of the checkpoint format of the CEP operator.
#include <cstdint>
#include <deque>
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
    put_i64(cs.start_event.ts, out);
    put_i64(cs.start_event.id, out);
  }
}
inline ComputationState decode_cs(std::string_view& in, std::size_t states) {
  ComputationState cs;
  cs.state = static_cast<std::int32_t>(get_varint(in));
  if (static_cast<std::size_t>(cs.state) >= states)
    throw ClinkError("cep: restored NFA state " + std::to_string(cs.state) + " does not exist in the pattern (" +
                     std::to_string(states) + " states); was the pattern changed?");
  cs.node = static_cast<std::int32_t>(get_i64(in));
  cs.version = DeweyNumber::decode(in);
  cs.start_ts = get_i64(in);
  cs.prev_ts = get_i64(in);
  if (in.empty()) throw ClinkError("cep: truncated computation state");
  cs.has_start_event = in.front() != 0;
  in.remove_prefix(1);
  if (cs.has_start_event) {
    cs.start_event.ts = get_i64(in);
    cs.start_event.id = static_cast<std::int32_t>(get_i64(in));
  }
  return cs;
}
}  // namespace codec_detail

template <class T>
void encode_nfa_state(const NfaKeyState<T>& st, std::string& out) {
  using namespace codec_detail;
  put_varint(st.partial.size(), out);
  for (const auto& cs : st.partial) encode_cs(cs, out);
  put_varint(st.completed.size(), out);
  for (const auto& cs : st.completed) encode_cs(cs, out);
  const auto& events = st.buffer.event_slots();
  put_varint(events.size(), out);
  for (const auto& e : events) {
    put_i64(e.refs, out);
    if (e.refs < 0) continue;
    put_i64(e.id.ts, out);
    put_i64(e.id.id, out);
    StateCodec<T>::encode(e.value, out);
  }
  const auto& nodes = st.buffer.node_slots();
  put_varint(nodes.size(), out);
  for (const auto& n : nodes) {
    put_i64(n.refs, out);
    if (n.refs < 0) continue;
    put_i64(n.event, out);
    put_i64(n.page, out);
    put_varint(n.edges.size(), out);
    for (const auto& e : n.edges) {
      put_i64(e.target, out);
      put_i64(e.refs, out);
      e.version.encode(out);
    }
  }
  const auto& counters = st.buffer.counters();
  put_varint(counters.size(), out);
  for (const auto& [ts, n] : counters) {
    put_i64(ts, out);
    put_i64(n, out);
  }
}

template <class T>
NfaKeyState<T> decode_nfa_state(std::string_view in, const CompiledNfa<T>& nfa) {
  using namespace codec_detail;
  NfaKeyState<T> st;
  const std::size_t n_states = nfa.states.size();
  for (auto n = get_varint(in); n > 0; --n) st.partial.push_back(decode_cs(in, n_states));
  for (auto n = get_varint(in); n > 0; --n) st.completed.push_back(decode_cs(in, n_states));
  std::deque<typename SharedBuffer<T>::EventSlot> events(get_varint(in));
  for (auto& e : events) {
    e.refs = static_cast<std::int32_t>(get_i64(in));
    if (e.refs < 0) continue;
    e.id.ts = get_i64(in);
    e.id.id = static_cast<std::int32_t>(get_i64(in));
    e.value = StateCodec<T>::decode(in);
  }
  std::vector<typename SharedBuffer<T>::Node> nodes(get_varint(in));
  for (auto& n : nodes) {
    n.refs = static_cast<std::int32_t>(get_i64(in));
    if (n.refs < 0) continue;
    n.event = static_cast<std::int32_t>(get_i64(in));
    n.page = static_cast<std::int32_t>(get_i64(in));
    if (n.event < 0 || static_cast<std::size_t>(n.event) >= events.size() || n.page < 0 ||
        static_cast<std::size_t>(n.page) >= nfa.pages.size())
      throw ClinkError("cep: restored shared buffer node refers to a missing event or pattern name");
    for (auto k = get_varint(in); k > 0; --k) {
      typename SharedBuffer<T>::Edge e{};
      e.target = static_cast<std::int32_t>(get_i64(in));
      e.refs = static_cast<std::int32_t>(get_i64(in));
      e.version = DeweyNumber::decode(in);
      n.edges.push_back(std::move(e));
    }
  }
  std::vector<std::pair<EventTime, std::int32_t>> counters(get_varint(in));
  for (auto& [ts, n] : counters) {
    ts = get_i64(in);
    n = static_cast<std::int32_t>(get_i64(in));
  }
  if (!in.empty()) throw ClinkError("cep: trailing bytes after a restored NFA state");
  st.buffer.restore(std::move(events), std::move(nodes), std::move(counters));
  return st;
}

}  // namespace clink::cep
