#include "clink/sql/common/column_key.hpp"

#include <bit>
#include <cmath>

#include <fmt/format.h>

#include "clink/runtime/key_group.hpp"

namespace clink::sql {

namespace {

template <class T>
void encode_int(const Column& c, std::size_t row, std::string& out) {
  if (c.is_null(row)) {
    out += '\0';
    return;
  }
  out += '\1';
  KeyCodec<T>::encode(c.values<T>()[row], out);
}

void encode_bool(const Column& c, std::size_t row, std::string& out) {
  if (c.is_null(row)) {
    out += '\0';
    return;
  }
  out += '\1';
  out += c.values<std::uint8_t>()[row] ? '\1' : '\0';
}

template <class F, class U>
void encode_float(const Column& c, std::size_t row, std::string& out) {
  if (c.is_null(row)) {
    out += '\0';
    return;
  }
  out += '\1';
  F v = c.values<F>()[row];
  if (v == 0) v = 0;  // -0.0 == 0.0 in SQL
  if (std::isnan(v)) v = std::numeric_limits<F>::quiet_NaN();
  U bits = std::bit_cast<U>(v);
  constexpr U kSign = U(1) << (sizeof(U) * 8 - 1);
  bits = (bits & kSign) ? ~bits : (bits | kSign);
  KeyCodec<U>::encode(bits, out);
}

void encode_decimal(const Column& c, std::size_t row, std::string& out) {
  if (c.is_null(row)) {
    out += '\0';
    return;
  }
  out += '\1';
  auto u = static_cast<UInt128>(c.values<Int128>()[row]) ^ (static_cast<UInt128>(1) << 127);
  KeyCodec<std::uint64_t>::encode(static_cast<std::uint64_t>(u >> 64), out);
  KeyCodec<std::uint64_t>::encode(static_cast<std::uint64_t>(u), out);
}

void encode_string(const Column& c, std::size_t row, std::string& out) {
  if (c.is_null(row)) {
    out += '\0';
    return;
  }
  out += '\1';
  KeyCodec<std::string>::encode(c.string_at(row), out);
}

void encode_nested(const Column& c, std::size_t row, std::string& out) {
  if (c.is_null(row)) {
    out += '\0';
    return;
  }
  out += '\1';
  if (c.layout() == PhysicalLayout::kStruct) {
    for (std::size_t f = 0; f < c.num_children(); ++f) append_key_value(c.child(f), row, out);
    return;
  }
  auto [b, e] = c.list_range(row);
  KeyCodec<std::uint32_t>::encode(e - b, out);
  for (auto k = b; k < e; ++k) {
    append_key_value(c.child(0), k, out);
    if (c.layout() == PhysicalLayout::kMap) append_key_value(c.child(1), k, out);
  }
}

void encode_null(const Column&, std::size_t, std::string& out) { out += '\0'; }

RowKeyEncoder::EncodeFn encoder_for(TypeKind k) {
  switch (k) {
    case TypeKind::kNull: return encode_null;
    case TypeKind::kBoolean: return encode_bool;
    case TypeKind::kTinyInt: return encode_int<std::int8_t>;
    case TypeKind::kSmallInt: return encode_int<std::int16_t>;
    case TypeKind::kInt:
    case TypeKind::kDate:
    case TypeKind::kTime:
    case TypeKind::kIntervalYearMonth: return encode_int<std::int32_t>;
    case TypeKind::kBigInt:
    case TypeKind::kTimestamp:
    case TypeKind::kTimestampLtz:
    case TypeKind::kIntervalDayTime: return encode_int<std::int64_t>;
    case TypeKind::kFloat: return encode_float<float, std::uint32_t>;
    case TypeKind::kDouble: return encode_float<double, std::uint64_t>;
    case TypeKind::kDecimal: return encode_decimal;
    case TypeKind::kChar:
    case TypeKind::kVarChar:
    case TypeKind::kBinary:
    case TypeKind::kVarBinary: return encode_string;
    case TypeKind::kArray:
    case TypeKind::kMap:
    case TypeKind::kRow: return encode_nested;
  }
  return encode_null;
}

}  // namespace

void append_key_value(const Column& col, std::size_t row, std::string& out) {
  encoder_for(col.type().kind())(col, row, out);
}

namespace {

template <class T>
T decode_int(std::string_view& in) {
  if (in.size() < sizeof(T)) throw ClinkError("truncated key bytes");
  return KeyCodec<T>::decode(in);
}

template <class F, class U>
F decode_float(std::string_view& in) {
  U bits = decode_int<U>(in);
  constexpr U kSign = U(1) << (sizeof(U) * 8 - 1);
  bits = (bits & kSign) ? (bits & ~kSign) : ~bits;
  return std::bit_cast<F>(bits);
}

}  // namespace

void append_decoded_key_value(std::string_view& in, Column& out) {
  if (in.empty()) throw ClinkError("truncated key bytes");
  char marker = in[0];
  in.remove_prefix(1);
  if (marker == '\0') {
    out.append_null();
    return;
  }
  switch (out.type().kind()) {
    case TypeKind::kBoolean: {
      if (in.empty()) throw ClinkError("truncated key bytes");
      out.append<std::uint8_t>(in[0] != 0);
      in.remove_prefix(1);
      return;
    }
    case TypeKind::kTinyInt: out.append(decode_int<std::int8_t>(in)); return;
    case TypeKind::kSmallInt: out.append(decode_int<std::int16_t>(in)); return;
    case TypeKind::kInt:
    case TypeKind::kDate:
    case TypeKind::kTime:
    case TypeKind::kIntervalYearMonth: out.append(decode_int<std::int32_t>(in)); return;
    case TypeKind::kBigInt:
    case TypeKind::kTimestamp:
    case TypeKind::kTimestampLtz:
    case TypeKind::kIntervalDayTime: out.append(decode_int<std::int64_t>(in)); return;
    case TypeKind::kFloat: out.append(decode_float<float, std::uint32_t>(in)); return;
    case TypeKind::kDouble: out.append(decode_float<double, std::uint64_t>(in)); return;
    case TypeKind::kDecimal: {
      UInt128 hi = decode_int<std::uint64_t>(in), lo = decode_int<std::uint64_t>(in);
      out.append(static_cast<Int128>(((hi << 64) | lo) ^ (static_cast<UInt128>(1) << 127)));
      return;
    }
    case TypeKind::kChar:
    case TypeKind::kVarChar:
    case TypeKind::kBinary:
    case TypeKind::kVarBinary: {
      auto n = decode_int<std::uint32_t>(in);
      if (in.size() < n) throw ClinkError("truncated key bytes");
      out.append_string(in.substr(0, n));
      in.remove_prefix(n);
      return;
    }
    default: throw ClinkError(fmt::format("cannot decode key bytes of type {}", out.type().to_string()));
  }
}

RowKeyEncoder::RowKeyEncoder(const Schema& schema, std::vector<std::size_t> key_columns)
    : key_columns_(std::move(key_columns)) {
  for (auto c : key_columns_) {
    if (c >= schema.size())
      throw ClinkError(fmt::format("key column {} is out of range for schema {}", c, schema.to_string()));
    encoders_.push_back(encoder_for(schema.type(c).kind()));
  }
}

void RowKeyEncoder::encode(const ColumnBatch& batch, std::size_t row, std::string& out) const {
  for (std::size_t k = 0; k < key_columns_.size(); ++k) encoders_[k](batch.column(key_columns_[k]), row, out);
}

void RowKeyEncoder::hash_rows(const ColumnBatch& batch, std::vector<std::uint64_t>& hashes) const {
  std::size_t n = batch.size();
  hashes.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    scratch_.clear();
    encode(batch, r, scratch_);
    hashes[r] = key_hash(scratch_);
  }
}

