#pragma once
// Flink's SharedBuffer (with its SharedBufferAccessor), for one key: every event taken
// by some partial match is stored once, with a reference count; every (event, pattern
// name) pair taken is a node whose edges point to the node taken before it, each edge
// tagged with the DeweyNumber version of the branch that added it and counted
// separately. Overlapping partial matches therefore share their common prefix: a new
// branch adds one edge, never a copy of the events. A match is read back by walking
// from its last node along the edges compatible with its version.
//
// Locks: a computation state locks the node it points to (and the edges its version is
// compatible with); releasing it drops those locks, removes edges nobody holds, and
// frees nodes and events whose count reaches zero, walking back along the removed edges
// (the version-aware release of FLINK-19970, so dead branches do not leak).
//
// Events live in a deque, so references stay valid while new events are added (the
// match context of a condition holds pointers while the same event is being taken).
#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include <absl/container/inlined_vector.h>

#include "clink/cep/dewey_number.hpp"
#include "clink/core/error.hpp"
#include "clink/core/event_time.hpp"

namespace clink::cep {

// Flink's EventId: events of one key are numbered per timestamp; ordered by (ts, id).
struct EventId {
  EventTime ts = 0;
  std::int32_t id = 0;
  friend auto operator<=>(const EventId&, const EventId&) = default;
};

// One taken event of a match: the pattern name (page) and the event's slot.
struct MatchEntry {
  std::int32_t page;
  std::int32_t event;
};

template <class T>
class SharedBuffer {
 public:
  struct Edge {
    std::int32_t target;  // previous node, -1: none (the first event of the match)
    std::int32_t refs;
    DeweyNumber version;
  };
  struct Node {
    std::int32_t event = -1;
    std::int32_t page = -1;
    std::int32_t refs = 0;  // -1: free slot
    absl::InlinedVector<Edge, 1> edges;
  };
  struct EventSlot {
    T value{};
    EventId id;
    std::int32_t refs = 0;  // -1: free slot
  };

  // ---- events ----
  // The next id for an event at `ts` (ids restart at 0 per timestamp).
  EventId next_event_id(EventTime ts) {
    for (auto& [t, n] : counters_)
      if (t == ts) return EventId{ts, n++};
    counters_.emplace_back(ts, 1);
    return EventId{ts, 0};
  }
  // Stores the event with one lock (the caller's, released by release_event when the
  // event has been processed). New nodes for it are looked up among this event's only.
  std::int32_t register_event(const T& value, EventId id) {
    std::int32_t slot;
    if (!free_events_.empty()) {
      slot = free_events_.back();
      free_events_.pop_back();
      events_[static_cast<std::size_t>(slot)].value = value;
    } else {
      slot = static_cast<std::int32_t>(events_.size());
      events_.push_back(EventSlot{value, {}, 0});
    }
    EventSlot& e = events_[static_cast<std::size_t>(slot)];
    e.id = id;
    e.refs = 1;
    ++live_events_;
    current_event_ = slot;
    current_nodes_.clear();
    return slot;
  }
  void lock_event(std::int32_t slot) { ++events_[static_cast<std::size_t>(slot)].refs; }
  void release_event(std::int32_t slot) {
    EventSlot& e = events_[static_cast<std::size_t>(slot)];
    if (--e.refs == 0) {
      e.refs = -1;
      e.value = T{};
      free_events_.push_back(slot);
      --live_events_;
    }
  }
  const T& event(std::int32_t slot) const { return events_[static_cast<std::size_t>(slot)].value; }
  const EventId& event_id(std::int32_t slot) const { return events_[static_cast<std::size_t>(slot)].id; }

  // Drops the per-timestamp id counters below `ts` (Flink's advanceTime).
  void advance_time(EventTime ts) {
    counters_.erase(std::remove_if(counters_.begin(), counters_.end(), [ts](const auto& c) { return c.first < ts; }),
                    counters_.end());
  }

  // ---- nodes ----
  // Adds the edge (event taken under `page`) -> `previous` with `version`; the node for
  // (event, page) is created on first use. Locks `previous` for `version`.
  std::int32_t put(std::int32_t page, std::int32_t event_slot, std::int32_t previous, const DeweyNumber& version) {
    if (previous >= 0) lock_node(previous, version);
    std::int32_t node = -1;
    if (event_slot == current_event_)
      for (const auto& [p, n] : current_nodes_)
        if (p == page) node = n;
    if (node < 0) {
      node = new_node();
      Node& n = nodes_[static_cast<std::size_t>(node)];
      n.event = event_slot;
      n.page = page;
      n.refs = 0;
      lock_event(event_slot);
      if (event_slot == current_event_) current_nodes_.emplace_back(page, node);
    }
    nodes_[static_cast<std::size_t>(node)].edges.push_back(Edge{previous, 0, version});
    return node;
  }

  void lock_node(std::int32_t node, const DeweyNumber& version) {
    if (node < 0) return;
    Node& n = nodes_[static_cast<std::size_t>(node)];
    ++n.refs;
    for (auto& e : n.edges)
      if (version.is_compatible_with(e.version)) ++e.refs;
  }

