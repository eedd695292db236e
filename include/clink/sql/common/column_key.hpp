#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "clink/runtime/partitioner.hpp"
#include "clink/sql/common/column_batch.hpp"

namespace clink::sql {

// Encodes chosen columns of a row into compact, stable key bytes, the SQL counterpart of
// KeyCodec (runtime/key_group.hpp): the keyed state backend stores them and key_hash()
// of them picks the key group. Stable across processes and releases (pinned by a test).
// Per column: one marker byte (0x00 NULL, 0x01 present; the same for nullable and NOT
// NULL columns, so two plans that disagree on nullability still agree on keys), then
//   BOOLEAN 1 byte; TINYINT..BIGINT, DATE, TIME, TIMESTAMP(_LTZ), INTERVAL: KeyCodec of
//   the physical integer (big-endian, sign bit flipped: byte order = numeric order);
//   FLOAT/DOUBLE: order-preserving IEEE bits (-0.0 as 0.0, one NaN); DECIMAL: 16 bytes
//   like an int128 KeyCodec; strings and bytes: KeyCodec<std::string> (4-byte length,
//   bytes); ARRAY/MAP: 4-byte count then the elements (MAP: key, value); ROW: the fields.
class RowKeyEncoder {
 public:
  RowKeyEncoder(const Schema& schema, std::vector<std::size_t> key_columns);

  // Appends the key of `row` to `out`.
  void encode(const ColumnBatch& batch, std::size_t row, std::string& out) const;
  std::string encode(const ColumnBatch& batch, std::size_t row) const {
    std::string s;
    encode(batch, row, s);
    return s;
  }
  // key_hash() of every row's key (one reusable buffer, no allocation per row). Keys of
  // integer columns (fixed width) are written column by column into one flat buffer
  // and hashed from there, the same bytes without a call per value (hash_fixed).
  void hash_rows(const ColumnBatch& batch, std::vector<std::uint64_t>& hashes) const;

  const std::vector<std::size_t>& key_columns() const { return key_columns_; }

  using EncodeFn = void (*)(const Column&, std::size_t, std::string&);

 private:
  std::vector<std::size_t> key_columns_;
  std::vector<EncodeFn> encoders_;
  mutable std::string scratch_;
  // Integer key columns: each one's value width; their key's width (markers included),
  // 0 when a key column is not an integer.
  std::vector<std::uint8_t> int_widths_;
  std::size_t fixed_key_bytes_ = 0;
  mutable std::vector<unsigned char> flat_;

  void hash_fixed(const ColumnBatch& batch, std::vector<std::uint64_t>& hashes) const;
};

// Appends one value's key bytes (marker included).
void append_key_value(const Column& col, std::size_t row, std::string& out);
// The inverse for scalar (non-nested) types: reads one value's key bytes from the front
// of `in` and appends the value (or NULL) to `out`. Throws ClinkError on short input.
void append_decoded_key_value(std::string_view& in, Column& out);

// Routes each row of a ColumnBatch by the key group of its key columns, as HashPartitioner
// does for typed records; a part keeps its rows in input order with their kinds and times.
class ColumnBatchHashPartitioner final : public Partitioner {
 public:
  ColumnBatchHashPartitioner(const Schema& schema, std::vector<std::size_t> key_columns, int targets,
                             int max_parallelism);
  void partition(BatchPtr batch, std::vector<BatchPtr>& out) override;

 private:
  RowKeyEncoder encoder_;
  int targets_;
  int max_parallelism_;
  // subtask_for_key_group of every key group, computed once: two divisions per row
  // fewer (and a mask instead of the modulo when max_parallelism is a power of two).
  std::vector<std::uint32_t> target_of_group_;
  std::vector<std::uint64_t> hashes_;
  std::vector<std::vector<std::uint32_t>> rows_per_target_;
};

PartitionerFactory column_batch_hash_partitioner_factory(SchemaPtr schema, std::vector<std::size_t> key_columns);

}  // namespace clink::sql
