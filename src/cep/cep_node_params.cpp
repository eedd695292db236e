#include "clink/cep/cep_node_params.hpp"

#include <nlohmann/json.hpp>

namespace clink::cep {

JsonValue cep_node_params(const CepNodeDescription& d) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& s : d.steps) steps.push_back(s);
  return nlohmann::json{{"pattern", steps},
                        {"within_ms", d.within_ms},
                        {"after_match_skip", d.after_match_skip},
                        {"time", d.event_time ? "event" : "processing"},
                        {"keyed", d.keyed}};
}

}  // namespace clink::cep
