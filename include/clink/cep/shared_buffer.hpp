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
// Storage: the event and node slots of all keys of an operator live in one
// SharedBufferPool (slabs with free lists, reused last-freed-first, so the memory a key
// touches is mostly warm); a SharedBuffer is one key's view of it (its id counters and
// live counts). Checkpoints write a key's reachable nodes and events (nfa_codec.hpp).
// The event slab only grows between events (reserve_event() before each), so pointers
// to events stay valid while one event is processed.
#include <algorithm>
#include <memory>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <absl/container/inlined_vector.h>

#include "clink/cep/dewey_number.hpp"
#include "clink/core/error.hpp"
#include "clink/core/event_time.hpp"
#include "clink/core/huge_page_allocator.hpp"

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
struct SharedBufferPool {
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

  // The slabs of all keys' events and nodes, read at random: on huge pages once large.
  std::vector<EventSlot, HugePageAllocator<EventSlot>> events;
  std::vector<std::int32_t> free_events;
  std::vector<Node, HugePageAllocator<Node>> nodes;
  std::vector<std::int32_t> free_nodes;
  // Scratch of the event being processed (one at a time per pool).
  std::int32_t current_event = -1;
  std::vector<std::pair<std::int32_t, std::int32_t>> current_nodes;  // (page, node)
  std::vector<std::pair<std::int32_t, DeweyNumber>> release_stack;

  // Makes room for one event without moving the others (call before processing one).
  void reserve_event() {
    if (free_events.empty() && events.size() == events.capacity()) events.reserve(std::max<std::size_t>(64, events.size() * 2));
  }
  std::int32_t new_event() {
    if (!free_events.empty()) {
      const std::int32_t e = free_events.back();
      free_events.pop_back();
      return e;
    }
    events.emplace_back();
    return static_cast<std::int32_t>(events.size()) - 1;
  }
  std::int32_t new_node() {
    if (!free_nodes.empty()) {
      const std::int32_t n = free_nodes.back();
      free_nodes.pop_back();
      return n;
    }
    nodes.emplace_back();
    return static_cast<std::int32_t>(nodes.size()) - 1;
  }
  // Bytes held by the slabs and the edge overflow storage.
  std::size_t memory_bytes() const {
    std::size_t b = events.capacity() * sizeof(EventSlot) + nodes.capacity() * sizeof(Node) +
                    (free_events.capacity() + free_nodes.capacity()) * sizeof(std::int32_t);
    for (const auto& n : nodes) {
      if (n.edges.capacity() > 1) b += n.edges.capacity() * sizeof(Edge);
      for (const auto& e : n.edges) b += e.version.heap_bytes();
    }
    return b;
  }
};

template <class T>
class SharedBuffer {
 public:
  using Pool = SharedBufferPool<T>;
  using Edge = typename Pool::Edge;
  using Node = typename Pool::Node;
  using EventSlot = typename Pool::EventSlot;

