#pragma once
// Grouping keys of the SQL operators as the window engine and keyed state see them:
// the bytes of RowKeyEncoder (column_key.hpp), used verbatim as the state key, so the
// key group of a key in state equals the one ColumnBatchHashPartitioner routed it by.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "clink/runtime/key_group.hpp"
#include "clink/sql/column.hpp"
#include "clink/sql/types.hpp"

namespace clink::sql {

struct RowKey {
  std::string bytes;
  friend bool operator==(const RowKey&, const RowKey&) = default;
  template <class H>
  friend H AbslHashValue(H h, const RowKey& k) {
    return H::combine(std::move(h), k.bytes);
  }
};

// Appends one key value (as append_key_value wrote it) to `out`, consuming it from
// `in`. Supports the flat types (not ARRAY / MAP / ROW).
void decode_key_value(std::string_view& in, Column& out);
// Whether decode_key_value supports a type (checked when an op is built).
bool key_type_decodable(const LogicalType& type);

}  // namespace clink::sql

namespace clink {
// The key's bytes as they are (no length prefix): they already are the encoded key.
template <>
struct KeyCodec<sql::RowKey> {
  static void encode(const sql::RowKey& key, std::string& out) { out.append(key.bytes); }
  static sql::RowKey decode(std::string_view& in) {
    sql::RowKey k{std::string(in)};
    in.remove_prefix(in.size());
    return k;
  }
};
}  // namespace clink
