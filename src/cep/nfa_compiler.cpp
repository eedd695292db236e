#include "clink/cep/nfa_compiler.hpp"

namespace clink::cep {

const char* to_string(StateType t) {
  switch (t) {
    case StateType::kStart: return "start";
    case StateType::kNormal: return "normal";
    case StateType::kFinal: return "final";
    case StateType::kStop: return "stop";
    case StateType::kPending: return "pending";
  }
  return "?";
}

const char* to_string(Action a) {
  switch (a) {
    case Action::kTake: return "take";
    case Action::kIgnore: return "ignore";
    case Action::kProceed: return "proceed";
  }
  return "?";
}

namespace compiler_detail {
// Flink's NFAStateNameHandler: "name", then "name:0", "name:1", ... for copies.
std::string unique_name(std::set<std::string>& used, const std::string& base) {
  std::string candidate = base;
  int counter = 0;
  while (used.count(candidate)) candidate = base + ":" + std::to_string(counter++);
  used.insert(candidate);
  return candidate;
}
}  // namespace compiler_detail

}  // namespace clink::cep