ColumnBatchHashPartitioner::ColumnBatchHashPartitioner(const Schema& schema, std::vector<std::size_t> key_columns,
                                                       int targets, int max_parallelism)
    : encoder_(schema, std::move(key_columns)),
      targets_(targets),
      max_parallelism_(max_parallelism),
      rows_per_target_(static_cast<std::size_t>(targets)) {}

void ColumnBatchHashPartitioner::partition(BatchPtr batch, std::vector<BatchPtr>& out) {
  const auto& in = column_batch_cast(*batch);
  encoder_.hash_rows(in, hashes_);
  for (auto& v : rows_per_target_) v.clear();
  for (std::size_t r = 0; r < hashes_.size(); ++r) {
    int kg = key_group_for_hash(hashes_[r], max_parallelism_);
    auto t = static_cast<std::size_t>(subtask_for_key_group(kg, max_parallelism_, targets_));
    rows_per_target_[t].push_back(static_cast<std::uint32_t>(r));
  }
  for (std::size_t t = 0; t < rows_per_target_.size(); ++t) {
    const auto& rows = rows_per_target_[t];
    if (rows.empty()) continue;
    if (rows.size() == in.size()) {  // everything goes one way: move the batch as is
      out[t] = std::move(batch);
      return;
    }
    out[t] = std::make_unique<ColumnBatch>(in.gather(rows.data(), rows.size()));
  }
}

PartitionerFactory column_batch_hash_partitioner_factory(SchemaPtr schema, std::vector<std::size_t> key_columns) {
  return [schema = std::move(schema), key_columns = std::move(key_columns)](int, int targets, int max_parallelism)
             -> std::unique_ptr<Partitioner> {
    return std::make_unique<ColumnBatchHashPartitioner>(*schema, key_columns, targets, max_parallelism);
  };
}

}  // namespace clink::sql
