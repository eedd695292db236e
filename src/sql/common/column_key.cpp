#include "clink/sql/common/column_key.hpp"

#include <bit>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "clink/runtime/key_group.hpp"

// Inlined, so a hash of a constant key width compiles to that width's code path (the
// same function as key_hash's XXH3_64bits, seed 0).
#define XXH_INLINE_ALL
#include <xxhash.h>

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

// The value width of an integer type's key (KeyCodec of the physical integer); 0 for
// the other types.
std::size_t int_width(TypeKind k) {
  switch (k) {
    case TypeKind::kTinyInt: return 1;
    case TypeKind::kSmallInt: return 2;
    case TypeKind::kInt:
    case TypeKind::kDate:
    case TypeKind::kTime:
    case TypeKind::kIntervalYearMonth: return 4;
    case TypeKind::kBigInt:
    case TypeKind::kTimestamp:
    case TypeKind::kTimestampLtz:
    case TypeKind::kIntervalDayTime: return 8;
    default: return 0;
  }
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
  for (auto c : key_columns_) int_widths_.push_back(static_cast<std::uint8_t>(int_width(schema.type(c).kind())));
  bool all_int = !key_columns_.empty();
  for (auto w : int_widths_) {
    all_int = all_int && w != 0;
    fixed_key_bytes_ += 1 + w;
  }
  if (!all_int) fixed_key_bytes_ = 0;
}

void RowKeyEncoder::encode(const ColumnBatch& batch, std::size_t row, std::string& out) const {
  for (std::size_t k = 0; k < key_columns_.size(); ++k) encoders_[k](batch.column(key_columns_[k]), row, out);
}

void RowKeyEncoder::hash_rows(const ColumnBatch& batch, std::vector<std::uint64_t>& hashes) const {
  std::size_t n = batch.size();
  hashes.resize(n);
  if (fixed_key_bytes_ != 0) {
    hash_fixed(batch, hashes);
    return;
  }
  for (std::size_t r = 0; r < n; ++r) {
    scratch_.clear();
    encode(batch, r, scratch_);
    hashes[r] = key_hash(scratch_);
  }
}

namespace {

// Writes the key bytes of n values of one integer column (marker 0x01, then KeyCodec's
// big-endian, sign-flipped value) at `out`, `stride` bytes apart.
template <class T>
void write_int_keys(const Column& c, std::size_t n, unsigned char* out, std::size_t stride) {
  using U = std::make_unsigned_t<T>;
  const T* v = c.values<T>();
  for (std::size_t r = 0; r < n; ++r, out += stride) {
    U u = static_cast<U>(static_cast<U>(v[r]) ^ (U(1) << (sizeof(T) * 8 - 1)));
    if constexpr (sizeof(T) == 2) u = __builtin_bswap16(u);
    else if constexpr (sizeof(T) == 4) u = __builtin_bswap32(u);
    else if constexpr (sizeof(T) == 8) u = __builtin_bswap64(u);
    out[0] = 1;
    std::memcpy(out + 1, &u, sizeof(T));
  }
}

// XXH3 of each W-byte key in `flat`: with W a constant, XXH3's length dispatch folds away.
template <std::size_t W>
void hash_keys(const unsigned char* flat, std::size_t n, std::uint64_t* out) {
  for (std::size_t r = 0; r < n; ++r) out[r] = XXH3_64bits(flat + r * W, W);
}

}  // namespace

void RowKeyEncoder::hash_fixed(const ColumnBatch& batch, std::vector<std::uint64_t>& hashes) const {
  const std::size_t n = batch.size(), w = fixed_key_bytes_;
  flat_.resize(n * w);
  std::size_t at = 0;
  bool nulls = false;
  for (std::size_t k = 0; k < key_columns_.size(); ++k) {
    const Column& c = batch.column(key_columns_[k]);
    nulls = nulls || c.null_count() != 0;
    switch (int_widths_[k]) {
      case 1: write_int_keys<std::int8_t>(c, n, flat_.data() + at, w); break;
      case 2: write_int_keys<std::int16_t>(c, n, flat_.data() + at, w); break;
      case 4: write_int_keys<std::int32_t>(c, n, flat_.data() + at, w); break;
      default: write_int_keys<std::int64_t>(c, n, flat_.data() + at, w); break;
    }
    at += 1 + int_widths_[k];
  }
  switch (w) {
    case 5: hash_keys<5>(flat_.data(), n, hashes.data()); break;     // INT
    case 9: hash_keys<9>(flat_.data(), n, hashes.data()); break;     // BIGINT
    case 18: hash_keys<18>(flat_.data(), n, hashes.data()); break;  // two BIGINTs
    default:
      for (std::size_t r = 0; r < n; ++r) hashes[r] = XXH3_64bits(flat_.data() + r * w, w);
  }
  if (!nulls) return;
  // A NULL's key is its marker alone (a shorter key): those rows go the general way.
  for (std::size_t r = 0; r < n; ++r) {
    bool null = false;
    for (auto c : key_columns_) null = null || batch.column(c).is_null(r);
    if (!null) continue;
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
      rows_per_target_(static_cast<std::size_t>(targets)) {
  for (int kg = 0; kg < max_parallelism; ++kg)
    target_of_group_.push_back(static_cast<std::uint32_t>(subtask_for_key_group(kg, max_parallelism, targets)));
}

void ColumnBatchHashPartitioner::partition(BatchPtr batch, std::vector<BatchPtr>& out) {
  const auto& in = column_batch_cast(*batch);
  encoder_.hash_rows(in, hashes_);
  for (auto& v : rows_per_target_) v.clear();
  const auto mp = static_cast<std::uint64_t>(max_parallelism_);
  const std::uint32_t* target_of = target_of_group_.data();
  if (std::has_single_bit(mp)) {  // key_group_for_hash: hash % mp, here a mask
    for (std::size_t r = 0; r < hashes_.size(); ++r)
      rows_per_target_[target_of[hashes_[r] & (mp - 1)]].push_back(static_cast<std::uint32_t>(r));
  } else {
    for (std::size_t r = 0; r < hashes_.size(); ++r)
      rows_per_target_[target_of[key_group_for_hash(hashes_[r], max_parallelism_)]].push_back(static_cast<std::uint32_t>(r));
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
