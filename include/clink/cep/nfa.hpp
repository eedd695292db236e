#pragma once
// The NFA matcher (Flink's NFA, NFAState and ComputationState), generic over the event
// type. One Nfa<T> holds the compiled states and is shared by every key; the per-key
// state is an NfaKeyState<T>: the computation states (partial matches), the completed
// matches a skip strategy holds back, and the key's SharedBuffer.
//
//   process(state, event, ts, sink)     feeds one event (in timestamp order);
//   advance_time(state, ts, sink)       times out partial matches whose window (within)
//                                       has passed: to sink.timed_out, or, for a trailing
//                                       not_followed_by, to sink.matched.
//
// A Sink has on_match(const MatchView<T>&) and on_timeout(const MatchView<T>&, EventTime).
// Matches are reported while their events are still in the buffer (MatchView points
// into it); copy what you keep.
//
// Order: partial matches are kept ordered by their first event (timestamp, then id);
// matches found by the same event are reported in that order (Flink's priority queue
// order, made deterministic), each branch's matches in the order the NFA created them.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/inlined_vector.h>

#include "clink/cep/condition_program.hpp"
#include "clink/cep/dewey_number.hpp"
#include "clink/cep/match.hpp"
#include "clink/cep/nfa_compiler.hpp"
#include "clink/cep/shared_buffer.hpp"

namespace clink::cep {

// One cache line: a key's few partial matches sit in its slot and are read for every
// event of the key.
struct ComputationState {
  std::int16_t state = -1;     // (a compiled NFA has fewer than 32768 states)
  bool has_start_event = false;
  std::int32_t node = -1;      // last taken node in the shared buffer, -1: none
  std::int32_t start_id = 0;   // the first event's EventId is (start_ts, start_id)
  // The node before `node` on this match's path when it was taken (-1: none): only a hint
  // to fetch the path ahead of a match (the shared buffer's edges are the truth).
  std::int32_t prev_node = -1;
  DeweyNumber version;
  EventTime start_ts = -1;     // the first event's timestamp
  EventTime prev_ts = -1;
  EventId start_event() const { return EventId{start_ts, start_id}; }
};

// A key's partial matches: usually the start state and one to three more, kept inline
// (a longer list moves to the heap, and back inline when the key goes idle).
using PartialList = absl::InlinedVector<ComputationState, 4>;

template <class T>
struct NfaKeyState {
  // Its shared buffer lives in `pool` (shared by an operator's keys), or in its own.
  explicit NfaKeyState(SharedBufferPool<T>* pool = nullptr) : buffer(pool) {}

  PartialList partial;                      // ordered by start event; the start state last
  std::vector<ComputationState> completed;  // found, held back by a skip strategy
  SharedBuffer<T> buffer;
  bool new_start = false;  // a partial match started during the last process()
  // The earliest start of its partial matches (the start state aside), noted by the Nfa
  // whenever it changes them, so that advancing time need not look at each: max when
  // there are none, min when not known.
  EventTime first_start = std::numeric_limits<EventTime>::min();

  // Only the start state and nothing stored: the key can be dropped and recreated.
  bool idle() const { return partial.size() <= 1 && completed.empty() && buffer.empty(); }
  // Earliest first-event time of a live partial match (for the window timer).
  std::optional<EventTime> earliest_start() const {
    if (first_start != std::numeric_limits<EventTime>::min()) {
      if (first_start == std::numeric_limits<EventTime>::max()) return std::nullopt;
      return first_start;
    }
    std::optional<EventTime> t;
    for (const auto& cs : partial)
      if (cs.has_start_event && (!t || cs.start_ts < *t)) t = cs.start_ts;
    return t;
  }
};

template <class T>
class Nfa {
 public:
  explicit Nfa(const Pattern<T>& pattern, bool handle_timeout = true)
      : nfa_(NfaCompiler<T>::compile(pattern)), handle_timeout_(handle_timeout) {
    compile_conditions();
  }
  explicit Nfa(CompiledNfa<T> compiled, bool handle_timeout = true)
      : nfa_(std::move(compiled)), handle_timeout_(handle_timeout) {
    compile_conditions();
  }
  static_assert(sizeof(ComputationState) == 64, "one cache line per partial match");

  const CompiledNfa<T>& compiled() const { return nfa_; }
  std::int64_t window() const { return nfa_.window; }
  const AfterMatchSkipStrategy& skip() const { return nfa_.skip; }

