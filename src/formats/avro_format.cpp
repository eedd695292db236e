// Flink's `avro` format for messages (AvroFormatFactory, no schema registry): the Avro
// binary encoding of one record whose schema is derived from the fields as Flink's
// AvroSchemaConverter.convertToSchema derives it, read and written by a small codec here
// (zigzag varints, length-prefixed bytes, blocked arrays and maps; no Avro library).
//
// The derived schema: a nullable type is the union ["null", T] (index 0 null, 1 the
// value); BOOLEAN boolean; TINYINT, SMALLINT, INT int; BIGINT long; FLOAT float; DOUBLE
// double; CHAR/VARCHAR string; BINARY/VARBINARY bytes; DECIMAL(p, s) bytes (decimal: the
// unscaled value's minimal big-endian two's complement, as BigInteger.toByteArray); DATE
// int (days); TIME(p <= 3) int (time-millis); ARRAY array; MAP with a character-string
// key map; ROW record. Timestamps follow avro.timestamp_mapping.legacy (default true, as
// Flink): legacy TIMESTAMP(p <= 3) is long timestamp-millis and TIMESTAMP(p > 3) and
// TIMESTAMP_LTZ are rejected; otherwise TIMESTAMP is local-timestamp-millis/-micros and
// TIMESTAMP_LTZ timestamp-millis/-micros (p <= 3 / p <= 6), both longs.
//
// Options: avro.encoding (only 'binary'; 'json' is rejected), avro.timestamp_mapping.legacy,
// avro.fast-read (accepted, no effect). avro.codec is a file option (Avro container files)
// and rejected here as in Flink's message format. No ignore-parse-errors (as Flink).
// Bytes after the record are ignored, as Flink's reader ignores them.
#include <bit>
#include <cstring>

#include "clink/core/error.hpp"
#include "clink/formats/sql_text_values.hpp"
#include "clink/sql/common/decimal.hpp"
#include "record_format_impl.hpp"

