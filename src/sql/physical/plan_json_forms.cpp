// The JSON forms of the physical plan's contract that other stages share (windows,
// aggregate calls) and the table options the planner consumes itself.
#include <set>

#include "clink/sql/physical/physical_plan.hpp"
#include "clink/sql/planner/logical_plan.hpp"

namespace clink::sql {

using json = nlohmann::json;

bool is_planner_option(const std::string& key) {
  static const std::set<std::string> kKeys = {"connector", "event_time_column", "watermark_lag_ms", "idle_timeout_ms",
                                              "allowed_lateness_ms", "late_records_to_dlq", "partition_by",
                                              "scan.parallelism", "sink.parallelism"};
  return kKeys.count(key) || key.rfind("scan.watermark.", 0) == 0 || key.rfind("statistics.", 0) == 0;
}

json window_to_json(const WindowSpec& w) {
  json j = {{"kind", window_kind_name(w.kind)}, {"time_column", w.time_column}};
  if (w.proctime) j["proctime"] = true;
  if (w.attached_start) j["attached"] = true;  // time_column is the input rows' window_end
  switch (w.kind) {
    case WindowSpec::Kind::kTumble: j["size_ms"] = w.size_ms; break;
    case WindowSpec::Kind::kHop:
      j["size_ms"] = w.size_ms;
      j["slide_ms"] = w.slide_ms;
      break;
    case WindowSpec::Kind::kCumulate:
      j["size_ms"] = w.size_ms;
      j["step_ms"] = w.step_ms;
      break;
    case WindowSpec::Kind::kSession: j["gap_ms"] = w.gap_ms; return j;
  }
  j["offset_ms"] = w.offset_ms;
  return j;
}

json aggregate_to_json(const AggregateCall& a) {
  return {{"function", a.function}, {"args", a.args}, {"distinct", a.distinct},
          {"filter", a.filter ? json(*a.filter) : json(nullptr)}, {"type", a.type.to_string()}};
}

}  // namespace clink::sql