  NfaKeyState<T> initial_state(SharedBufferPool<T>* pool = nullptr) const {
    NfaKeyState<T> s(pool);
    s.partial.push_back(start_state(DeweyNumber(1)));
    return s;
  }
  // Back to the initial state, keeping the storage (the state must be idle: nothing
  // referenced in its buffer).
  void reset(NfaKeyState<T>& s) const {
    s.partial.clear();
    s.completed.clear();
    s.buffer.reset_empty();
    s.new_start = false;
    s.partial.push_back(start_state(DeweyNumber(1)));
    s.first_start = std::numeric_limits<EventTime>::max();
  }

  template <class Sink>
  void process(NfaKeyState<T>& st, const T& event, EventTime ts, Sink& sink);
  template <class Sink>
  void advance_time(NfaKeyState<T>& st, EventTime ts, Sink& sink);

 private:
  struct Edge {
    Action action;
    std::int32_t source, target;
  };
  // The event being processed; stored in the buffer on its first TAKE.
  struct CurrentEvent {
    const T* value;
    EventTime ts;
    std::int32_t slot = -1;
  };
  class Context;

  ComputationState start_state(DeweyNumber v) const {
    ComputationState cs;
    cs.state = static_cast<std::int16_t>(nfa_.start);
    cs.version = std::move(v);
    return cs;
  }
  const NfaStateDef<T>& state_of(const ComputationState& cs) const {
    return nfa_.states[static_cast<std::size_t>(cs.state)];
  }
  bool is_start(const ComputationState& cs) const { return state_of(cs).type == StateType::kStart; }
  void note_first_start(NfaKeyState<T>& st) const {
    EventTime t = std::numeric_limits<EventTime>::max();
    for (const auto& cs : st.partial)
      if (cs.start_ts < t && !is_start(cs)) t = cs.start_ts;
    st.first_start = t;
  }
  static bool earlier(const ComputationState& a, const ComputationState& b) {
    // Flink's COMPUTATION_STATE_COMPARATOR: by start event, states without one last.
    if (a.has_start_event != b.has_start_event) return a.has_start_event;
    if (!a.has_start_event) return false;
    if (a.start_ts != b.start_ts) return a.start_ts < b.start_ts;
    return a.start_id < b.start_id;
  }
  // Stable insertion sort: the lists are short and almost sorted (no allocation, unlike
  // std::stable_sort).
  template <class List>
  static void sort_states(List& v) {
    for (std::size_t i = 1; i < v.size(); ++i) {
      if (!earlier(v[i], v[i - 1])) continue;
      ComputationState x = std::move(v[i]);
      std::size_t j = i;
      for (; j > 0 && earlier(x, v[j - 1]); --j) v[j] = std::move(v[j - 1]);
      v[j] = std::move(x);
    }
  }

