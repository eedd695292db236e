#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "clink/core/event_time.hpp"
#include "clink/core/record.hpp"
#include "clink/sql/common/column.hpp"
#include "clink/sql/common/row_kind.hpp"
#include "clink/sql/common/types.hpp"
#include "clink/sql/common/value.hpp"

namespace clink::sql {

class TimeZone;

// The SQL runtime's batch: columnar and typed. One Column per schema field, a row-kind
// column (changelogs) and an event-time column (int64 ms, kNoEventTime when a row has
// none, as Record<T>::event_time). The schema is fixed at plan time and shared.
class ColumnBatch final : public BatchBase {
 public:
  explicit ColumnBatch(SchemaPtr schema, std::size_t capacity = 0);

  const SchemaPtr& schema() const { return schema_; }
  std::size_t num_columns() const { return columns_.size(); }
  Column& column(std::size_t i) { return columns_[i]; }
  const Column& column(std::size_t i) const { return columns_[i]; }
  std::vector<Column>& columns() { return columns_; }

  std::vector<RowKind>& row_kinds() { return row_kinds_; }
  const std::vector<RowKind>& row_kinds() const { return row_kinds_; }
  RowKind row_kind(std::size_t row) const { return row_kinds_[row]; }
  std::vector<EventTime>& event_times() { return event_times_; }
  const std::vector<EventTime>& event_times() const { return event_times_; }

  // BatchBase
  std::size_t size() const override { return row_kinds_.size(); }
  BatchPtr clone() const override { return std::make_unique<ColumnBatch>(*this); }
  BatchPtr empty_like(std::size_t capacity) const override { return std::make_unique<ColumnBatch>(schema_, capacity); }
  std::type_index type() const override { return typeid(ColumnBatch); }

  void clear();
  void reserve(std::size_t rows);

  // Appends one row from Values (the general path for tests, literals and sources that
  // decode row by row; a hot path fills columns directly and calls commit_rows).
  void append_row(const std::vector<Value>& values, RowKind kind = RowKind::kInsert,
                  EventTime event_time = kNoEventTime);
  // After columns were appended to directly: records `n` new rows' kind and time. Every
  // column must then hold size() + n rows.
  void commit_rows(std::size_t n, RowKind kind = RowKind::kInsert, EventTime event_time = kNoEventTime);

  // Selection without per-row allocation: the rows at `idx` (in that order), or the rows
  // whose bit is set in `mask` (64 rows per word).
  ColumnBatch gather(const std::uint32_t* idx, std::size_t n) const;
  ColumnBatch filter(const std::uint64_t* mask) const;
  // Appends rows src[idx[0..n)] (same schema).
  void append_gather(const ColumnBatch& src, const std::uint32_t* idx, std::size_t n);

  std::vector<Value> row_values(std::size_t row) const;

  // Checks that all columns have size() rows and match the schema; throws ClinkError.
  void validate() const;

 private:
  SchemaPtr schema_;
  std::vector<Column> columns_;
  std::vector<RowKind> row_kinds_;
  std::vector<EventTime> event_times_;
};

inline ColumnBatch& column_batch_cast(BatchBase& b) { return static_cast<ColumnBatch&>(b); }
inline const ColumnBatch& column_batch_cast(const BatchBase& b) { return static_cast<const ColumnBatch&>(b); }

// Flink's print sink form: "+I[1, abc, 2020-04-15 08:05:00.000]". Values are written as
// CAST(v AS STRING) writes them (TIMESTAMP_LTZ in `zone`), NULL as "null", BYTES as x'0a1b';
// nested values as Row.toString does: ROW +I[1, abc], NULL inside them "null".
std::string format_row(const ColumnBatch& batch, std::size_t row, const TimeZone& zone);
// One format_row line per row.
std::vector<std::string> format_rows(const ColumnBatch& batch, const TimeZone& zone);
std::vector<std::string> format_rows(const ColumnBatch& batch);  // UTC

}  // namespace clink::sql
