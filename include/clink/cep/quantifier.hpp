#pragma once
// How often a pattern step matches and how it consumes events (Flink's Quantifier).
// `consuming` is the contiguity towards the previous step (next: strict, followed_by:
// relaxed, followed_by_any: non-deterministic relaxed, not_next / not_followed_by:
// negation); `inner` is the contiguity between the repetitions of a looping or times
// step (relaxed by default; consecutive(): strict; allow_combinations(): any).
#include <cstdint>
#include <string>

namespace clink::cep {

enum class ConsumingStrategy : std::uint8_t { kStrict, kSkipTillNext, kSkipTillAny, kNotNext, kNotFollow };
const char* to_string(ConsumingStrategy s);

struct Quantifier {
  enum class Kind : std::uint8_t { kSingle, kLooping, kTimes };
  Kind kind = Kind::kSingle;
  ConsumingStrategy consuming = ConsumingStrategy::kSkipTillNext;
  ConsumingStrategy inner = ConsumingStrategy::kSkipTillNext;
  bool optional = false;
  bool greedy = false;

  bool looping() const { return kind == Kind::kLooping; }
  bool times() const { return kind == Kind::kTimes; }
  bool single() const { return kind == Kind::kSingle; }
  bool negated() const { return consuming == ConsumingStrategy::kNotNext || consuming == ConsumingStrategy::kNotFollow; }

  // Each throws ClinkError naming `where` (the step) on misuse, with Flink's rules.
  void set_optional(const std::string& where);
  void set_greedy(const std::string& where);
  void set_consecutive(const std::string& where);
  void set_combinations(const std::string& where);
  std::string describe() const;  // "looping{optional, greedy} relaxed, inner strict"
};

}  // namespace clink::cep