  void release_node(std::int32_t node, const DeweyNumber& version) {
    if (node < 0) return;
    release_stack_.clear();
    release_stack_.emplace_back(node, version);
    while (!release_stack_.empty()) {
      auto [cur, v] = std::move(release_stack_.back());
      release_stack_.pop_back();
      Node& n = nodes_[static_cast<std::size_t>(cur)];
      if (n.refs < 0) continue;  // already gone
      for (std::size_t i = 0; i < n.edges.size();) {
        Edge& e = n.edges[i];
        if (v.is_compatible_with(e.version) && --e.refs == 0) {
          if (e.target >= 0) release_stack_.emplace_back(e.target, std::move(e.version));
          n.edges.erase(n.edges.begin() + static_cast<std::ptrdiff_t>(i));
          continue;
        }
        ++i;
      }
      if (--n.refs == 0) free_node(cur);
    }
  }

  // The match ending at `node` for `version`, oldest event first (empty if none).
  // Exactly one path is compatible with a live version; it is found by following, at
  // each node, the last compatible edge (the order of Flink's depth-first search).
  void extract(std::int32_t node, const DeweyNumber& version, std::vector<MatchEntry>& out) const {
    out.clear();
    if (node < 0) return;
    const DeweyNumber* v = &version;
    while (node >= 0) {
      const Node& n = nodes_[static_cast<std::size_t>(node)];
      out.push_back(MatchEntry{n.page, n.event});
      const Edge* next = nullptr;
      for (const auto& e : n.edges)
        if (v->is_compatible_with(e.version)) next = &e;
      if (!next) throw ClinkError("cep shared buffer: no edge compatible with version " + v->to_string());
      v = &next->version;
      node = next->target;
    }
    std::reverse(out.begin(), out.end());
  }

  // ---- introspection (tests, memory accounting, checkpoints) ----
  std::size_t live_events() const { return live_events_; }
  std::size_t live_nodes() const { return live_nodes_; }
  bool empty() const { return live_events_ == 0 && live_nodes_ == 0; }
  const std::deque<EventSlot>& event_slots() const { return events_; }
  const std::vector<Node>& node_slots() const { return nodes_; }
  const std::vector<std::pair<EventTime, std::int32_t>>& counters() const { return counters_; }
  // Bytes held: slots (live or free) plus edge overflow storage.
  std::size_t memory_bytes() const {
    std::size_t b = events_.size() * sizeof(EventSlot) + nodes_.capacity() * sizeof(Node);
    for (const auto& n : nodes_) {
      if (n.edges.size() > 1) b += n.edges.capacity() * sizeof(Edge);
      for (const auto& e : n.edges) b += e.version.heap_bytes();
    }
    return b;
  }

  // Restore: rebuild from decoded slots (see nfa_codec.hpp).
  void restore(std::deque<EventSlot> events, std::vector<Node> nodes,
               std::vector<std::pair<EventTime, std::int32_t>> counters) {
    events_ = std::move(events);
    nodes_ = std::move(nodes);
    counters_ = std::move(counters);
    free_events_.clear();
    free_nodes_.clear();
    live_events_ = live_nodes_ = 0;
    for (std::size_t i = 0; i < events_.size(); ++i) {
      if (events_[i].refs < 0) free_events_.push_back(static_cast<std::int32_t>(i));
      else ++live_events_;
    }
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i].refs < 0) free_nodes_.push_back(static_cast<std::int32_t>(i));
      else ++live_nodes_;
    }
    current_event_ = -1;
  }

 private:
  std::int32_t new_node() {
    ++live_nodes_;
    if (!free_nodes_.empty()) {
      const std::int32_t n = free_nodes_.back();
      free_nodes_.pop_back();
      return n;
    }
    nodes_.emplace_back();
    return static_cast<std::int32_t>(nodes_.size()) - 1;
  }
  void free_node(std::int32_t node) {
    Node& n = nodes_[static_cast<std::size_t>(node)];
    const std::int32_t ev = n.event;
    n.refs = -1;
    n.edges.clear();
    n.event = -1;
    free_nodes_.push_back(node);
    --live_nodes_;
    if (current_event_ == ev)
      current_nodes_.erase(std::remove_if(current_nodes_.begin(), current_nodes_.end(),
                                          [node](const auto& pn) { return pn.second == node; }),
                           current_nodes_.end());
    release_event(ev);
  }

  std::deque<EventSlot> events_;
  std::vector<std::int32_t> free_events_;
  std::vector<Node> nodes_;
  std::vector<std::int32_t> free_nodes_;
  std::vector<std::pair<EventTime, std::int32_t>> counters_;
  std::size_t live_events_ = 0, live_nodes_ = 0;
  std::int32_t current_event_ = -1;
  std::vector<std::pair<std::int32_t, std::int32_t>> current_nodes_;  // (page, node) of the current event
  std::vector<std::pair<std::int32_t, DeweyNumber>> release_stack_;
};

}  // namespace clink::cep
