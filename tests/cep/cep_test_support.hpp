#pragma once
// NFA-level test support: Flink's Event(id, name, price), a harness that feeds events
// to an Nfa<Event> as Flink's NFATestHarness does (advance time to the event, then
// process it), and a compact rendering of a match: its events in event order as
// "name:id", e.g. "start:1 middle:2 end:3".
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "clink/cep/nfa.hpp"
#include "clink/state/state_codec.hpp"

namespace clink::test {

struct Event {
  int id = 0;
  std::string name;
  double price = 0;
  double volume = 0;  // > 0 makes it a "SubEvent" in the subtype tests
  std::int64_t key = 0;
  friend bool operator==(const Event&, const Event&) = default;
};

inline Event ev(int id, std::string name, double price = 1.0, double volume = 0) {
  return Event{id, std::move(name), price, volume, 0};
}
inline Event kev(std::int64_t key, int id, std::string name) { return Event{id, std::move(name), 1.0, 0, key}; }

// A Match<Event> as "name:id,id name:id" (names in map order).
inline std::string render_match(const cep::Match<Event>& m) {
  std::string s;
  for (const auto& [name, events] : m) {
    if (!s.empty()) s += ' ';
    s += name + ":";
    for (std::size_t i = 0; i < events.size(); ++i) s += (i ? "," : "") + std::to_string(events[i].id);
  }
  return s;
}

inline auto named(std::string n) {
  return [n](const Event& e) { return e.name == n; };
}

template <class T>
std::string render(const cep::MatchView<T>& m) {
  std::string s;
  for (std::size_t i = 0; i < m.size(); ++i) {
    if (i) s += ' ';
    s += m.name(i) + ":" + std::to_string(m.event(i).id);
  }
  return s;
}

struct Timeout {
  std::string match;
  EventTime at;
  friend bool operator==(const Timeout&, const Timeout&) = default;
};

// Feeds (event, timestamp) pairs in order; collects matches and timeouts.
class Harness {
 public:
  explicit Harness(const cep::Pattern<Event>& p) : nfa_(p), st_(nfa_.initial_state()) {}

  std::vector<std::string> feed(const std::vector<std::pair<Event, EventTime>>& events) {
    for (const auto& [e, t] : events) {
      nfa_.advance_time(st_, t, sink_);
      nfa_.process(st_, e, t, sink_);
    }
    return std::exchange(sink_.matches, {});
  }
  // Advances time without an event (what a watermark does).
  std::vector<std::string> advance(EventTime t) {
    nfa_.advance_time(st_, t, sink_);
    return std::exchange(sink_.matches, {});
  }
  std::vector<Timeout> timeouts() { return std::exchange(sink_.timeouts, {}); }
  cep::NfaKeyState<Event>& state() { return st_; }
  const cep::Nfa<Event>& nfa() const { return nfa_; }

 private:
  struct Sink {
    std::vector<std::string> matches;
    std::vector<Timeout> timeouts;
    void on_match(const cep::MatchView<Event>& m) { matches.push_back(render(m)); }
    void on_timeout(const cep::MatchView<Event>& m, EventTime t) { timeouts.push_back({render(m), t}); }
  } sink_;
  cep::Nfa<Event> nfa_;
  cep::NfaKeyState<Event> st_;
};

inline std::vector<std::string> sorted_copy(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Events at timestamps 1, 2, 3, ... in order.
inline std::vector<std::pair<Event, EventTime>> seq(std::vector<Event> events, EventTime first = 1) {
  std::vector<std::pair<Event, EventTime>> out;
  for (auto& e : events) out.emplace_back(std::move(e), first++);
  return out;
}

}  // namespace clink::test

template <>
struct clink::StateCodec<clink::test::Event> {
  static void encode(const clink::test::Event& e, std::string& out) {
    StateCodec<int>::encode(e.id, out);
    StateCodec<std::string>::encode(e.name, out);
    StateCodec<double>::encode(e.price, out);
    StateCodec<double>::encode(e.volume, out);
    StateCodec<std::int64_t>::encode(e.key, out);
  }
  static clink::test::Event decode(std::string_view& in) {
    clink::test::Event e;
    e.id = StateCodec<int>::decode(in);
    e.name = StateCodec<std::string>::decode(in);
    e.price = StateCodec<double>::decode(in);
    e.volume = StateCodec<double>::decode(in);
    e.key = StateCodec<std::int64_t>::decode(in);
    return e;
  }
};

// The CEP engine for the tests' Event is instantiated once, in cep_engine_instances.cpp:
// eight test files run it, and each compiled and optimised its own copy.
namespace clink::cep {
extern template struct CompiledNfa<test::Event>;
extern template class NfaCompiler<test::Event>;
extern template class SharedBuffer<test::Event>;
extern template class Nfa<test::Event>;
}  // namespace clink::cep
