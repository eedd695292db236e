#pragma once
// The params the DataStream calls of builtin_streams.hpp record on their nodes. Built out
// of line, in a translation unit that sees neither the operators nor json.hpp's users.
#include <cstdint>

#include "clink/core/json_value.hpp"

namespace clink {

JsonValue count_node_params(bool emit_every);
JsonValue watermark_assigner_node_params(std::int64_t out_of_orderness_ms);
JsonValue event_time_count_node_params(std::int64_t size_ms);

}  // namespace clink