  // In `pool` (shared by the keys of an operator), or in a pool of its own.
  explicit SharedBuffer(Pool* pool = nullptr) {
    if (!pool) {
      own_ = std::make_shared<Pool>();
      pool = own_.get();
    }
    pool_ = pool;
  }
  Pool& pool() const { return *pool_; }

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
    const std::int32_t slot = pool_->new_event();
    EventSlot& e = pool_->events[static_cast<std::size_t>(slot)];
    e.value = value;
    e.id = id;
    e.refs = 1;
    ++live_events_;
    pool_->current_event = slot;
    pool_->current_nodes.clear();
    return slot;
  }
  void lock_event(std::int32_t slot) { ++pool_->events[static_cast<std::size_t>(slot)].refs; }
  void release_event(std::int32_t slot) {
    EventSlot& e = pool_->events[static_cast<std::size_t>(slot)];
    if (--e.refs == 0) {
      e.refs = -1;
      e.value = T{};
      pool_->free_events.push_back(slot);
      --live_events_;
      if (pool_->current_event == slot) pool_->current_event = -1;
    }
  }
  const T& event(std::int32_t slot) const { return pool_->events[static_cast<std::size_t>(slot)].value; }
  const EventId& event_id(std::int32_t slot) const { return pool_->events[static_cast<std::size_t>(slot)].id; }
  const EventSlot& event_slot(std::int32_t slot) const { return pool_->events[static_cast<std::size_t>(slot)]; }
  const Node& node(std::int32_t n) const { return pool_->nodes[static_cast<std::size_t>(n)]; }

  // Drops the per-timestamp id counters below `ts` (Flink's advanceTime).
  void advance_time(EventTime ts) {
    if (counters_.empty() || (counters_.size() == 1 && counters_[0].first >= ts)) return;
    counters_.erase(std::remove_if(counters_.begin(), counters_.end(), [ts](const auto& c) { return c.first < ts; }),
                    counters_.end());
  }

  // A key that went idle hands its (empty) buffer to the next key.
  void reset_empty() {
    if (!empty()) throw ClinkError("cep shared buffer: reset while events are still referenced");
    counters_.clear();
  }

  // ---- nodes ----
  // Adds the edge (event taken under `page`) -> `previous` with `version`; the node for
  // (event, page) is created on first use. Locks `previous` for `version`, unless the
  // caller hands over a lock it holds on `previous` for the same version (the same
  // version is compatible with the same edges, so lock + release would cancel out).
  std::int32_t put(std::int32_t page, std::int32_t event_slot, std::int32_t previous, const DeweyNumber& version,
                   bool lock_previous = true) {
    if (previous >= 0 && lock_previous) lock_node(previous, version);
    std::int32_t node = -1;
    if (event_slot == pool_->current_event)
      for (const auto& [p, n] : pool_->current_nodes)
        if (p == page) node = n;
    if (node < 0) {
      node = pool_->new_node();
      ++live_nodes_;
      Node& n = pool_->nodes[static_cast<std::size_t>(node)];
      n.event = event_slot;
      n.page = page;
      n.refs = 0;
      lock_event(event_slot);
      if (event_slot == pool_->current_event) pool_->current_nodes.emplace_back(page, node);
    }
    pool_->nodes[static_cast<std::size_t>(node)].edges.push_back(Edge{previous, 0, version});
    return node;
  }

  void lock_node(std::int32_t node, const DeweyNumber& version) {
    if (node < 0) return;
    Node& n = pool_->nodes[static_cast<std::size_t>(node)];
    ++n.refs;
    for (auto& e : n.edges)
      if (version.is_compatible_with(e.version)) ++e.refs;
  }

  void release_node(std::int32_t node, const DeweyNumber& version) {
    if (node < 0) return;
    auto& stack = pool_->release_stack;
    stack.clear();
    // The first node is released in place (no copy of the version onto the stack): in
    // the common case (the node stays, or no edge goes) the walk ends here.
    {
      Node& n = pool_->nodes[static_cast<std::size_t>(node)];
      if (n.refs < 0) return;  // already gone
      for (std::size_t i = 0; i < n.edges.size();) {
        Edge& e = n.edges[i];
        if (version.is_compatible_with(e.version) && --e.refs == 0) {
          if (e.target >= 0) stack.emplace_back(e.target, std::move(e.version));
          erase_edge(n, i);
          continue;
        }
        ++i;
      }
      if (--n.refs == 0) free_node(node);
    }
    while (!stack.empty()) {
      auto [cur, v] = std::move(stack.back());
      stack.pop_back();
      Node& n = pool_->nodes[static_cast<std::size_t>(cur)];
      if (n.refs < 0) continue;  // already gone
      for (std::size_t i = 0; i < n.edges.size();) {
        Edge& e = n.edges[i];
        if (v.is_compatible_with(e.version) && --e.refs == 0) {
          if (e.target >= 0) stack.emplace_back(e.target, std::move(e.version));
          erase_edge(n, i);
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
      const Node& n = pool_->nodes[static_cast<std::size_t>(node)];
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

  // ---- introspection (tests, checkpoints) ----
  std::size_t live_events() const { return live_events_; }
  std::size_t live_nodes() const { return live_nodes_; }
  bool empty() const { return live_events_ == 0 && live_nodes_ == 0; }
  const absl::InlinedVector<std::pair<EventTime, std::int32_t>, 1>& counters() const { return counters_; }

  // Restore (nfa_codec.hpp): adds an event / a node of this key; edges are set by the
  // caller once every node of the key exists.
  std::int32_t import_event(T value, EventId id, std::int32_t refs) {
    const std::int32_t slot = pool_->new_event();
    EventSlot& e = pool_->events[static_cast<std::size_t>(slot)];
    e.value = std::move(value);
    e.id = id;
    e.refs = refs;
    ++live_events_;
    return slot;
  }
  std::int32_t import_node(std::int32_t event_slot, std::int32_t page, std::int32_t refs) {
    const std::int32_t node = pool_->new_node();
    Node& n = pool_->nodes[static_cast<std::size_t>(node)];
    n.event = event_slot;
    n.page = page;
    n.refs = refs;
    clear_edges(n);
    ++live_nodes_;
    return node;
  }
  Node& mutable_node(std::int32_t n) { return pool_->nodes[static_cast<std::size_t>(n)]; }
  void set_counters(absl::InlinedVector<std::pair<EventTime, std::int32_t>, 1> c) { counters_ = std::move(c); }

 private:
  // Keeps the edge storage of a node slot that had more than one edge (absl's clear()
  // would free it): the slot is reused, mostly by a node that is shared again.
  static void clear_edges(Node& n) { n.edges.erase(n.edges.begin(), n.edges.end()); }
  // Erases edge i keeping the order (absl's single-element erase is a general routine;
  // a node has one or two edges).
  static void erase_edge(Node& n, std::size_t i) {
    for (std::size_t j = i + 1; j < n.edges.size(); ++j) n.edges[j - 1] = std::move(n.edges[j]);
    n.edges.pop_back();
  }
  void free_node(std::int32_t node) {
    Node& n = pool_->nodes[static_cast<std::size_t>(node)];
    const std::int32_t ev = n.event;
    n.refs = -1;
    clear_edges(n);
    n.event = -1;
    pool_->free_nodes.push_back(node);
    --live_nodes_;
    if (pool_->current_event == ev) {
      auto& cn = pool_->current_nodes;
      cn.erase(std::remove_if(cn.begin(), cn.end(), [node](const auto& pn) { return pn.second == node; }), cn.end());
    }
    release_event(ev);
  }

  Pool* pool_;
  std::shared_ptr<Pool> own_;
  absl::InlinedVector<std::pair<EventTime, std::int32_t>, 1> counters_;
  std::size_t live_events_ = 0, live_nodes_ = 0;
};

}  // namespace clink::cep
