#pragma once
// Conditions of a CEP pattern (Flink's SimpleCondition / IterativeCondition and the
// And / Or / Not combinators the compiler builds). A simple condition sees the event;
// an iterative one also sees the partial match so far through a MatchContext: the
// events taken for each pattern name (not including the event being evaluated), in
// order. The context is materialised lazily, once per partial match and event, and only
// when an iterative condition asks.
//
// The same conditions serve MATCH_RECOGNIZE: a DEFINE clause is an iterative condition
// over (row, match so far).
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "clink/core/event_time.hpp"

namespace clink::cep {

template <class T>
class MatchContext {
 public:
  virtual ~MatchContext() = default;
  // The events this partial match took for pattern `name`, oldest first (empty if none).
  virtual const std::vector<const T*>& events(std::string_view name) const = 0;
  // Event time of the event being evaluated (processing time in processing-time mode).
  virtual EventTime timestamp() const = 0;
};

template <class T>
struct Condition {
  enum class Kind : std::uint8_t { kTrue, kSimple, kIterative, kAnd, kOr, kNot };
  Kind kind = Kind::kTrue;
  std::function<bool(const T&)> simple;
  std::function<bool(const T&, const MatchContext<T>&)> iterative;
  std::shared_ptr<const Condition> left, right;
};
template <class T>
using ConditionPtr = std::shared_ptr<const Condition<T>>;

template <class T>
ConditionPtr<T> true_condition() {
  static const ConditionPtr<T> c = std::make_shared<Condition<T>>();
  return c;
}

// fn(const T&) -> bool or fn(const T&, const MatchContext<T>&) -> bool.
template <class T, class F>
ConditionPtr<T> make_condition(F fn) {
  auto c = std::make_shared<Condition<T>>();
  if constexpr (std::is_invocable_r_v<bool, F&, const T&>) {
    c->kind = Condition<T>::Kind::kSimple;
    c->simple = std::move(fn);
  } else {
    static_assert(std::is_invocable_r_v<bool, F&, const T&, const MatchContext<T>&>,
                  "a CEP condition is fn(const T&) -> bool or fn(const T&, const MatchContext<T>&) -> bool");
    c->kind = Condition<T>::Kind::kIterative;
    c->iterative = std::move(fn);
  }
  return c;
}

template <class T>
ConditionPtr<T> combine(typename Condition<T>::Kind kind, ConditionPtr<T> a, ConditionPtr<T> b = nullptr) {
  auto c = std::make_shared<Condition<T>>();
  c->kind = kind;
  c->left = std::move(a);
  c->right = std::move(b);
  return c;
}
template <class T>
ConditionPtr<T> and_condition(ConditionPtr<T> a, ConditionPtr<T> b) {
  if (!a) return b;
  if (!b) return a;
  return combine<T>(Condition<T>::Kind::kAnd, std::move(a), std::move(b));
}
template <class T>
ConditionPtr<T> or_condition(ConditionPtr<T> a, ConditionPtr<T> b) {
  if (!a || !b) return true_condition<T>();  // null is "any event"
  return combine<T>(Condition<T>::Kind::kOr, std::move(a), std::move(b));
}
template <class T>
ConditionPtr<T> not_condition(ConditionPtr<T> a) {
  return combine<T>(Condition<T>::Kind::kNot, a ? std::move(a) : true_condition<T>());
}

// Null means "any event".
template <class T>
bool evaluate(const Condition<T>* c, const T& v, const MatchContext<T>& ctx) {
  if (!c) return true;
  switch (c->kind) {
    case Condition<T>::Kind::kTrue: return true;
    case Condition<T>::Kind::kSimple: return c->simple(v);
    case Condition<T>::Kind::kIterative: return c->iterative(v, ctx);
    case Condition<T>::Kind::kAnd: return evaluate(c->left.get(), v, ctx) && evaluate(c->right.get(), v, ctx);
    case Condition<T>::Kind::kOr: return evaluate(c->left.get(), v, ctx) || evaluate(c->right.get(), v, ctx);
    case Condition<T>::Kind::kNot: return !evaluate(c->left.get(), v, ctx);
  }
  return false;
}

}  // namespace clink::cep