namespace clink::sql::record_format_detail {

namespace {

struct AvroOptions {
  bool legacy_timestamps = true;
};

AvroOptions avro_options(const FormatOptions& options) {
  check_keys("avro", options, avro_keys());
  AvroOptions o;
  if (auto it = options.find("avro.encoding"); it != options.end() && it->second != "binary")
    throw ClinkError("option 'avro.encoding': only 'binary' is supported, got '" + it->second + "'");
  o.legacy_timestamps = bool_option(options, "avro.timestamp_mapping.legacy", true);
  (void)bool_option(options, "avro.fast-read", false);
  return o;
}

// How one type is read and written.
struct AvroNode {
  TypeKind kind = TypeKind::kNull;
  bool nullable = true;
  bool micros = false;  // TIMESTAMP / TIMESTAMP_LTZ: micros, else millis
  int precision = 0, scale = 0;
  std::vector<std::string> names;  // ROW
  std::vector<AvroNode> children;  // ARRAY: element; MAP: key, value; ROW: fields
};

AvroNode plan_of(const LogicalType& t, bool legacy) {
  AvroNode n;
  n.kind = t.kind();
  n.nullable = t.nullable();
  n.precision = t.precision();
  n.scale = t.scale();
  switch (t.kind()) {
    case TypeKind::kBoolean:
    case TypeKind::kTinyInt:
    case TypeKind::kSmallInt:
    case TypeKind::kInt:
    case TypeKind::kBigInt:
    case TypeKind::kFloat:
    case TypeKind::kDouble:
    case TypeKind::kDecimal:
    case TypeKind::kChar:
    case TypeKind::kVarChar:
    case TypeKind::kBinary:
    case TypeKind::kVarBinary:
    case TypeKind::kDate: break;
    case TypeKind::kTime:
      if (t.precision() > 3)
        throw ClinkError("Avro does not support TIME type with precision: " + std::to_string(t.precision()) +
                         ", it only supports precision less than 3.");
      break;
    case TypeKind::kTimestamp:
      if (legacy && t.precision() > 3)
        throw ClinkError("Avro does not support TIMESTAMP type with precision: " + std::to_string(t.precision()) +
                         ", it only supports precision less than 3.");
      if (!legacy && t.precision() > 6)
        throw ClinkError("Avro does not support LOCAL TIMESTAMP type with precision: " +
                         std::to_string(t.precision()) + ", it only supports precision less than 6.");
      n.micros = t.precision() > 3;
      break;
    case TypeKind::kTimestampLtz:
      if (legacy) throw ClinkError("Unsupported to derive Schema for type: " + t.to_string());
      if (t.precision() > 6)
        throw ClinkError("Avro does not support TIMESTAMP type with precision: " + std::to_string(t.precision()) +
                         ", it only supports precision less than 6.");
      n.micros = t.precision() > 3;
      break;
    case TypeKind::kArray: n.children.push_back(plan_of(t.element_type(), legacy)); break;
    case TypeKind::kMap:
      if (!t.key_type().is_character_string())
        throw ClinkError("Avro format doesn't support non-string as key type of map. The key type is: " +
                         t.key_type().to_string());
      n.children.push_back(plan_of(t.key_type().not_null(), legacy));
      n.children.push_back(plan_of(t.value_type(), legacy));
      break;
    case TypeKind::kRow:
      for (const auto& f : t.fields()) {
        n.names.push_back(f.name);
        n.children.push_back(plan_of(f.type, legacy));
      }
      break;
    default: throw ClinkError("Unsupported to derive Schema for type: " + t.to_string());
  }
  return n;
}

// The top-level record (NOT NULL, as Flink's physical row type).
AvroNode plan_of(const Schema& s, bool legacy) {
  AvroNode n;
  n.kind = TypeKind::kRow;
  n.nullable = false;
  for (const auto& f : s.fields()) {
    n.names.push_back(f.name);
    n.children.push_back(plan_of(f.type, legacy));
  }
  return n;
}

// ---- decoding -------------------------------------------------------------------------

struct AvroError {
  std::string path;  // "a.b": the field, nested records joined by '.'
  std::string what;
};

class Reader {
 public:
  Reader(const unsigned char* p, const unsigned char* end) : p_(p), end_(end) {}

  std::int64_t read_long() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) throw AvroError{{}, "truncated message"};
      unsigned char b = *p_++;
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return static_cast<std::int64_t>((v >> 1) ^ (~(v & 1) + 1));
    }
    throw AvroError{{}, "invalid varint"};
  }
  std::int32_t read_int() {
    std::int64_t v = read_long();
    if (v < INT32_MIN || v > INT32_MAX) throw AvroError{{}, "int out of range: " + std::to_string(v)};
    return static_cast<std::int32_t>(v);
  }
  std::string_view read_bytes() {
    std::int64_t n = read_long();
    if (n < 0) throw AvroError{{}, "negative length " + std::to_string(n)};
    if (static_cast<std::uint64_t>(n) > static_cast<std::uint64_t>(end_ - p_)) throw AvroError{{}, "truncated message"};
    std::string_view s(reinterpret_cast<const char*>(p_), static_cast<std::size_t>(n));
    p_ += n;
    return s;
  }
  template <class T>
  T read_fixed() {  // float / double: little-endian IEEE 754
    if (static_cast<std::size_t>(end_ - p_) < sizeof(T)) throw AvroError{{}, "truncated message"};
    unsigned char b[sizeof(T)];
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(b, p_, sizeof(T));
    } else {
      for (std::size_t i = 0; i < sizeof(T); ++i) b[i] = p_[sizeof(T) - 1 - i];
    }
    p_ += sizeof(T);
    T v;
    std::memcpy(&v, b, sizeof v);
    return v;
  }
  bool read_bool() {
    if (p_ == end_) throw AvroError{{}, "truncated message"};
    unsigned char b = *p_++;
    if (b > 1) throw AvroError{{}, "invalid boolean byte " + std::to_string(b)};
    return b == 1;
  }
  // A block count of an array or map; a negative count is followed by the block's size.
  std::int64_t read_block_count() {
    std::int64_t n = read_long();
    if (n < 0) {
      // The most negative long has no positive counterpart: no writer produces it.
      if (n == INT64_MIN) throw AvroError{{}, "invalid block count " + std::to_string(n)};
      (void)read_long();
      n = -n;
    }
    // Every item of the derived schema takes a byte at least: a larger count is malformed.
    if (n > end_ - p_) throw AvroError{{}, "truncated message"};
    return n;
  }

 private:
  const unsigned char* p_;
  const unsigned char* end_;
};

