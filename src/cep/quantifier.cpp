#include "clink/cep/quantifier.hpp"

#include "clink/core/error.hpp"

namespace clink::cep {

const char* to_string(ConsumingStrategy s) {
  switch (s) {
    case ConsumingStrategy::kStrict: return "strict";
    case ConsumingStrategy::kSkipTillNext: return "relaxed";
    case ConsumingStrategy::kSkipTillAny: return "any";
    case ConsumingStrategy::kNotNext: return "not_next";
    case ConsumingStrategy::kNotFollow: return "not_followed_by";
  }
  return "?";
}

namespace {
void check(bool ok, const std::string& where, const char* what) {
  if (!ok) throw ClinkError(where + ": " + what);
}
}  // namespace

void Quantifier::set_optional(const std::string& where) {
  check(!optional, where, "optional() already applied");
  check(!negated(), where, "a NOT pattern (not_next / not_followed_by) cannot be optional");
  optional = true;
}

void Quantifier::set_greedy(const std::string& where) {
  check(consuming != ConsumingStrategy::kSkipTillAny, where, "greedy() is not applicable to a followed_by_any step");
  check(!single(), where, "greedy() is not applicable to a single (unquantified) step");
  greedy = true;
}

void Quantifier::set_consecutive(const std::string& where) {
  check(looping() || times(), where, "consecutive() applies only to a looping or times quantifier");
  check(inner != ConsumingStrategy::kSkipTillAny, where, "apply either allow_combinations() or consecutive(), not both");
  check(inner != ConsumingStrategy::kStrict, where, "consecutive() already applied");
  inner = ConsumingStrategy::kStrict;
}

void Quantifier::set_combinations(const std::string& where) {
  check(!single(), where, "allow_combinations() applies only to a looping or times quantifier");
  check(inner != ConsumingStrategy::kStrict, where, "apply either allow_combinations() or consecutive(), not both");
  check(inner != ConsumingStrategy::kSkipTillAny, where, "allow_combinations() already applied");
  inner = ConsumingStrategy::kSkipTillAny;
}

std::string Quantifier::describe() const {
  std::string s = kind == Kind::kSingle ? "single" : kind == Kind::kLooping ? "looping" : "times";
  if (optional || greedy) {
    s += "{";
    if (optional) s += "optional";
    if (optional && greedy) s += ", ";
    if (greedy) s += "greedy";
    s += "}";
  }
  s += std::string(" ") + to_string(consuming);
  if (!single()) s += std::string(", inner ") + to_string(inner);
  return s;
}

}  // namespace clink::cep
