#include "clink/sql/common/column_batch.hpp"

#include <fmt/format.h>

#include "clink/core/error.hpp"
#include "clink/sql/common/time_zone.hpp"
#include "clink/sql/common/value_format.hpp"

namespace clink::sql {

ColumnBatch::ColumnBatch(SchemaPtr schema, std::size_t capacity) : schema_(std::move(schema)) {
  columns_.reserve(schema_->size());
  for (const auto& f : schema_->fields()) columns_.emplace_back(f.type);
  if (capacity != 0) reserve(capacity);
}

void ColumnBatch::clear() {
  for (auto& c : columns_) c.clear();
  row_kinds_.clear();
  event_times_.clear();
}

void ColumnBatch::reserve(std::size_t rows) {
  for (auto& c : columns_) c.reserve(rows);
  row_kinds_.reserve(rows);
  event_times_.reserve(rows);
}

void ColumnBatch::append_row(const std::vector<Value>& values, RowKind kind, EventTime event_time) {
  if (values.size() != columns_.size())
    throw ClinkError(fmt::format("a row of {} values for a schema of {} columns {}", values.size(), columns_.size(),
                                 schema_->to_string()));
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    if (values[c].is_null() && !columns_[c].type().nullable())
      throw ClinkError(fmt::format("NULL for the NOT NULL column `{}`", schema_->name(c)));
    columns_[c].append_value(values[c]);
  }
  row_kinds_.push_back(kind);
  event_times_.push_back(event_time);
}

void ColumnBatch::commit_rows(std::size_t n, RowKind kind, EventTime event_time) {
  row_kinds_.insert(row_kinds_.end(), n, kind);
  event_times_.insert(event_times_.end(), n, event_time);
}

ColumnBatch ColumnBatch::gather(const std::uint32_t* idx, std::size_t n) const {
  ColumnBatch out(schema_, n);
  out.append_gather(*this, idx, n);
  return out;
}

void ColumnBatch::append_gather(const ColumnBatch& src, const std::uint32_t* idx, std::size_t n) {
  for (std::size_t c = 0; c < columns_.size(); ++c) columns_[c].append_gather(src.columns_[c], idx, n);
  std::size_t base = row_kinds_.size();
  row_kinds_.resize(base + n);
  event_times_.resize(base + n);
  for (std::size_t k = 0; k < n; ++k) {
    row_kinds_[base + k] = src.row_kinds_[idx[k]];
    event_times_[base + k] = src.event_times_[idx[k]];
  }
}

ColumnBatch ColumnBatch::filter(const std::uint64_t* mask) const {
  std::size_t n = size();
  // The index vector lives on the stack for the usual batch sizes.
  constexpr std::size_t kStack = 2048;
  std::uint32_t stack_idx[kStack];
  std::vector<std::uint32_t> heap_idx;
  std::uint32_t* idx = stack_idx;
  if (n > kStack) {
    heap_idx.resize(n);
    idx = heap_idx.data();
  }
  std::size_t k = 0;
  for (std::size_t w = 0; w * 64 < n; ++w) {
    std::uint64_t bits = mask[w];
    if (w * 64 + 64 > n) bits &= (std::uint64_t(1) << (n - w * 64)) - 1;
    while (bits != 0) {
      idx[k++] = static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits)));
      bits &= bits - 1;
    }
  }
  return gather(idx, k);
}

std::vector<Value> ColumnBatch::row_values(std::size_t row) const {
  std::vector<Value> v;
  v.reserve(columns_.size());
  for (const auto& c : columns_) v.push_back(c.value_at(row));
  return v;
}

void ColumnBatch::validate() const {
  if (columns_.size() != schema_->size())
    throw ClinkError(fmt::format("batch has {} columns, schema {} has {}", columns_.size(), schema_->to_string(), schema_->size()));
  if (event_times_.size() != row_kinds_.size())
    throw ClinkError(fmt::format("batch has {} row kinds but {} event times", row_kinds_.size(), event_times_.size()));
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    if (columns_[c].size() != size())
      throw ClinkError(fmt::format("column `{}` has {} rows, the batch {}", schema_->name(c), columns_[c].size(), size()));
    if (!columns_[c].type().same_ignoring_nullability(schema_->type(c)))
      throw ClinkError(fmt::format("column `{}` is {}, the schema says {}", schema_->name(c),
                                   columns_[c].type().to_string(), schema_->type(c).to_string()));
  }
}

std::string format_row(const ColumnBatch& batch, std::size_t row, const TimeZone& zone) {
  std::string s(row_kind_short_string(batch.row_kind(row)));
  s += '[';
  for (std::size_t c = 0; c < batch.num_columns(); ++c) {
    if (c != 0) s += ", ";
    const Column& col = batch.column(c);
    if (col.is_null(row)) s += "null";
    else append_print_cell(col, row, zone, s);
  }
  s += ']';
  return s;
}

std::vector<std::string> format_rows(const ColumnBatch& batch, const TimeZone& zone) {
  std::vector<std::string> out;
  out.reserve(batch.size());
  for (std::size_t r = 0; r < batch.size(); ++r) out.push_back(format_row(batch, r, zone));
  return out;
}

std::vector<std::string> format_rows(const ColumnBatch& batch) { return format_rows(batch, *TimeZone::utc()); }

}  // namespace clink::sql
