#pragma once
// What explain shows for a CEP operator (its node's params). Built out of line, in a
// translation unit that sees neither the CEP engine nor the DataStream API.
#include <cstdint>
#include <string>
#include <vector>

#include "clink/core/json_value.hpp"

namespace clink::cep {

struct CepNodeDescription {
  std::vector<std::string> steps;  // "<name> <quantifier>" per step
  std::int64_t within_ms = 0;
  std::string after_match_skip;
  bool event_time = true;
  bool keyed = false;
};
JsonValue cep_node_params(const CepNodeDescription& d);

}  // namespace clink::cep
