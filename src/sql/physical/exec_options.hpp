#pragma once
// Internal to src/sql/physical: the `table.exec.*` session options the physical plan
// passes to operators, parsed with positioned errors.
#include <cstdint>
#include <optional>

#include "clink/sql/catalog/catalog.hpp"
#include "clink/sql/common/session_config.hpp"
#include "clink/sql/common/sql_error.hpp"

namespace clink::sql {

// SET 'table.exec.state.ttl' in milliseconds (0: none).
std::int64_t state_ttl_ms(const SessionConfig& session, SourcePosition pos);

// SET 'table.exec.mini-batch.enabled' = 'true' with its allow-latency and size (both
// required, as in Flink: a mini-batch ends at either); nullopt when not enabled.
struct MiniBatch {
  std::int64_t latency_ms, size;
};
std::optional<MiniBatch> mini_batch(const SessionConfig& session, SourcePosition pos);

// SET 'table.optimizer.agg-phase-strategy': AUTO (the default), ONE_PHASE or TWO_PHASE. A
// group aggregation runs in two phases (local before the exchange, global after it) with
// mini-batch enabled and a strategy other than ONE_PHASE, as Flink plans it.
enum class AggPhaseStrategy { kAuto, kOnePhase, kTwoPhase };
AggPhaseStrategy agg_phase_strategy(const SessionConfig& session, SourcePosition pos);

// SET 'execution.runtime-mode' = 'batch': final results once, at the end of the input.
bool batch_mode(const SessionConfig& session);

// A table's 'scan.parallelism' / 'sink.parallelism' (`key`): a positive integer, or none.
std::optional<int> parallelism_option(const TableDef& t, const char* key, SourcePosition pos);

}  // namespace clink::sql