void read_value(Reader& r, const AvroNode& n, Column& col);

void read_record_fields(Reader& r, const AvroNode& n, Column* const* cols) {
  for (std::size_t i = 0; i < n.children.size(); ++i) {
    try {
      read_value(r, n.children[i], *cols[i]);
    } catch (AvroError& e) {
      e.path = n.names[i] + (e.path.empty() ? "" : "." + e.path);
      throw;
    }
  }
}

void read_value(Reader& r, const AvroNode& n, Column& col) {
  if (n.nullable) {
    std::int64_t branch = r.read_long();
    if (branch == 0) {
      col.append_null();
      return;
    }
    if (branch != 1) throw AvroError{{}, "invalid union index " + std::to_string(branch)};
  }
  switch (n.kind) {
    case TypeKind::kBoolean: col.append<std::uint8_t>(r.read_bool() ? 1 : 0); return;
    case TypeKind::kTinyInt: col.append<std::int8_t>(static_cast<std::int8_t>(r.read_int())); return;
    case TypeKind::kSmallInt: col.append<std::int16_t>(static_cast<std::int16_t>(r.read_int())); return;
    case TypeKind::kInt:
    case TypeKind::kDate:
    case TypeKind::kTime: col.append<std::int32_t>(r.read_int()); return;
    case TypeKind::kBigInt: col.append<std::int64_t>(r.read_long()); return;
    case TypeKind::kFloat: col.append<float>(r.read_fixed<float>()); return;
    case TypeKind::kDouble: col.append<double>(r.read_fixed<double>()); return;
    case TypeKind::kTimestamp:
    case TypeKind::kTimestampLtz: {
      const std::int64_t v = r.read_long();
      std::int64_t micros = v;
      if (!n.micros && __builtin_mul_overflow(v, 1000, &micros))  // found by fuzzing
        throw AvroError{{}, "timestamp-millis " + std::to_string(v) + " is out of range"};
      col.append<std::int64_t>(micros);
      return;
    }
    case TypeKind::kChar:
    case TypeKind::kVarChar:
    case TypeKind::kBinary:
    case TypeKind::kVarBinary: col.append_string(r.read_bytes()); return;
    case TypeKind::kDecimal: {
      std::string_view b = r.read_bytes();
      if (b.empty()) throw AvroError{{}, "empty decimal bytes"};
      // Two's complement, big-endian; beyond 16 bytes only sign extension fits.
      const bool negative = static_cast<signed char>(b[0]) < 0;
      while (b.size() > 16) {
        if (static_cast<unsigned char>(b[0]) != (negative ? 0xff : 0x00))
          throw AvroError{{}, "decimal does not fit DECIMAL(38)"};
        b.remove_prefix(1);
      }
      UInt128 u = negative ? ~static_cast<UInt128>(0) : 0;
      for (char c : b) u = (u << 8) | static_cast<unsigned char>(c);
      Int128 v = static_cast<Int128>(u);
      if (Decimal128::fits(v, n.precision)) col.append<Int128>(v);
      else col.append_null();  // as DecimalData.fromUnscaledBytes: NULL when it overflows
      return;
    }
    case TypeKind::kArray: {
      Column& elems = col.child(0);
      for (std::int64_t k = r.read_block_count(); k != 0; k = r.read_block_count())
        for (std::int64_t i = 0; i < k; ++i) read_value(r, n.children[0], elems);
      finish_nested_value(col);
      return;
    }
    case TypeKind::kMap: {
      for (std::int64_t k = r.read_block_count(); k != 0; k = r.read_block_count())
        for (std::int64_t i = 0; i < k; ++i) {
          col.child(0).append_string(r.read_bytes());
          read_value(r, n.children[1], col.child(1));
        }
      finish_nested_value(col);
      return;
    }
    case TypeKind::kRow: {
      auto& children = col.children();
      for (std::size_t i = 0; i < n.children.size(); ++i) {
        try {
          read_value(r, n.children[i], children[i]);
        } catch (AvroError& e) {
          e.path = n.names[i] + (e.path.empty() ? "" : "." + e.path);
          throw;
        }
      }
      finish_nested_value(col);
      return;
    }
    default: throw AvroError{{}, "unsupported type"};
  }
}

