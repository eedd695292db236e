#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace clink::sql {

// The change a row carries in a changelog stream, as Flink's RowKind. The numeric values
// are Flink's byte values and part of the batch serialisation: never renumber.
enum class RowKind : std::uint8_t {
  kInsert = 0,        // +I
  kUpdateBefore = 1,  // -U: retracts a previously emitted row
  kUpdateAfter = 2,   // +U
  kDelete = 3,        // -D
};

inline constexpr std::string_view row_kind_short_string(RowKind k) {
  switch (k) {
    case RowKind::kInsert: return "+I";
    case RowKind::kUpdateBefore: return "-U";
    case RowKind::kUpdateAfter: return "+U";
    case RowKind::kDelete: return "-D";
  }
  return "?";
}

inline std::optional<RowKind> parse_row_kind(std::string_view s) {
  if (s == "+I") return RowKind::kInsert;
  if (s == "-U") return RowKind::kUpdateBefore;
  if (s == "+U") return RowKind::kUpdateAfter;
  if (s == "-D") return RowKind::kDelete;
  return std::nullopt;
}

// +I and +U add a row to the result; -U and -D take one away.
inline constexpr bool is_accumulate(RowKind k) { return k == RowKind::kInsert || k == RowKind::kUpdateAfter; }
inline constexpr bool is_retract(RowKind k) { return !is_accumulate(k); }

}  // namespace clink::sql
