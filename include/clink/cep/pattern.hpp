#pragma once
// Pattern<T>: a CEP pattern (Flink's Pattern API), built fluently and by value:
//
//   auto p = Pattern<Event>::begin("start").where([](const Event& e) { return e.name == "a"; })
//                .followed_by("middle").where(...).one_or_more().greedy()
//                .next("end").where([](const Event& e, const MatchContext<Event>& ctx) {...})
//                .within(10'000);
//
// Every modifier (where, or_where, until, subtype, quantifiers, contiguity) applies to
// the last step. Misuse a Flink pattern would reject at the call (a quantifier twice,
// optional on a NOT step, greedy on a single step, until on a non-looping step, ...)
// throws ClinkError at once, naming the step; validate() checks the whole pattern
// (run by the compiler, so by every CepOperator).
//
// Contiguity (towards the previous step): next = strict, followed_by = relaxed (skip
// non-matching events), followed_by_any = non-deterministic relaxed (also skip matching
// ones). Inner contiguity of a looping / times step: relaxed by default, consecutive()
// strict, allow_combinations() non-deterministic. As in Flink, a quantifier is not
// greedy unless greedy() is called: it yields every length (the reluctant/lazy reading;
// lazy() says so explicitly and undoes greedy()).
//
// Subtypes: subtype<S>() adds the condition "the event is an S", for T a std::variant
// (holds_alternative) or a (shared/raw) pointer to a polymorphic base (dynamic_cast).
// Later conditions still receive the T; cep::as<S>(event) gives the S.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "clink/cep/after_match_skip.hpp"
#include "clink/cep/condition.hpp"
#include "clink/cep/quantifier.hpp"
#include "clink/core/error.hpp"

namespace clink::cep {

template <class T>
class Pattern;

struct Times {
  int from = 1;
  int to = 1;
};

template <class T>
struct PatternStep {
  std::string name;
  ConditionPtr<T> condition;  // null: any event
  ConditionPtr<T> until;      // looping steps only
  Quantifier quantifier;
  Times times;
  bool quantifier_applied = false;
  std::optional<std::int64_t> within;        // ms
  std::shared_ptr<const Pattern<T>> group;  // a group pattern (its own steps)
  bool is_group() const { return group != nullptr; }
};

namespace pattern_detail {
template <class X>
struct is_variant : std::false_type {};
template <class... A>
struct is_variant<std::variant<A...>> : std::true_type {};
template <class X>
struct pointee {
  using type = void;
};
template <class X>
struct pointee<std::shared_ptr<X>> {
  using type = X;
};
template <class X>
struct pointee<X*> {
  using type = X;
};
}  // namespace pattern_detail

// The S inside an event of a subtype step (variant alternative or derived object).
template <class S, class T>
const S& as(const T& v) {
  if constexpr (pattern_detail::is_variant<T>::value) return std::get<S>(v);
  else return dynamic_cast<const S&>(*v);
}
template <class S, class T>
bool is_a(const T& v) {
  if constexpr (pattern_detail::is_variant<T>::value) {
    return std::holds_alternative<S>(v);
  } else {
    using Base = typename pattern_detail::pointee<T>::type;
    static_assert(!std::is_void_v<Base> && std::is_polymorphic_v<Base>,
                  "subtype<S>() needs T = std::variant<...> or a pointer to a polymorphic base");
    return v != nullptr && dynamic_cast<const S*>(&*v) != nullptr;
  }
}

template <class T>
class Pattern {
 public:
  using Step = PatternStep<T>;
  static constexpr const char* kGroupName = "(group)";

  // ---- starting a pattern ----
  static Pattern begin(std::string name, AfterMatchSkipStrategy skip = {}) {
    Pattern p;
    p.skip_ = std::move(skip);
    p.push(std::move(name), ConsumingStrategy::kSkipTillNext);
    return p;
  }
  // A group pattern as the first step: its steps repeat / are optional together.
  static Pattern begin(const Pattern& group, AfterMatchSkipStrategy skip = {}) {
    Pattern p;
    p.skip_ = std::move(skip);
    p.push_group(group, ConsumingStrategy::kSkipTillNext);
    return p;
  }

