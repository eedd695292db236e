#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace clink::cluster {

// Flink's value syntax for configuration, as its Configuration reads it. Each throws
// ClinkError naming `key` and the value: "execution.checkpointing.interval: '10 parsecs'
// is not a duration (...)".

// TimeUtils.parseDuration: "<number>[ ]<unit>", a plain number is milliseconds; units
// d|day|days, h|hour|hours, min|m|minute|minutes, s|sec|secs|second|seconds,
// ms|milli|millis|millisecond|milliseconds, µs|micro|micros|microsecond(s),
// ns|nano|nanos|nanosecond(s), any case; else an ISO-8601 duration ("PT1M30S").
// Sub-millisecond parts are truncated.
std::chrono::milliseconds parse_duration(std::string_view key, std::string_view text);

// MemorySize.parse: "<number>[ ]<unit>", a plain number is bytes; b|bytes,
// k|kb|kibibytes, m|mb|mebibytes, g|gb|gibibytes, t|tb|tebibytes (powers of 1024).
std::int64_t parse_memory_size(std::string_view key, std::string_view text);

// "true" / "false", any case (Flink accepts nothing else: not yes/no, not 1/0).
bool parse_bool(std::string_view key, std::string_view text);

// A decimal integer with an optional sign, or YAML 1.2's 0x.. / 0o.. (Flink reads the
// file as YAML 1.2, so `parallelism.default: 0x10` is 16).
std::int64_t parse_int(std::string_view key, std::string_view text);

double parse_double(std::string_view key, std::string_view text);

}  // namespace clink::cluster