class AvroDecoder final : public RecordDecoder {
 public:
  AvroDecoder(const SchemaPtr& fields, AvroOptions o) : plan_(plan_of(*fields, o.legacy_timestamps)) {}

  int decode(std::string_view message, std::span<Column* const> columns, std::vector<RowKind>& kinds,
             std::string& reason) override {
    start_sizes_.resize(columns.size());
    for (std::size_t i = 0; i < columns.size(); ++i) start_sizes_[i] = columns[i]->size();
    const auto* p = reinterpret_cast<const unsigned char*>(message.data());
    Reader r(p, p + message.size());
    try {
      read_record_fields(r, plan_, columns.data());
    } catch (const AvroError& e) {
      reason = "field \"" + e.path + "\": " + e.what;
      for (std::size_t i = 0; i < columns.size(); ++i) truncate_column(*columns[i], start_sizes_[i]);
      return -1;
    }
    kinds.push_back(RowKind::kInsert);
    return 1;
  }

 private:
  AvroNode plan_;
  std::vector<std::size_t> start_sizes_;
};

// ---- encoding -------------------------------------------------------------------------

void write_long(std::int64_t v, std::string& out) {
  std::uint64_t z = (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
  while (z >= 0x80) {
    out += static_cast<char>((z & 0x7f) | 0x80);
    z >>= 7;
  }
  out += static_cast<char>(z);
}

void write_bytes(std::string_view s, std::string& out) {
  write_long(static_cast<std::int64_t>(s.size()), out);
  out.append(s);
}

template <class T>
void write_fixed(T v, std::string& out) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof v);
  if constexpr (std::endian::native != std::endian::little) {
    for (std::size_t i = 0; i < sizeof(T) / 2; ++i) std::swap(b[i], b[sizeof(T) - 1 - i]);
  }
  out.append(b, sizeof b);
}

// BigInteger.toByteArray: the fewest big-endian two's complement bytes.
void write_decimal(Int128 v, std::string& out) {
  char b[16];
  auto u = static_cast<UInt128>(v);
  for (int i = 15; i >= 0; --i) {
    b[i] = static_cast<char>(static_cast<unsigned char>(u & 0xff));
    u >>= 8;
  }
  int start = 0;
  while (start < 15) {
    const auto hi = static_cast<unsigned char>(b[start]), next = static_cast<unsigned char>(b[start + 1]);
    if ((hi == 0x00 && next < 0x80) || (hi == 0xff && next >= 0x80)) ++start;
    else break;
  }
  write_bytes(std::string_view(b + start, static_cast<std::size_t>(16 - start)), out);
}

// Java's floorDiv, as Instant.toEpochMilli of a timestamp in microseconds.
std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

