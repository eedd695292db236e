#pragma once
// Compiles a Pattern<T> into NFA states with TAKE / IGNORE / PROCEED transitions
// (Flink's NFACompiler, rule for rule). The pattern is walked from its last step to its
// first: each step becomes one state (single), a chain of states (times), or a looping
// state (one_or_more / times_or_more), each with its "ignore" twin for relaxed
// contiguity; negations become Stop states reached by PROCEED edges; a trailing
// not_followed_by becomes a Pending state that completes when the window expires.
//
//  - TAKE: the event is added to the match; go to the target.
//  - IGNORE: the event is skipped; go to the target (often the state itself).
//  - PROCEED: an epsilon move, evaluated against the same event.
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "clink/cep/pattern.hpp"

namespace clink::cep {

enum class StateType : std::uint8_t { kStart, kNormal, kFinal, kStop, kPending };
enum class Action : std::uint8_t { kTake, kIgnore, kProceed };
const char* to_string(StateType t);
const char* to_string(Action a);

template <class T>
struct NfaTransition {
  Action action;
  int source;
  int target;
  ConditionPtr<T> condition;
  std::int32_t program = -1;  // the condition's root in the Nfa's ConditionProgram (set by Nfa)
};

template <class T>
struct NfaStateDef {
  std::string name;  // unique internal name ("b", "b:0", ...)
  int page = -1;     // the pattern name events taken here are stored under
  StateType type = StateType::kNormal;
  std::vector<NfaTransition<T>> transitions;
};

template <class T>
struct CompiledNfa {
  std::vector<NfaStateDef<T>> states;
  std::vector<std::string> pages;  // pattern names, by page id
  int start = -1;
  std::int64_t window = 0;  // ms, 0: none
  AfterMatchSkipStrategy skip;

  int page_of(std::string_view name) const {
    for (std::size_t i = 0; i < pages.size(); ++i)
      if (pages[i] == name) return static_cast<int>(i);
    return -1;
  }
  std::string describe() const;  // one line per state and transition (debugging, tests)
};

namespace compiler_detail {
std::string unique_name(std::set<std::string>& used, const std::string& base);
}

template <class T>
class NfaCompiler {
 public:
  using Step = PatternStep<T>;

  static CompiledNfa<T> compile(const Pattern<T>& pattern) {
    pattern.validate();
    NfaCompiler c;
    c.out_.skip = pattern.skip_strategy();
    c.out_.window = pattern.window_time();
    c.cur_ = {&pattern.steps(), static_cast<int>(pattern.steps().size()) - 1};
    const int end = c.create_state("$endState$", StateType::kFinal);
    const int sink = c.create_middle_states(end);
    const int start = c.convert_pattern(sink);
    c.st(start).type = StateType::kStart;
    c.out_.start = start;
    for (auto& s : c.states_) c.out_.states.push_back(std::move(*s));
    return std::move(c.out_);
  }

 private:
  struct Cur {
    const std::vector<Step>* list = nullptr;
    int idx = -1;
    bool valid() const { return list != nullptr && idx >= 0; }
    const Step& step() const { return (*list)[static_cast<std::size_t>(idx)]; }
    bool has_prev() const { return idx > 0; }
    Cur prev() const { return {list, idx - 1}; }
  };
  using Cond = ConditionPtr<T>;

  NfaStateDef<T>& st(int i) { return *states_[static_cast<std::size_t>(i)]; }

  int create_state(const std::string& name, StateType type) {
    auto s = std::make_unique<NfaStateDef<T>>();
    s->name = compiler_detail::unique_name(used_names_, name);
    s->type = type;
    if (type != StateType::kFinal) s->page = page(name);
    states_.push_back(std::move(s));
    return static_cast<int>(states_.size()) - 1;
  }
  int page(const std::string& name) {
    int p = out_.page_of(name);
    if (p >= 0) return p;
    out_.pages.push_back(name);
    return static_cast<int>(out_.pages.size()) - 1;
  }
  void add(int from, Action a, int to, Cond c) { st(from).transitions.push_back({a, from, to, std::move(c)}); }

