// Flink's `raw` format: the whole message is the value of the one field (RawFormatFactory,
// RawFormatDeserializationSchema, RawFormatSerializationSchema).
//
// Strings and bytes are the message's bytes (raw.charset: only UTF-8, the default, is
// supported; the bytes are taken as they are, not validated); BOOLEAN, TINYINT..BIGINT,
// FLOAT and DOUBLE are their fixed-width bytes in raw.endianness (big-endian by default),
// and a message of another length fails with Flink's "Size of data received for
// deserializing INT type is not 4.". An empty message is an empty string / bytes. A null
// message (Kafka's null value) is a NULL row (decode_null), and a NULL value is written as
// a null message (is_null_message). Raw has no ignore-parse-errors (as Flink).
#include <bit>
#include <cstring>

#include "clink/core/error.hpp"
#include "record_format_impl.hpp"

namespace clink::sql::record_format_detail {

namespace {

struct RawOptions {
  bool little_endian = false;
};

RawOptions raw_options(const FormatOptions& options) {
  check_keys("raw", options, raw_keys());
  RawOptions o;
  if (auto it = options.find("raw.charset"); it != options.end()) {
    std::string v;
    for (char c : it->second) v += static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
    if (v != "UTF-8" && v != "UTF8")
      throw ClinkError("option 'raw.charset': only UTF-8 is supported, got '" + it->second + "'");
  }
  if (auto it = options.find("raw.endianness"); it != options.end()) {
    if (it->second == "big-endian") o.little_endian = false;
    else if (it->second == "little-endian") o.little_endian = true;
    else
      throw ClinkError("Unsupported endianness name: " + it->second +
                       ". Valid values of 'raw.endianness' option are 'big-endian' and 'little-endian'.");
  }
  return o;
}

// Bytes of a fixed-width type; 0 for strings and bytes.
int raw_width(const LogicalType& t) {
  switch (t.kind()) {
    case TypeKind::kBoolean:
    case TypeKind::kTinyInt: return 1;
    case TypeKind::kSmallInt: return 2;
    case TypeKind::kInt:
    case TypeKind::kFloat: return 4;
    case TypeKind::kBigInt:
    case TypeKind::kDouble: return 8;
    default: return 0;
  }
}

// Flink's type names in the length error.
const char* raw_type_name(TypeKind k) {
  switch (k) {
    case TypeKind::kBoolean: return "BOOLEAN";
    case TypeKind::kTinyInt: return "TINYINT";
    case TypeKind::kSmallInt: return "SMALLINT";
    case TypeKind::kInt: return "INT";
    case TypeKind::kBigInt: return "BIGINT";
    case TypeKind::kFloat: return "FLOAT";
    case TypeKind::kDouble: return "DOUBLE";
    default: return "?";
  }
}

const LogicalType& raw_field_type(const SchemaPtr& fields) {
  if (fields->size() != 1)
    throw ClinkError("The 'raw' format only supports single physical column. However current schema contains " +
                     std::to_string(fields->size()) + " columns.");
  const LogicalType& t = fields->type(0);
  if (!t.is_string_like() && raw_width(t) == 0)
    throw ClinkError("The 'raw' format doesn't supports '" + t.to_string() + "' as column type.");
  return t;
}

// Copies n bytes reversed when the wanted order is not the machine's.
void copy_ordered(void* dst, const void* src, int n, bool little_endian) {
  const bool swap = little_endian != (std::endian::native == std::endian::little);
  if (!swap) {
    std::memcpy(dst, src, static_cast<std::size_t>(n));
    return;
  }
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  for (int i = 0; i < n; ++i) d[i] = s[n - 1 - i];
}

class RawDecoder final : public RecordDecoder {
 public:
  RawDecoder(LogicalType type, RawOptions options) : type_(std::move(type)), options_(options), width_(raw_width(type_)) {}

  int decode(std::string_view message, std::span<Column* const> columns, std::vector<RowKind>& kinds,
             std::string& reason) override {
    Column& col = *columns[0];
    if (width_ == 0) {
      col.append_string(message);
    } else {
      if (message.size() != static_cast<std::size_t>(width_)) {
        reason = std::string("Size of data received for deserializing ") + raw_type_name(type_.kind()) +
                 " type is not " + std::to_string(width_) + ".";
        return -1;
      }
      unsigned char b[8];
      copy_ordered(b, message.data(), width_, options_.little_endian);
      switch (type_.kind()) {
        case TypeKind::kBoolean: col.append<std::uint8_t>(b[0] != 0 ? 1 : 0); break;
        case TypeKind::kTinyInt: col.append<std::int8_t>(static_cast<std::int8_t>(b[0])); break;
        case TypeKind::kSmallInt: append_as<std::int16_t>(col, b); break;
        case TypeKind::kInt: append_as<std::int32_t>(col, b); break;
        case TypeKind::kBigInt: append_as<std::int64_t>(col, b); break;
        case TypeKind::kFloat: append_as<float>(col, b); break;
        case TypeKind::kDouble: append_as<double>(col, b); break;
        default: break;
      }
    }
    kinds.push_back(RowKind::kInsert);
    return 1;
  }

  int decode_null(std::span<Column* const> columns, std::vector<RowKind>& kinds) override {
    columns[0]->append_null();
    kinds.push_back(RowKind::kInsert);
    return 1;
  }

 private:
  template <class T>
  static void append_as(Column& col, const unsigned char* b) {
    T v;
    std::memcpy(&v, b, sizeof v);
    col.append<T>(v);
  }
  LogicalType type_;
  RawOptions options_;
  int width_;
};

class RawEncoder final : public RecordEncoder {
 public:
  RawEncoder(LogicalType type, RawOptions options) : type_(std::move(type)), options_(options), width_(raw_width(type_)) {}

  bool encode(std::span<const Column* const> columns, std::size_t row, RowKind kind, std::string& out) override {
    if (!is_accumulate(kind))
      throw ClinkError("raw format is insert-only: it cannot write a " + std::string(row_kind_short_string(kind)) + " row");
    const Column& col = *columns[0];
    if (col.is_null(row)) return true;  // a null message
    if (width_ == 0) {
      out.append(col.string_at(row));
      return true;
    }
    const unsigned char* src = col.values_buffer().data() + row * static_cast<std::size_t>(fixed_width(type_.kind()));
    char b[8];
    if (type_.kind() == TypeKind::kBoolean) b[0] = src[0] != 0 ? 1 : 0;
    else copy_ordered(b, src, width_, options_.little_endian);
    out.append(b, static_cast<std::size_t>(width_));
    return true;
  }

  bool is_null_message(std::span<const Column* const> columns, std::size_t row) const override {
    return columns[0]->is_null(row);
  }

 private:
  LogicalType type_;
  RawOptions options_;
  int width_;
};

}  // namespace

const std::vector<std::string>& raw_keys() {
  static const std::vector<std::string> k = {"raw.charset", "raw.endianness"};
  return k;
}

std::unique_ptr<RecordDecoder> make_raw_decoder(SchemaPtr fields, const FormatOptions& options) {
  auto o = raw_options(options);
  return std::make_unique<RawDecoder>(raw_field_type(fields), o);
}

std::unique_ptr<RecordEncoder> make_raw_encoder(SchemaPtr fields, const FormatOptions& options) {
  auto o = raw_options(options);
  return std::make_unique<RawEncoder>(raw_field_type(fields), o);
}

}  // namespace clink::sql::record_format_detail
