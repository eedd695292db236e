#include "clink/operators/builtin_node_params.hpp"

#include <nlohmann/json.hpp>

namespace clink {

JsonValue count_node_params(bool emit_every) { return nlohmann::json{{"emit", emit_every ? "every" : "final"}}; }

JsonValue watermark_assigner_node_params(std::int64_t out_of_orderness_ms) {
  return nlohmann::json{{"out_of_orderness_ms", out_of_orderness_ms}};
}

JsonValue event_time_count_node_params(std::int64_t size_ms) { return nlohmann::json{{"size_ms", size_ms}}; }

}  // namespace clink
