#pragma once
#include <string>
#include <string_view>

#include "clink/sql/common/column_batch.hpp"

namespace clink::sql {

// The binary columnar encoding of a batch, for state and for batches between processes.
// The schema is not written (both sides know it from the plan); each column's type kind
// is, so a mismatched schema fails loudly. Layout (little-endian):
//   "CLB1" u32 columns u32 rows | row kinds (1 byte each) | u8 has_event_times [i64 each]
//   per column: u8 kind, validity bits ((rows + 7) / 8 bytes), then
//     fixed width: the values; strings: u32 offsets (rows + 1) and the bytes;
//     ARRAY/MAP: u32 offsets and the child column(s) of offsets[rows] rows; ROW: the fields.
void serialize_batch(const ColumnBatch& batch, std::string& out);
std::string serialize_batch(const ColumnBatch& batch);
// Throws ClinkError naming the byte offset on truncated or mismatched input.
ColumnBatch deserialize_batch(SchemaPtr schema, std::string_view bytes);

}  // namespace clink::sql
