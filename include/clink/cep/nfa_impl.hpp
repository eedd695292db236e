#pragma once
// Nfa<T>'s algorithm (Flink's NFA.doProcess / advanceTime / computeNextStates);
// included by nfa.hpp.
#include "clink/cep/nfa.hpp"

namespace clink::cep {

// The match so far of one computation state, for iterative conditions; read from the
// shared buffer on first use only.
template <class T>
class Nfa<T>::Context final : public MatchContext<T> {
 public:
  Context(const CompiledNfa<T>& nfa, const SharedBuffer<T>& buffer, const ComputationState& cs, EventTime ts)
      : nfa_(nfa), buffer_(buffer), cs_(cs), ts_(ts) {}
  const std::vector<const T*>& events(std::string_view name) const override {
    if (!built_) build();
    const int p = nfa_.page_of(name);
    if (p < 0) return empty_;
    return by_page_[static_cast<std::size_t>(p)];
  }
  EventTime timestamp() const override { return ts_; }

 private:
  void build() const {
    built_ = true;
    by_page_.assign(nfa_.pages.size(), {});
    std::vector<MatchEntry> path;
    buffer_.extract(cs_.node, cs_.version, path);
    for (const auto& e : path) by_page_[static_cast<std::size_t>(e.page)].push_back(&buffer_.event(e.event));
  }
  const CompiledNfa<T>& nfa_;
  const SharedBuffer<T>& buffer_;
  const ComputationState& cs_;
  EventTime ts_;
  mutable bool built_ = false;
  mutable std::vector<std::vector<const T*>> by_page_;
  static inline const std::vector<const T*> empty_{};
};

template <class T>
template <class Sink>
void Nfa<T>::process(NfaKeyState<T>& st, const T& event, EventTime ts, Sink& sink) {
  CurrentEvent ev{&event, ts};
  conditions_.next_event();
  st.buffer.pool().reserve_event();  // event references stay valid while it is processed
  // The next list of partial matches is the concatenation of each state's successors, in
  // order (then sorted by start event). It is built in place: a state that stays as it is
  // (most of them: waiting for their next step, they ignore the event) is not moved, and
  // the successors of a changed state take its place while they fit (the start state,
  // which may leave two, is last). Where they would overwrite states not processed yet,
  // the rest of the list continues in new_partials.
  auto& list = st.partial;
  auto& spill = new_partials_;
  auto& potential = potential_;
  spill.clear();
  potential.clear();
  st.new_start = false;
  const std::size_t n = list.size();
  std::size_t w = 0;     // next position of the in-place list
  bool spilled = false;  // the list continues in `spill` from here on
  bool changed = false;  // a state was replaced (else the list is as it was: sorted)
  for (std::size_t i = 0; i < n; ++i) {
    ComputationState& cs = list[i];
    const std::size_t first = spill.size();
    if ((quick_[static_cast<std::size_t>(cs.state)] && stays(cs, event)) ||
        compute_next_states(st, cs, ev, spill)) {  // unchanged
      if (spilled) spill.push_back(std::move(cs));
      else if (w++ != i) list[w - 1] = std::move(cs);
      continue;
    }
    changed = true;
    // Final states move to the potential matches; if a stop state was reached, the
    // branch's other states are released and dropped.
    bool discard = false;
    std::size_t kept = first;
    for (std::size_t j = first; j < spill.size(); ++j) {
      ComputationState& ncs = spill[j];
      const StateType type = state_of(ncs).type;
      if (type == StateType::kFinal) {
        potential.push_back(std::move(ncs));
      } else if (type == StateType::kStop) {
        discard = true;  // a NOT step matched: this branch dies
        st.buffer.release_node(ncs.node, ncs.version);
      } else {
        if (kept != j) spill[kept] = std::move(ncs);
        ++kept;
      }
    }
    if (discard)
      for (std::size_t j = first; j < kept; ++j) st.buffer.release_node(spill[j].node, spill[j].version);
    spill.resize(discard ? first : kept);
    if (spilled) continue;
    const std::size_t k = spill.size() - first;
    if (w + k <= i + 1 || i + 1 == n) {  // fits where the processed states were (or at the end)
      for (std::size_t j = first; j < spill.size(); ++j, ++w) {
        if (w < n) list[w] = std::move(spill[j]);
        else list.push_back(std::move(spill[j]));
      }
      spill.resize(first);
    } else {
      spilled = true;
    }
  }
  if (w < list.size()) list.erase(list.begin() + static_cast<std::ptrdiff_t>(w), list.end());
  if (spilled) {
    for (auto& cs : spill) list.push_back(std::move(cs));
    spill.clear();
  }
  if (changed) sort_states(list);
  if (potential.size() > 1) sort_states(potential);
  if (nfa_.skip.is_skip()) {
    process_matches_with_skip(st, potential, list, sink);
  } else {
    for (const auto& m : potential) emit_and_release(st, m, sink);
  }
  if (changed) note_first_start(st);  // (pruning by a skip strategy only makes it earlier than exact: safe)
  if (ev.slot >= 0) st.buffer.release_event(ev.slot);  // the registration lock
}

template <class T>
template <class Sink>
void Nfa<T>::advance_time(NfaKeyState<T>& st, EventTime ts, Sink& sink) {
  const std::int64_t w = nfa_.window;
  // ts - start >= w, without overflow at the int64 limits (the final watermark is MAX).
  const bool windowed = w > 0 && ts >= std::numeric_limits<EventTime>::min() + w;
  const EventTime limit = windowed ? ts - w : 0;
  auto due = [&](const ComputationState& cs) { return windowed && cs.start_ts <= limit && !is_start(cs); };
  if (st.completed.empty()) {  // nothing times out: the common case, without copying
    if (windowed && st.first_start == std::numeric_limits<EventTime>::min()) note_first_start(st);
    if (!windowed || st.first_start > limit) {
      st.buffer.advance_time(ts);
      return;
    }
  }
  auto& new_partials = new_partials_;
  auto& potential = potential_;
  new_partials.clear();
  potential.clear();
  for (auto& cs : st.partial) {
    if (!due(cs)) {
      new_partials.push_back(std::move(cs));
      continue;
    }
    if (state_of(cs).type == StateType::kPending) {  // trailing not_followed_by: a match
      potential.push_back(std::move(cs));
      continue;
    }
    if (handle_timeout_) {
      st.buffer.extract(cs.node, cs.version, path_);
      const EventTime at = cs.start_ts > std::numeric_limits<EventTime>::max() - w ? std::numeric_limits<EventTime>::max()
                                                                                   : cs.start_ts + w;
      sink.on_timeout(MatchView<T>(&nfa_.pages, &st.buffer, &path_), at);
    }
    st.buffer.release_node(cs.node, cs.version);
  }
  process_matches_with_skip(st, potential, new_partials, sink);
  st.partial.clear();  // (moved back, not swapped: the key keeps its inline storage)
  for (auto& cs : new_partials) st.partial.push_back(std::move(cs));
  note_first_start(st);
  st.buffer.advance_time(ts);
}

template <class T>
template <class Sink, class List>
void Nfa<T>::process_matches_with_skip(NfaKeyState<T>& st, std::vector<ComputationState>& potential, List& partials,
                                       Sink& sink) {
  if (potential.empty() && st.completed.empty()) return;
  for (auto& p : potential) st.completed.push_back(std::move(p));
  potential.clear();
  sort_states(st.completed);
  // A completed match is emitted once no partial match that started earlier is alive.
  while (!st.completed.empty() && (partials.empty() || !earlier(partials.front(), st.completed.front()))) {
    ComputationState m = std::move(st.completed.front());
    st.completed.erase(st.completed.begin());
    std::vector<MatchEntry> match;
    st.buffer.extract(m.node, m.version, match);
    prune(st, partials, match);
    prune(st, st.completed, match);
    path_ = std::move(match);
    sink.on_match(MatchView<T>(&nfa_.pages, &st.buffer, &path_));
    st.buffer.release_node(m.node, m.version);
  }
}

template <class T>
template <class List>
void Nfa<T>::prune(NfaKeyState<T>& st, List& list, const std::vector<MatchEntry>& match) {
  using K = AfterMatchSkipStrategy::Kind;
  const auto& skip = nfa_.skip;
  if (match.empty() || skip.kind == K::kNoSkip) return;
  std::optional<EventId> pruning;
  bool inclusive = true;  // prune start <= pruning (whole-match strategies) or start < pruning
  auto id = [&](const MatchEntry& e) { return st.buffer.event_id(e.event); };
  switch (skip.kind) {
    case K::kSkipToNext: pruning = id(match.front()); break;
    case K::kSkipPastLastEvent: pruning = id(match.back()); break;
    case K::kSkipToFirst:
    case K::kSkipToLast: {
      inclusive = false;
      const int page = nfa_.page_of(skip.pattern_name);
      for (const auto& e : match) {
        if (e.page != page) continue;
        if (!pruning || skip.kind == K::kSkipToLast) pruning = id(e);
      }
      break;
    }
    case K::kNoSkip: break;
  }
  if (!pruning) return;
  auto out = list.begin();
  for (auto it = list.begin(); it != list.end(); ++it) {
    const bool drop =
        it->has_start_event && (inclusive ? it->start_event() <= *pruning : it->start_event() < *pruning);
    if (drop) {
      st.buffer.release_node(it->node, it->version);
    } else {
      if (out != it) *out = std::move(*it);
      ++out;
    }
  }
  list.erase(out, list.end());
}

template <class T>
bool Nfa<T>::compute_next_states(NfaKeyState<T>& st, ComputationState& cs, CurrentEvent& ev,
                                 std::vector<ComputationState>& out) {
  // The match so far, for iterative conditions (built on first use).
  std::optional<Context> ctx;
  auto context = [&]() -> const MatchContext<T>& {
    if (!ctx) ctx.emplace(nfa_, st.buffer, cs, ev.ts);
    return *ctx;
  };
  // The decision graph: follow PROCEED edges whose condition holds, collect TAKE and
  // IGNORE edges (Flink's createDecisionGraph: a stack, transitions in order; the state
  // itself is the first one popped, so the stack is only used past a PROCEED).
  edges_.clear();
  int takes = 0, ignores = 0;
  stack_.clear();
  std::int32_t s = cs.state;
  for (;;) {
    for (const auto& t : nfa_.states[static_cast<std::size_t>(s)].transitions) {
      if (!conditions_.evaluate(t.program, *ev.value, context)) continue;
      if (t.action == Action::kProceed) {
        stack_.push_back(t.target);
      } else {
        if (!(t.action == Action::kIgnore && t.target == cs.state)) (t.action == Action::kTake ? takes : ignores)++;
        edges_.push_back(Edge{t.action, t.source, t.target});
      }
    }
    if (stack_.empty()) break;
    s = stack_.back();
    stack_.pop_back();
  }
  const bool start = is_start(cs);
  const std::size_t n_edges = edges_.size();
  // The common case of a waiting state: it only ignores the event and stays. Its version
  // does not change (increasing_self(0, 0) = 0), so the new state equals the old one and
  // keeps its lock (Flink locks the node again and releases the old state's lock: a no-op).
  if (n_edges == 1 && takes == 0 && ignores == 0 && !start && edges_[0].action == Action::kIgnore) return true;
  // The start state when nothing fires: Flink replaces it by a new start state with the
  // same version (increasing_self(0, 0) = 0), equal to it.
  if (n_edges == 0 && start) return true;
  auto increasing_self = [](int ign, int tak) { return (tak == 0 && ign == 0) ? 0 : ign + std::max(1, tak); };
  int take_branches_to_visit = std::max(0, takes - 1);
  int ignore_branches_to_visit = ignores;
  const int total_take_to_skip = std::max(0, takes - 1);
  // Lock transfer: Flink locks cs's node once per branch that keeps it and releases cs's
  // lock at the end. A branch that keeps the node with cs's own version (the last TAKE
  // visited, or a self IGNORE when nothing else fires) locks exactly the edges cs's lock
  // covers, so the first such branch takes cs's lock over instead, and cs is not released.
  bool holds_lock = cs.node >= 0;
  for (std::size_t i = 0; i < n_edges; ++i) {
    const Edge edge = edges_[i];
    if (edge.action == Action::kIgnore) {
      if (start) continue;
      const bool self = edge.target == cs.state;
      const bool same_version = self && takes == 0 && ignores == 0;
      const std::int32_t increase =
          self ? increasing_self(ignores, takes) : total_take_to_skip + ignore_branches_to_visit--;
      const bool transfer = same_version && holds_lock;
      if (transfer) holds_lock = false;
      add_state(st, out, edge.target, cs.node, cs.prev_node, cs.version, increase, !self, cs.start_ts, cs.prev_ts,
                cs.has_start_event ? &cs.start_id : nullptr, !transfer);
    } else {  // TAKE
      const bool transfer = take_branches_to_visit == 0 && holds_lock;  // current == cs.version
      if (transfer) holds_lock = false;
      DeweyNumber current = cs.version.increase(take_branches_to_visit--);  // the edge's version
      if (ev.slot < 0) ev.slot = st.buffer.register_event(*ev.value, st.buffer.next_event_id(ev.ts));
      const std::int32_t page = nfa_.states[static_cast<std::size_t>(edge.source)].page;
      const std::int32_t node = st.buffer.put(page, ev.slot, cs.node, current, !transfer);
      EventTime start_ts = cs.start_ts;
      std::int32_t start_id = cs.start_id;
      if (start) {
        start_ts = ev.ts;
        start_id = st.buffer.event_id(ev.slot).id;
        st.new_start = true;
      }
      add_state(st, out, edge.target, node, cs.node, current, 0, true, start_ts, ev.ts, &start_id);
      const std::int32_t fin = proceeds_[static_cast<std::size_t>(edge.target)]
                                   ? find_final_after_proceed(context, edge.target, *ev.value)
                                   : -1;
      if (fin >= 0) add_state(st, out, fin, node, cs.node, current, 0, true, start_ts, ev.ts, &start_id);
    }
  }
  if (start) out.push_back(start_state(cs.version.increase(increasing_self(ignores, takes))));
  if (holds_lock) st.buffer.release_node(cs.node, cs.version);
  return false;
}

template <class T>
template <class ContextFn>
std::int32_t Nfa<T>::find_final_after_proceed(ContextFn& context, std::int32_t state, const T& event) {
  auto& stack = final_stack_;
  stack.clear();
  stack.push_back(state);
  while (!stack.empty()) {
    const std::int32_t s = stack.back();
    stack.pop_back();
    for (const auto& t : nfa_.states[static_cast<std::size_t>(s)].transitions) {
      if (t.action != Action::kProceed || !conditions_.evaluate(t.program, event, context)) continue;
      if (nfa_.states[static_cast<std::size_t>(t.target)].type == StateType::kFinal) return t.target;
      stack.push_back(t.target);
    }
  }
  return -1;
}

}  // namespace clink::cep
