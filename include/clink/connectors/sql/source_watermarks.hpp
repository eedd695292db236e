#pragma once
// Watermarks generated in a SQL source, per split (Flink's watermark push-down with
// split-level watermarks, e.g. per Kafka partition): each split's watermark is the max of
// the table's WATERMARK expression over that split's rows; the source emits the minimum
// over its splits, so one partition read ahead of another never makes the other's rows
// late. Flink's rules:
//  - a split that has not produced a row yet holds the watermark back (at its start);
//  - with idle_timeout_ms, a split without rows for that long is left out of the minimum
//    (all splits idle: the source is idle) until its next row; the emitted watermark never
//    goes back, so a split that comes back behind it is clamped;
//  - emitted every interval_ms when it advanced (0: after every batch, 'on-event'); a
//    watermark <= 0 is never emitted (as the WATERMARK assigner);
//  - every row's event time is its rowtime (a NULL rowtime fails the job).
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

namespace clink::sql {

struct SourceWatermarkSpec {
  ExprPtr watermark;  // over the source's output row (computed columns inlined)
  ExprPtr rowtime;    // the rowtime column's value over the same row
  SessionContext session;
  std::int64_t interval_ms = 200;
  std::int64_t idle_timeout_ms = 0;
};

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
  struct Split {
    EventTime max = kMinEventTime;
    std::int64_t last_active_ms = 0;
  };
  std::shared_ptr<const SourceWatermarkSpec> spec_;
  std::unique_ptr<CompiledExpr> watermark_;
  std::unique_ptr<CompiledExpr> rowtime_;
  std::map<std::uint64_t, Split> splits_;
  EventTime emitted_ = 0;
  bool idle_ = false;
  bool dirty_ = false;
  std::int64_t last_emit_ms_ = 0;
};

}  // namespace clink::sql