  int create_middle_states(int sink) {
    int last = sink;
    while (cur_.has_prev()) {
      const Step& s = cur_.step();
      if (s.quantifier.consuming == ConsumingStrategy::kNotFollow) {
        // Mid-pattern: becomes stop edges of the following states. Trailing (window
        // set): a Pending state that completes when the window expires.
        if (out_.window > 0 && st(last).type == StateType::kFinal) {
          const int pending = create_state(s.name, StateType::kPending);
          Cond nc = take_condition(s);
          const int stop = create_stop_state(nc, s.name);
          add(pending, Action::kProceed, stop, nc);
          add(pending, Action::kIgnore, pending, not_condition<T>(nc));
          last = pending;
        }
      } else if (s.quantifier.consuming == ConsumingStrategy::kNotNext) {
        const int not_next = create_state(s.name, StateType::kNormal);
        Cond nc = take_condition(s);
        const int stop = create_stop_state(nc, s.name);
        if (st(last).type == StateType::kFinal) add(not_next, Action::kIgnore, last, not_condition<T>(nc));
        else add(not_next, Action::kProceed, last, not_condition<T>(nc));
        add(not_next, Action::kProceed, stop, nc);
        last = not_next;
      } else {
        last = convert_pattern(last);
      }
      following_ = cur_;
      cur_ = cur_.prev();
    }
    return last;
  }

  int convert_pattern(int sink) {
    const Step& s = cur_.step();
    int last;
    if (s.quantifier.looping()) {
      set_first_of_loop(false);
      const int copy = copy_without_transitive_nots(sink);
      const int looping = create_looping(copy);
      set_first_of_loop(true);
      last = create_times_state(looping, sink, s.times);
    } else if (s.quantifier.times()) {
      last = create_times_state(sink, sink, s.times);
    } else {
      last = create_singleton_state(sink, sink, take_condition(s), ignore_condition(s), is_pattern_optional());
    }
    add_stop_states(last);
    return last;
  }

  int create_stop_state(const Cond& c, const std::string& name) {
    auto it = stop_states_.find(name);
    if (it != stop_states_.end()) return it->second;
    const int s = create_state(name, StateType::kStop);
    add(s, Action::kTake, s, c);
    stop_states_[name] = s;
    return s;
  }

  // Taking an event in an optional state ends the NOT steps before it: the copy of the
  // sink reached from here has no stop edges for them.
  int copy_without_transitive_nots(int sink) {
    auto nots = current_not_conditions();
    if (nots.empty() || !cur_.step().quantifier.optional) return sink;
    const int copy = create_state(original_name(sink), st(sink).type);
    const auto transitions = st(sink).transitions;
    for (const auto& t : transitions) {
      if (t.action == Action::kProceed) {
        int target = t.target;
        bool remove = false;
        if (st(target).type == StateType::kStop) {
          for (const auto& n : nots)
            if (stop_states_.count(n.second) && stop_states_[n.second] == target) remove = true;
        } else {
          target = copy_without_transitive_nots(target);
        }
        if (!remove) add(copy, t.action, target, t.condition);
      } else {
        add(copy, t.action, t.target == t.source ? copy : t.target, t.condition);
      }
    }
    return copy;
  }

  int copy_state(int s) {
    const int copy = create_state(original_name(s), st(s).type);
    const auto transitions = st(s).transitions;
    for (const auto& t : transitions) add(copy, t.action, t.target == t.source ? copy : t.target, t.condition);
    return copy;
  }
  std::string original_name(int s) {
    if (st(s).type == StateType::kFinal) return "$endState$";
    return out_.pages[static_cast<std::size_t>(st(s).page)];
  }

  void add_stop_states(int s) {
    for (const auto& [c, name] : current_not_conditions()) add(s, Action::kProceed, create_stop_state(c, name), c);
  }
  void add_stop_state_to_looping(int s) {
    if (following_.valid() && following_.step().quantifier.consuming == ConsumingStrategy::kNotFollow) {
      Cond c = take_condition(following_.step());
      add(s, Action::kProceed, create_stop_state(c, following_.step().name), c);
    }
  }