  // ---- adding steps ----
  Pattern next(std::string name) && { return std::move(push(std::move(name), ConsumingStrategy::kStrict)); }
  Pattern followed_by(std::string name) && { return std::move(push(std::move(name), ConsumingStrategy::kSkipTillNext)); }
  Pattern followed_by_any(std::string name) && {
    return std::move(push(std::move(name), ConsumingStrategy::kSkipTillAny));
  }
  Pattern not_next(std::string name) && {
    if (last().quantifier.optional)
      throw ClinkError(where() + ": an optional step cannot be followed by not_next (Flink: optional path to NOT)");
    return std::move(push(std::move(name), ConsumingStrategy::kNotNext));
  }
  Pattern not_followed_by(std::string name) && {
    if (last().quantifier.optional)
      throw ClinkError(where() +
                       ": an optional step cannot be followed by not_followed_by; write two patterns, one with and "
                       "one without the optional step");
    return std::move(push(std::move(name), ConsumingStrategy::kNotFollow));
  }
  Pattern next(const Pattern& group) && { return std::move(push_group(group, ConsumingStrategy::kStrict)); }
  Pattern followed_by(const Pattern& group) && { return std::move(push_group(group, ConsumingStrategy::kSkipTillNext)); }
  Pattern followed_by_any(const Pattern& group) && {
    return std::move(push_group(group, ConsumingStrategy::kSkipTillAny));
  }
  // Lvalue versions (copy, then extend).
  Pattern next(std::string n) const& { return Pattern(*this).next(std::move(n)); }
  Pattern followed_by(std::string n) const& { return Pattern(*this).followed_by(std::move(n)); }
  Pattern followed_by_any(std::string n) const& { return Pattern(*this).followed_by_any(std::move(n)); }
  Pattern not_next(std::string n) const& { return Pattern(*this).not_next(std::move(n)); }
  Pattern not_followed_by(std::string n) const& { return Pattern(*this).not_followed_by(std::move(n)); }
  Pattern next(const Pattern& g) const& { return Pattern(*this).next(g); }
  Pattern followed_by(const Pattern& g) const& { return Pattern(*this).followed_by(g); }
  Pattern followed_by_any(const Pattern& g) const& { return Pattern(*this).followed_by_any(g); }

  // ---- conditions of the last step ----
  // fn(const T&) or fn(const T&, const MatchContext<T>&); several where()s are ANDed.
  template <class F>
  Pattern where(F fn) && {
    no_group("where");
    last().condition = and_condition<T>(last().condition, make_condition<T>(std::move(fn)));
    return std::move(*this);
  }
  // ORed with the conditions so far.
  template <class F>
  Pattern or_where(F fn) && {
    no_group("or_where");
    auto c = make_condition<T>(std::move(fn));
    last().condition = last().condition ? or_condition<T>(last().condition, c) : c;
    return std::move(*this);
  }
  template <class S>
  Pattern subtype() && {
    no_group("subtype");
    last().condition = and_condition<T>(last().condition, make_condition<T>([](const T& v) { return is_a<S>(v); }));
    return std::move(*this);
  }
  // Stops a looping step: an event matching `fn` is not taken and ends the loop.
  template <class F>
  Pattern until(F fn) && {
    no_group("until");
    if (last().until) throw ClinkError(where() + ": only one until() condition can be applied");
    if (!last().quantifier.looping())
      throw ClinkError(where() + ": until() applies only to looping steps (one_or_more, times_or_more)");
    last().until = make_condition<T>(std::move(fn));
    return std::move(*this);
  }
  template <class F>
  Pattern where(F fn) const& { return Pattern(*this).where(std::move(fn)); }
  template <class F>
  Pattern or_where(F fn) const& { return Pattern(*this).or_where(std::move(fn)); }
  template <class F>
  Pattern until(F fn) const& { return Pattern(*this).until(std::move(fn)); }

