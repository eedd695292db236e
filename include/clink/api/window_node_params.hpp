#pragma once
// What explain shows for a window operator (its node's params). Built out of line, in a
// translation unit that sees neither the window engine nor json.hpp's users.
#include <cstdint>
#include <optional>
#include <string>

#include "clink/core/json_value.hpp"

namespace clink {

struct WindowNodeDescription {
  std::string assigner;
  std::string trigger;
  std::int64_t allowed_lateness_ms = 0;
  std::optional<std::string> evictor;
  std::optional<std::string> late_data_side_output;
};
JsonValue window_node_params(const WindowNodeDescription& d);

}  // namespace clink