  int create_times_state(int sink, int proceed, Times times) {
    const Step& s = cur_.step();
    int last = sink;
    set_first_of_loop(false);
    Cond until = s.until;
    Cond inner_ignore = extend_with_until(inner_ignore_condition(s), until, false);
    Cond take = extend_with_until(take_condition(s), until, true);
    if (s.quantifier.greedy && times.from != times.to) {
      if (until) original_state_map_[sink] = copy_state(sink);
      update_with_greedy_condition(sink, take);
    }
    for (int i = times.from; i < times.to; ++i) {
      last = create_singleton_state(last, proceed, take, inner_ignore, true);
      add_stop_state_to_looping(last);
    }
    for (int i = 0; i < times.from - 1; ++i) {
      last = create_singleton_state(last, -1, take, inner_ignore, false);
      add_stop_state_to_looping(last);
    }
    set_first_of_loop(true);
    return create_singleton_state(last, proceed, take, ignore_condition(s), s.quantifier.optional);
  }

  int create_singleton_state(int sink, int proceed, Cond take, Cond ignore, bool optional) {
    const Step& s = cur_.step();
    if (s.is_group()) return create_group_pattern_state(sink, proceed, optional);
    const int single = create_state(s.name, StateType::kNormal);
    const int target = copy_without_transitive_nots(sink);
    add(single, Action::kTake, target, take);
    Cond proceed_cond = true_function();
    if (optional && !head_of_group(cur_)) {
      if (s.quantifier.greedy) {
        if (s.until) add(single, Action::kProceed, original_state_map_.at(proceed), and_condition<T>(proceed_cond, s.until));
        add(single, Action::kProceed, proceed,
            s.until ? and_condition<T>(proceed_cond, not_condition<T>(s.until)) : proceed_cond);
      } else {
        add(single, Action::kProceed, proceed, proceed_cond);
      }
    }
    if (ignore) {
      int ignore_state = single;
      if (optional) {
        ignore_state = create_state(s.name, StateType::kNormal);
        add(ignore_state, Action::kTake, target, take);
        add(ignore_state, Action::kIgnore, ignore_state, ignore);
        add_stop_states(ignore_state);
      }
      add(single, Action::kIgnore, ignore_state, ignore);
    }
    return single;
  }

  int create_group_pattern_state(int sink, int proceed, bool optional) {
    Cond proceed_cond = true_function();
    const Cur old_cur = cur_, old_following = following_;
    const Step* old_group = group_;
    group_ = &cur_.step();
    cur_ = {&group_->group->steps(), static_cast<int>(group_->group->steps().size()) - 1};
    int last = create_middle_states(sink);
    last = convert_pattern(last);
    if (optional) add(last, Action::kProceed, proceed, proceed_cond);
    cur_ = old_cur;
    following_ = old_following;
    group_ = old_group;
    return last;
  }

  int create_looping_group_pattern_state(int sink) {
    Cond proceed_cond = true_function();
    const Cur old_cur = cur_, old_following = following_;
    const Step* old_group = group_;
    const int dummy = create_state(cur_.step().name, StateType::kNormal);
    group_ = &cur_.step();
    cur_ = {&group_->group->steps(), static_cast<int>(group_->group->steps().size()) - 1};
    int last = create_middle_states(dummy);
    last = convert_pattern(last);
    add(last, Action::kProceed, sink, proceed_cond);
    add(dummy, Action::kProceed, last, proceed_cond);
    cur_ = old_cur;
    following_ = old_following;
    group_ = old_group;
    return last;
  }

  int create_looping(int sink) {
    const Step& s = cur_.step();
    if (s.is_group()) return create_looping_group_pattern_state(sink);
    Cond until = s.until;
    Cond ignore = extend_with_until(inner_ignore_condition(s), until, false);
    Cond take = extend_with_until(take_condition(s), until, true);
    Cond proceed_cond = true_function();
    const int looping = create_state(s.name, StateType::kNormal);
    if (s.quantifier.greedy) {
      if (until) {
        const int copy = copy_state(sink);
        add(looping, Action::kProceed, copy, and_condition<T>(proceed_cond, until));
        original_state_map_[sink] = copy;
      }
      add(looping, Action::kProceed, sink,
          until ? and_condition<T>(proceed_cond, not_condition<T>(until)) : proceed_cond);
      update_with_greedy_condition(sink, take_condition(s));
    } else {
      add(looping, Action::kProceed, sink, proceed_cond);
    }
    add(looping, Action::kTake, looping, take);
    add_stop_state_to_looping(looping);
    if (ignore) {
      const int ignore_state = create_state(s.name, StateType::kNormal);
      add(ignore_state, Action::kTake, looping, take);
      add(ignore_state, Action::kIgnore, ignore_state, ignore);
      add(looping, Action::kIgnore, ignore_state, ignore);
      add_stop_state_to_looping(ignore_state);
    }
    return looping;
  }

