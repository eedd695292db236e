#include "clink/operators/watermark_strategy_params.hpp"

#include <nlohmann/json.hpp>

namespace clink {

JsonValue watermark_strategy_params(const WatermarkStrategyDescription& d) {
  using Kind = WatermarkStrategyDescription::Kind;
  nlohmann::json p = nlohmann::json::object();
  if (d.kind == Kind::kMonotonic) {
    p["strategy"] = "monotonic";
  } else if (d.kind == Kind::kBounded) {
    p["out_of_orderness_ms"] = d.out_of_orderness_ms;
  } else if (d.kind == Kind::kPartitionAware) {
    p["strategy"] = "partition_aware";
    p["out_of_orderness_ms"] = d.out_of_orderness_ms;
  }
  if (d.idleness_ms > 0) p["idleness_ms"] = d.idleness_ms;
  if (d.alignment.enabled()) {
    p["alignment_group"] = d.alignment.group;
    p["max_drift_ms"] = d.alignment.max_drift_ms;
    p["max_wait_ms"] = d.alignment.max_wait_ms;
  }
  return p;
}

}  // namespace clink