  // Appends the states following `cs` for the event to `out`; returns true, appending
  // nothing, when the only one is `cs` itself, unchanged (it keeps its lock).
  bool compute_next_states(NfaKeyState<T>& st, ComputationState& cs, CurrentEvent& ev,
                           std::vector<ComputationState>& out);
  template <class ContextFn>
  std::int32_t find_final_after_proceed(ContextFn& context, std::int32_t state, const T& event);
  void compile_conditions() {
    if (nfa_.states.size() > static_cast<std::size_t>(std::numeric_limits<std::int16_t>::max()))
      throw ClinkError("cep: the pattern compiles to " + std::to_string(nfa_.states.size()) +
                       " NFA states; at most 32767 are supported");
    for (auto& s : nfa_.states) {
      bool quick = true, proceeds = false;
      for (auto& t : s.transitions) {
        t.program = conditions_.add(t.condition.get());
        proceeds = proceeds || t.action == Action::kProceed;
        quick = quick && t.action != Action::kProceed && conditions_.is_simple(t.program);
      }
      quick_.push_back(quick ? 1 : 0);
      proceeds_.push_back(proceeds ? 1 : 0);
      waits_on_.push_back(waiting_leaf(s));
    }
  }
  // The usual waiting state: its transitions other than IGNORE to itself all have one
  // simple condition c, and (unless it is the start state) there is exactly one IGNORE to
  // itself, with condition not c. It stays exactly when c does not hold. Returns c's
  // leaf, or -1.
  std::int32_t waiting_leaf(const NfaStateDef<T>& s) const {
    const std::int32_t self = static_cast<std::int32_t>(&s - nfa_.states.data());
    std::int32_t leaf = -1;
    int self_ignores = 0;
    std::int32_t ignore_leaf = -1;
    for (const auto& t : s.transitions) {
      if (t.action == Action::kProceed) return -1;
      if (t.action == Action::kIgnore && t.target == self) {
        ++self_ignores;
        ignore_leaf = conditions_.simple_leaf(t.program, true);
        if (ignore_leaf < 0) return -1;
        continue;
      }
      const std::int32_t l = conditions_.simple_leaf(t.program, false);
      if (l < 0 || (leaf >= 0 && l != leaf)) return -1;
      leaf = l;
    }
    if (leaf < 0) return -1;
    if (s.type == StateType::kStart) return self_ignores == 0 ? leaf : -1;
    return self_ignores == 1 && ignore_leaf == leaf ? leaf : -1;
  }
  // Whether `cs` stays as it is for the event (what compute_next_states would conclude,
  // without building the decision graph), for a state without PROCEED transitions whose
  // conditions are all simple: no transition fires but IGNOREs to itself, and for a state
  // other than the start state exactly one (the start state renews itself unchanged).
  bool stays(const ComputationState& cs, const T& event) {
    const std::int32_t waits_on = waits_on_[static_cast<std::size_t>(cs.state)];
    if (waits_on >= 0) return !conditions_.simple(waits_on, event);
    const auto& def = nfa_.states[static_cast<std::size_t>(cs.state)];
    int fired = 0;
    auto no_context = []() -> const MatchContext<T>& {
      throw ClinkError("cep: internal error: a simple condition asked for the match context");
    };
    for (const auto& t : def.transitions) {
      if (!conditions_.evaluate(t.program, event, no_context)) continue;
      if (t.action != Action::kIgnore || t.target != cs.state) return false;
      ++fired;
    }
    return def.type == StateType::kStart || fired == 1;
  }
  // Appends a computation state whose version is `base` with its last digit increased by
  // `increase` and, if `add_stage`, a new stage (built in place: no version copies), and
  // locks its node for that version unless the caller hands its own lock over.
  void add_state(NfaKeyState<T>& st, std::vector<ComputationState>& out, std::int32_t state, std::int32_t node,
                 std::int32_t prev_node, const DeweyNumber& base, std::int32_t increase, bool add_stage,
                 EventTime start_ts, EventTime prev_ts, const std::int32_t* start_id, bool lock = true) {
    ComputationState& cs = out.emplace_back();
    cs.state = static_cast<std::int16_t>(state);
    cs.node = node;
    cs.prev_node = prev_node;
    cs.version = base;
    if (increase != 0) cs.version.increase_in_place(increase);
    if (add_stage) cs.version.add_stage_in_place();
    cs.start_ts = start_ts;
    cs.prev_ts = prev_ts;
    if (start_id) {
      cs.start_id = *start_id;
      cs.has_start_event = true;
    }
    if (lock) st.buffer.lock_node(node, cs.version);
  }
  template <class Sink, class List>
  void process_matches_with_skip(NfaKeyState<T>& st, std::vector<ComputationState>& potential, List& partials,
                                 Sink& sink);
  template <class List>
  void prune(NfaKeyState<T>& st, List& list, const std::vector<MatchEntry>& match);
  template <class Sink>
  void emit_and_release(NfaKeyState<T>& st, const ComputationState& m, Sink& sink) {
    st.buffer.extract(m.node, m.version, path_);
    sink.on_match(MatchView<T>(&nfa_.pages, &st.buffer, &path_));
    st.buffer.release_node(m.node, m.version);
  }

  CompiledNfa<T> nfa_;
  ConditionProgram<T> conditions_;
  std::vector<std::uint8_t> quick_;     // by state: stays() applies
  std::vector<std::uint8_t> proceeds_;  // by state: has a PROCEED transition
  std::vector<std::int32_t> waits_on_;  // by state: waiting_leaf(), -1: none
  bool handle_timeout_;
  // Scratch, reused across calls (no allocation per event in the steady state).
  std::vector<ComputationState> new_partials_, potential_;
  std::vector<Edge> edges_;
  std::vector<std::int32_t> stack_, final_stack_;
  std::vector<MatchEntry> path_;
};

}  // namespace clink::cep

#include "clink/cep/nfa_impl.hpp"