  // ---- quantifiers of the last step ----
  Pattern one_or_more() && { return std::move(quantify(Quantifier::Kind::kLooping, 1, 1)); }
  Pattern times_or_more(int n) && {
    if (n <= 0) throw ClinkError(where() + ": times_or_more(n) needs n > 0, got " + std::to_string(n));
    return std::move(quantify(Quantifier::Kind::kLooping, n, n));
  }
  Pattern times(int n) && {
    if (n <= 0) throw ClinkError(where() + ": times(n) needs n > 0, got " + std::to_string(n));
    return std::move(quantify(Quantifier::Kind::kTimes, n, n));
  }
  // times(0, m) is times(1, m).optional(), as in Flink.
  Pattern times(int from, int to) && {
    if (from < 0 || to <= 0 || to < from)
      throw ClinkError(where() + ": times(from, to) needs 0 <= from <= to and to > 0, got (" + std::to_string(from) +
                       ", " + std::to_string(to) + ")");
    quantify(Quantifier::Kind::kTimes, from == 0 ? 1 : from, to);
    if (from == 0) return std::move(*this).optional();
    return std::move(*this);
  }
  Pattern optional() && {
    if (steps_.size() > 1 && steps_[steps_.size() - 2].quantifier.greedy)
      throw ClinkError(where() + ": an optional step cannot follow a greedy one");
    last().quantifier.set_optional(where());
    return std::move(*this);
  }
  Pattern greedy() && {
    if (last().is_group()) throw ClinkError(where() + ": a group pattern does not support greedy()");
    last().quantifier.set_greedy(where());
    return std::move(*this);
  }
  // The reluctant reading (Flink's default): every length is a match. Undoes greedy().
  Pattern lazy() && {
    last().quantifier.greedy = false;
    return std::move(*this);
  }
  Pattern reluctant() && { return std::move(*this).lazy(); }
  Pattern consecutive() && {
    last().quantifier.set_consecutive(where());
    return std::move(*this);
  }
  Pattern allow_combinations() && {
    last().quantifier.set_combinations(where());
    return std::move(*this);
  }
  // The whole match (first to last event) must span less than `ms` of (event) time.
  Pattern within(std::int64_t ms) && {
    if (ms <= 0) throw ClinkError(where() + ": within() needs a positive duration, got " + std::to_string(ms) + " ms");
    last().within = ms;
    return std::move(*this);
  }
  Pattern after_match_skip(AfterMatchSkipStrategy s) && {
    skip_ = std::move(s);
    return std::move(*this);
  }
  Pattern one_or_more() const& { return Pattern(*this).one_or_more(); }
  Pattern times(int n) const& { return Pattern(*this).times(n); }
  Pattern times(int a, int b) const& { return Pattern(*this).times(a, b); }
  Pattern times_or_more(int n) const& { return Pattern(*this).times_or_more(n); }
  Pattern optional() const& { return Pattern(*this).optional(); }
  Pattern greedy() const& { return Pattern(*this).greedy(); }
  Pattern consecutive() const& { return Pattern(*this).consecutive(); }
  Pattern allow_combinations() const& { return Pattern(*this).allow_combinations(); }
  Pattern within(std::int64_t ms) const& { return Pattern(*this).within(ms); }
  Pattern after_match_skip(AfterMatchSkipStrategy s) const& { return Pattern(*this).after_match_skip(std::move(s)); }

  // ---- the built pattern ----
  const std::vector<Step>& steps() const { return steps_; }
  const AfterMatchSkipStrategy& skip_strategy() const { return skip_; }
  // The smallest within() of any step, 0 when none (the window of the whole match).
  std::int64_t window_time() const {
    std::int64_t w = 0;
    for (const auto& s : steps_)
      if (s.within && (w == 0 || *s.within < w)) w = *s.within;
    return w;
  }

  // Assembles a pattern from steps (MATCH_RECOGNIZE builds them from the parsed clause);
  // validate() checks it.
  static Pattern from_steps(std::vector<Step> steps, AfterMatchSkipStrategy skip = {}) {
    Pattern p;
    p.steps_ = std::move(steps);
    p.skip_ = std::move(skip);
    return p;
  }

  // Throws ClinkError naming the first problem and its step.
  void validate() const;

 private:
  Pattern() = default;
  Step& last() {
    if (steps_.empty()) throw ClinkError("cep pattern: no step to modify (start with Pattern::begin)");
    return steps_.back();
  }
  std::string where() const {
    if (steps_.empty()) return "cep pattern";
    return "cep pattern step #" + std::to_string(steps_.size()) + " '" + steps_.back().name + "'";
  }
  void no_group(const char* what) const {
    if (!steps_.empty() && steps_.back().is_group())
      throw ClinkError(where() + ": a group pattern does not support " + what + "()");
  }
  Pattern& push(std::string name, ConsumingStrategy c) {
    Step s;
    s.name = std::move(name);
    s.quantifier.consuming = c;
    steps_.push_back(std::move(s));
    return *this;
  }
  Pattern& push_group(const Pattern& group, ConsumingStrategy c) {
    Step s;
    s.name = kGroupName;
    s.quantifier.consuming = c;
    s.group = std::make_shared<const Pattern>(group);
    steps_.push_back(std::move(s));
    return *this;
  }
  Pattern& quantify(Quantifier::Kind kind, int from, int to) {
    Step& s = last();
    if (s.quantifier.negated())
      throw ClinkError(where() + ": a quantifier cannot be applied to a NOT pattern (not_next / not_followed_by)");
    if (s.quantifier_applied)
      throw ClinkError(where() + ": a quantifier was already applied (" + s.quantifier.describe() + ")");
    s.quantifier.kind = kind;
    s.times = Times{from, to};
    s.quantifier_applied = true;
    return *this;
  }

  std::vector<Step> steps_;
  AfterMatchSkipStrategy skip_;
};

}  // namespace clink::cep

#include "clink/cep/pattern_validate.hpp"
