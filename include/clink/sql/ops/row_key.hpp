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
#include "clink/sql/common/column.hpp"
#include "clink/sql/common/types.hpp"
#include "clink/windows/key_radix.hpp"

namespace clink::sql {

struct RowKey {
  std::string bytes;
  friend bool operator==(const RowKey&, const RowKey&) = default;
  template <class H>
  friend H AbslHashValue(H h, const RowKey& k) {
    return H::combine(std::move(h), k.bytes);
  }
};

// A single 8-byte integer key column (BIGINT, TIMESTAMP, TIMESTAMP_LTZ, INTERVAL DAY TO
// SECOND) held as the number: the same key bytes as RowKey (KeyCodec below writes the
// marker byte and the value as RowKeyEncoder does), a cheaper hash-map key.
struct Int64Key {
  std::int64_t value = 0;
  bool null = false;
  friend bool operator==(const Int64Key&, const Int64Key&) = default;
  template <class H>
  friend H AbslHashValue(H h, const Int64Key& k) {
    return H::combine(std::move(h), k.value, k.null);
  }
};
bool int64_key_type(const LogicalType& type);

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
template <>
struct KeyCodec<sql::Int64Key> {
  static void encode(const sql::Int64Key& key, std::string& out) {
    if (key.null) {
      out.push_back('\0');
      return;
    }
    out.push_back('\1');
    KeyCodec<std::int64_t>::encode(key.value, out);
  }
  static sql::Int64Key decode(std::string_view& in) {
    sql::Int64Key k;
    k.null = in.empty() || in[0] == '\0';
    in.remove_prefix(in.empty() ? 0 : 1);
    if (!k.null) k.value = KeyCodec<std::int64_t>::decode(in);
    return k;
  }
};
// Its bytes order as the value's sign-flipped bits (the marker is the same for every
// non-NULL key): a window firing's results are radix-sorted by key instead of encoding
// both keys per comparison. A NULL key ("\0") has no image.
template <>
struct window_detail::KeyRadix<sql::Int64Key> : std::true_type {
  using U = std::uint64_t;
  static bool has_image(const sql::Int64Key& k) { return !k.null; }
  static U image(const sql::Int64Key& k) { return static_cast<U>(k.value) ^ (U(1) << 63); }
};
}  // namespace clink
