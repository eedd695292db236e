#pragma once
// Pattern<T>::validate(): the structural rules a pattern must satisfy before it is
// compiled (Flink's MalformedPatternException cases). Included by pattern.hpp.
#include <set>
#include <string>

#include "clink/cep/pattern.hpp"

namespace clink::cep {

namespace pattern_detail {

template <class T>
void validate_steps(const std::vector<PatternStep<T>>& steps, const std::string& scope, bool top_level,
                    std::int64_t window, std::set<std::string>& names) {
  if (steps.empty()) throw ClinkError(scope + " is empty: start it with Pattern::begin(name)");
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto& s = steps[i];
    const std::string where = scope + " step #" + std::to_string(i + 1) + " '" + s.name + "'";
    const Quantifier& q = s.quantifier;
    if (i == 0 && q.negated())
      throw ClinkError(where + ": a pattern cannot begin with not_next / not_followed_by (misplaced begin)");
    if (q.negated() && (s.quantifier_applied || !q.single() || q.optional || q.greedy))
      throw ClinkError(where + ": a quantifier (" + q.describe() + ") cannot be applied to a NOT pattern");
    if (q.negated() && s.is_group())
      throw ClinkError(where + ": a group pattern cannot be negated");
    if (q.negated() && i > 0 && steps[i - 1].quantifier.optional)
      throw ClinkError(where + ": a NOT pattern cannot follow an optional step");
    if (q.greedy && q.single()) throw ClinkError(where + ": greedy() is not applicable to a single step");
    if (s.until && !q.looping()) throw ClinkError(where + ": until() applies only to looping steps");
    if (!q.single() && (s.times.from < 1 || s.times.to < s.times.from))
      throw ClinkError(where + ": bad repetition bounds (" + std::to_string(s.times.from) + ", " +
                       std::to_string(s.times.to) + ")");
    if (s.within && *s.within <= 0) throw ClinkError(where + ": within() needs a positive duration");
    if (s.is_group()) {
      if (s.condition || s.until) throw ClinkError(where + ": a group pattern takes no conditions of its own");
      if (q.greedy) throw ClinkError(where + ": a group pattern does not support greedy()");
      validate_steps(s.group->steps(), where + " (group)", false, window, names);
      continue;
    }
    if (s.name.empty()) throw ClinkError(where + ": a step needs a name");
    if (s.name == "$endState$") throw ClinkError(where + ": the name '$endState$' is reserved");
    if (s.name.find(':') != std::string::npos)
      throw ClinkError(where + ": a step name cannot contain ':' (reserved for internal state names)");
    if (!names.insert(s.name).second)
      throw ClinkError(where + ": duplicate pattern name '" + s.name + "'; names must be unique");
  }
  const auto& last = steps.back();
  if (last.quantifier.consuming == ConsumingStrategy::kNotFollow) {
    if (!top_level)
      throw ClinkError(scope + ": not_followed_by cannot be the last step of a group pattern");
    if (window <= 0)
      throw ClinkError(scope + " step #" + std::to_string(steps.size()) + " '" + last.name +
                       "': a trailing not_followed_by needs within(...) on the pattern (it completes when the "
                       "window expires)");
  }
}

template <class T>
void collect_names(const std::vector<PatternStep<T>>& steps, std::set<std::string>& out) {
  for (const auto& s : steps) {
    if (s.is_group()) collect_names(s.group->steps(), out);
    else out.insert(s.name);
  }
}

}  // namespace pattern_detail

template <class T>
void Pattern<T>::validate() const {
  std::set<std::string> names;
  pattern_detail::validate_steps(steps_, "cep pattern", true, window_time(), names);
  if (skip_.names_pattern() && !names.count(skip_.pattern_name))
    throw ClinkError("cep pattern: the after-match skip strategy " + skip_.describe() + " names '" +
                     skip_.pattern_name + "', which is not a step of the pattern");
}

}  // namespace clink::cep
