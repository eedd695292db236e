#pragma once
// Watermarks generated in a SQL source, per split (Flink's watermark push-down with
// split-level watermarks, e.g. per Kafka partition): each split's watermark is the max of
// the table's WATERMARK expression over that split's rows, combined over the splits by
// the SplitWatermarkCombiner the typed sources use too (time/split_watermark_combiner.hpp:
// the minimum over the splits, a split without rows holds it back, idle splits are left
// out and never make it regress); emitted every interval_ms when it advanced (0: after
// every batch, 'on-event'); a watermark <= 0 is never emitted (as the WATERMARK
// assigner); every row's event time is its rowtime (a NULL rowtime fails the job).
//
// Or, as the filesystem source, bounding a sql_watermark_assigner that follows it
// (bounds_assigner): the assigner keeps Flink's WatermarkAssigner rules (per-row
// emission, its checkpointed watermark) and never emits above the source's watermark,
// which then goes out before each batch, already including the batch's rows. A reader
// with one split bounds nothing; one holding several (a rescale dealt it several old
// readers' files) holds the assigner at its slowest split.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "clink/core/watermark.hpp"
#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/expression/expr.hpp"
#include "clink/sql/function/function_registry.hpp"
#include "clink/time/split_watermark_combiner.hpp"

namespace clink::sql {

struct SourceWatermarkSpec {
  ExprPtr watermark;  // over the source's output row (computed columns inlined)
  ExprPtr rowtime;    // the rowtime column's value over the same row
  SessionContext session;
  std::int64_t interval_ms = 200;
  std::int64_t idle_timeout_ms = 0;
  bool bounds_assigner = false;  // rowtime null: the assigner sets the event times
};

class SqlConnectorParams;
// The "watermark" param the planner pushes into a source: {"watermark", "rowtime"
// (expressions over the output row), "interval_ms", "idle_timeout_ms"} to generate it, or
// {"watermark", "bounds_assigner": true} to bound the assigner after it. Null without one.
std::shared_ptr<const SourceWatermarkSpec> source_watermark_spec(const SqlConnectorParams& p, const Schema& output);

class CompiledExpr;

class SplitWatermarks {
 public:
  explicit SplitWatermarks(std::shared_ptr<const SourceWatermarkSpec> spec);
  ~SplitWatermarks();

  // The splits the reader holds now (new ones start holding the watermark back).
  void set_splits(const std::vector<std::uint64_t>& splits, std::int64_t now_ms);
  // Rows of `batch`, from split row_splits[r] each (empty: all from split 0): sets their
  // event times and advances their splits. Throws ClinkError for a NULL rowtime.
  void on_batch(ColumnBatch& batch, const std::vector<std::uint64_t>& row_splits, std::int64_t now_ms);
  // The watermark to emit now, if any.
  std::optional<Watermark> poll(std::int64_t now_ms);

 private:
  std::shared_ptr<const SourceWatermarkSpec> spec_;
  std::unique_ptr<CompiledExpr> watermark_;
  std::unique_ptr<CompiledExpr> rowtime_;
  SplitWatermarkCombiner combiner_;
};

}  // namespace clink::sql
