#include "clink/api/window_node_params.hpp"

#include <nlohmann/json.hpp>

namespace clink {

JsonValue window_node_params(const WindowNodeDescription& d) {
  nlohmann::json p = {{"assigner", d.assigner}, {"trigger", d.trigger}, {"allowed_lateness_ms", d.allowed_lateness_ms}};
  if (d.evictor) p["evictor"] = *d.evictor;
  if (d.late_data_side_output) p["late_data_side_output"] = *d.late_data_side_output;
  return p;
}

}  // namespace clink
