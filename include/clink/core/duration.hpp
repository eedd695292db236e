#pragma once
// Flink's duration option syntax (TimeUtils.parseDuration): "200", "200 ms", "5 s",
// "1min", "2 h", "1 d" (a bare number is milliseconds); nullopt when malformed. Read by
// every option that takes a duration (connectors, planner settings, checkpointing).
#include <cstdint>
#include <optional>
#include <string_view>

namespace clink {

std::optional<std::int64_t> parse_duration_ms(std::string_view text);

}  // namespace clink