// A value the format cannot write; AvroError::path is completed on the way out (no
// per-row path strings on the hot path).
void write_value(const AvroNode& n, const Column& col, std::size_t row, std::string& out) {
  if (col.is_null(row)) {
    if (!n.nullable) throw AvroError{{}, "NULL in a NOT NULL field"};
    write_long(0, out);
    return;
  }
  if (n.nullable) write_long(1, out);
  switch (n.kind) {
    case TypeKind::kBoolean: out += static_cast<char>(col.values<std::uint8_t>()[row] != 0 ? 1 : 0); return;
    case TypeKind::kTinyInt: write_long(col.values<std::int8_t>()[row], out); return;
    case TypeKind::kSmallInt: write_long(col.values<std::int16_t>()[row], out); return;
    case TypeKind::kInt:
    case TypeKind::kDate:
    case TypeKind::kTime: write_long(col.values<std::int32_t>()[row], out); return;
    case TypeKind::kBigInt: write_long(col.values<std::int64_t>()[row], out); return;
    case TypeKind::kFloat: write_fixed(col.values<float>()[row], out); return;
    case TypeKind::kDouble: write_fixed(col.values<double>()[row], out); return;
    case TypeKind::kTimestamp:
    case TypeKind::kTimestampLtz: {
      std::int64_t us = col.values<std::int64_t>()[row];
      write_long(n.micros ? us : floor_div(us, 1000), out);
      return;
    }
    case TypeKind::kChar:
    case TypeKind::kVarChar:
    case TypeKind::kBinary:
    case TypeKind::kVarBinary: write_bytes(col.string_at(row), out); return;
    case TypeKind::kDecimal: write_decimal(col.values<Int128>()[row], out); return;
    case TypeKind::kArray: {
      auto [b, e] = col.list_range(row);
      if (e > b) {
        write_long(static_cast<std::int64_t>(e - b), out);
        for (auto i = b; i < e; ++i) write_value(n.children[0], col.child(0), i, out);
      }
      write_long(0, out);
      return;
    }
    case TypeKind::kMap: {
      auto [b, e] = col.list_range(row);
      if (e > b) {
        write_long(static_cast<std::int64_t>(e - b), out);
        for (auto i = b; i < e; ++i) {
          if (col.child(0).is_null(i)) throw AvroError{{}, "NULL map key"};
          write_bytes(col.child(0).string_at(i), out);
          write_value(n.children[1], col.child(1), i, out);
        }
      }
      write_long(0, out);
      return;
    }
    case TypeKind::kRow:
      for (std::size_t i = 0; i < n.children.size(); ++i) {
        try {
          write_value(n.children[i], col.child(i), row, out);
        } catch (AvroError& e) {
          e.path = n.names[i] + (e.path.empty() ? "" : "." + e.path);
          throw;
        }
      }
      return;
    default: throw AvroError{{}, "unsupported type"};
  }
}

class AvroEncoder final : public RecordEncoder {
 public:
  AvroEncoder(const SchemaPtr& fields, AvroOptions o) : plan_(plan_of(*fields, o.legacy_timestamps)) {}

  bool encode(std::span<const Column* const> columns, std::size_t row, RowKind kind, std::string& out) override {
    if (!is_accumulate(kind))
      throw ClinkError("avro format is insert-only: it cannot write a " + std::string(row_kind_short_string(kind)) + " row");
    const std::size_t start = out.size();
    std::size_t i = 0;
    try {
      for (; i < plan_.children.size(); ++i) write_value(plan_.children[i], *columns[i], row, out);
    } catch (const AvroError& e) {
      out.resize(start);
      throw ClinkError("avro format cannot write field \"" + plan_.names[i] + (e.path.empty() ? "" : "." + e.path) +
                       "\": " + e.what);
    }
    return true;
  }

 private:
  AvroNode plan_;
};

}  // namespace

const std::vector<std::string>& avro_keys() {
  static const std::vector<std::string> k = {"avro.encoding", "avro.timestamp_mapping.legacy", "avro.fast-read"};
  return k;
}

std::unique_ptr<RecordDecoder> make_avro_decoder(SchemaPtr fields, const FormatOptions& options) {
  return std::make_unique<AvroDecoder>(fields, avro_options(options));
}

std::unique_ptr<RecordEncoder> make_avro_encoder(SchemaPtr fields, const FormatOptions& options) {
  return std::make_unique<AvroEncoder>(fields, avro_options(options));
}

}  // namespace clink::sql::record_format_detail
