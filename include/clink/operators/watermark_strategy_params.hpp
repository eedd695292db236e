#pragma once
// The spec params of a built-in watermark strategy, from its type-independent part.
// Built out of line, in a translation unit that sees neither the operator nor json.hpp's
// users; watermark_assigner_operator.hpp describes a WatermarkStrategy<T> with it.
#include <cstdint>

#include "clink/core/json_value.hpp"
#include "clink/time/alignment_group.hpp"

namespace clink {

struct WatermarkStrategyDescription {
  enum class Kind { kOther, kMonotonic, kBounded, kPartitionAware } kind = Kind::kOther;
  std::int64_t out_of_orderness_ms = 0;  // kBounded, kPartitionAware
  std::int64_t idleness_ms = 0;
  WatermarkAlignment alignment;
};
JsonValue watermark_strategy_params(const WatermarkStrategyDescription& d);

}  // namespace clink