  // ---- conditions ----
  std::vector<std::pair<Cond, std::string>> current_not_conditions() {
    std::vector<std::pair<Cond, std::string>> out;
    Cur p = cur_;
    while (p.has_prev() && (p.prev().step().quantifier.optional ||
                            p.prev().step().quantifier.consuming == ConsumingStrategy::kNotFollow)) {
      p = p.prev();
      if (p.step().quantifier.consuming == ConsumingStrategy::kNotFollow)
        out.emplace_back(take_condition(p.step()), p.step().name);
    }
    return out;
  }
  Cond extend_with_until(Cond c, const Cond& until, bool is_take) {
    if (until && c) return and_condition<T>(not_condition<T>(until), c);
    if (until && is_take) return not_condition<T>(until);
    return c;
  }
  Cond strategy_condition(ConsumingStrategy cs, const Step& s) {
    Cond c;
    if (cs == ConsumingStrategy::kSkipTillNext) c = not_condition<T>(s.condition ? s.condition : true_condition<T>());
    else if (cs == ConsumingStrategy::kSkipTillAny) c = true_condition<T>();
    if (group_ && group_->until) c = extend_with_until(c, group_->until, false);
    return c;
  }
  Cond inner_ignore_condition(const Step& s) {
    ConsumingStrategy cs = s.quantifier.inner;
    if (head_of_group(cur_) && &s == &cur_.step()) cs = group_->quantifier.inner;
    return strategy_condition(cs, s);
  }
  Cond ignore_condition(const Step& s) {
    ConsumingStrategy cs = s.quantifier.consuming;
    if (head_of_group(cur_) && &s == &cur_.step())
      cs = is_group_first_of_loop() ? group_->quantifier.consuming : group_->quantifier.inner;
    return strategy_condition(cs, s);
  }
  Cond take_condition(const Step& s) {
    Cond c = s.condition ? s.condition : true_condition<T>();
    if (group_ && group_->until) c = extend_with_until(c, group_->until, true);
    return c;
  }
  Cond true_function() {
    Cond c = true_condition<T>();
    if (group_ && group_->until) c = extend_with_until(c, group_->until, true);
    return c;
  }
  void update_with_greedy_condition(int s, const Cond& take) {
    for (auto& t : st(s).transitions) t.condition = and_condition<T>(t.condition, not_condition<T>(take));
  }

  // ---- group bookkeeping ----
  void set_first_of_loop(bool v) {
    if (cur_.step().is_group()) first_of_loop_[&cur_.step()] = v;
  }
  bool is_group_first_of_loop() const {
    auto it = first_of_loop_.find(group_);
    return it == first_of_loop_.end() ? true : it->second;
  }
  bool head_of_group(const Cur& c) const { return group_ != nullptr && c.idx == 0; }
  bool is_pattern_optional() const {
    if (head_of_group(cur_)) return is_group_first_of_loop() && group_->quantifier.optional;
    return cur_.step().quantifier.optional;
  }

  CompiledNfa<T> out_;
  std::vector<std::unique_ptr<NfaStateDef<T>>> states_;
  std::set<std::string> used_names_;
  std::map<std::string, int> stop_states_;
  std::map<int, int> original_state_map_;
  std::map<const Step*, bool> first_of_loop_;
  const Step* group_ = nullptr;
  Cur cur_, following_;
};

template <class T>
std::string CompiledNfa<T>::describe() const {
  std::string s;
  for (std::size_t i = 0; i < states.size(); ++i) {
    const auto& st = states[i];
    s += std::to_string(i) + " " + st.name + " [" + to_string(st.type) + "]";
    for (const auto& t : st.transitions)
      s += std::string(" ") + to_string(t.action) + "->" + std::to_string(t.target);
    s += "\n";
  }
  return s;
}

}  // namespace clink::cep
