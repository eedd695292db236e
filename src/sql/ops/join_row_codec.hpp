#pragma once
// Internal: a join side's whole row as state bytes and back (SideRowCodec). What every
// SQL join keeps per stored row, so it is compact, and it sorts like the column key
// encoding (column_key.hpp) so the rows of a key iterate in the same order as before.
//
// Per column, prefix-free and order-preserving, so rows compare as tuples:
//   integers (TINYINT..BIGINT, DATE, TIME, TIMESTAMP(_LTZ), INTERVAL): one header byte
//     then n = 0..8 big-endian bytes: NULL 0x00; v >= 0: 0x20 + n, v's low n bytes;
//     v < 0: 0x18 - n, v's low n bytes (n the bytes of ~v). 0 and -1 take one byte, a
//     millisecond timestamp seven, instead of nine.
//   strings and bytes: NULL 0x00; else 0x01, the length (one byte below 0xF0, else
//     0xF0 + k - 1 and k big-endian bytes), the bytes.
//   other types: the column key encoding (marker byte, fixed width).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "clink/sql/common/column_batch.hpp"

namespace clink::sql {

class SideRowCodec {
 public:
  explicit SideRowCodec(const Schema& schema);
  // Appends row `row` of `batch` (of this side's schema) to `out`.
  void encode(const ColumnBatch& batch, std::size_t row, std::string& out) const;
  // Appends the decoded row to `out` (a batch of this side's schema; kind +I, no time).
  // Throws ClinkError on malformed bytes.
  void decode(std::string_view bytes, ColumnBatch& out) const;

  using EncodeFn = void (*)(const Column&, std::size_t, std::string&);
  using DecodeFn = void (*)(std::string_view&, Column&);

 private:
  std::vector<EncodeFn> encoders_;
  std::vector<DecodeFn> decoders_;
};

}  // namespace clink::sql
