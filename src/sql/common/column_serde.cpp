#include "clink/sql/common/column_serde.hpp"

#include <bit>
#include <cstring>

#include <fmt/format.h>

#include "clink/core/error.hpp"

namespace clink::sql {

static_assert(std::endian::native == std::endian::little, "the batch encoding is little-endian");

namespace {

template <class T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

void write_column(const Column& c, std::string& out) {
  std::size_t rows = c.size();
  out += static_cast<char>(c.type().kind());
  out.append(reinterpret_cast<const char*>(c.validity()), (rows + 7) / 8);
  switch (c.layout()) {
    case PhysicalLayout::kFixed:
      out.append(reinterpret_cast<const char*>(c.values_buffer().data()), rows * static_cast<std::size_t>(fixed_width(c.type().kind())));
      break;
    case PhysicalLayout::kVarLen: {
      const auto* o = c.offsets();
      for (std::size_t i = 0; i <= rows; ++i) put<std::uint32_t>(out, o[i] - o[0]);
      out.append(reinterpret_cast<const char*>(c.arena().data()) + o[0], o[rows] - o[0]);
      break;
    }
    case PhysicalLayout::kList:
    case PhysicalLayout::kMap: {
      const auto* o = c.offsets();
      for (std::size_t i = 0; i <= rows; ++i) put<std::uint32_t>(out, o[i] - o[0]);
      if (o[0] != 0) {  // a child range that does not start at 0: write the used part only
        for (std::size_t k = 0; k < c.num_children(); ++k) {
          Column part(c.child(k).type());
          part.append_range(c.child(k), o[0], o[rows]);
          write_column(part, out);
        }
      } else {
        for (std::size_t k = 0; k < c.num_children(); ++k) {
          if (c.child(k).size() == o[rows]) {
            write_column(c.child(k), out);
          } else {
            Column part(c.child(k).type());
            part.append_range(c.child(k), 0, o[rows]);
            write_column(part, out);
          }
        }
      }
      break;
    }
    case PhysicalLayout::kStruct:
      for (std::size_t k = 0; k < c.num_children(); ++k) write_column(c.child(k), out);
      break;
    case PhysicalLayout::kNull: break;
  }
}

struct Reader {
  std::string_view in;
  std::size_t pos = 0;
  const char* take(std::size_t n) {
    if (in.size() - pos < n) throw ClinkError(fmt::format("truncated batch encoding: {} bytes needed at byte {}", n, pos));
    const char* p = in.data() + pos;
    pos += n;
    return p;
  }
  template <class T>
  T get() {
    T v;
    std::memcpy(&v, take(sizeof v), sizeof v);
    return v;
  }
};

void read_column(Column& c, std::size_t rows, Reader& r) {
  auto kind = static_cast<TypeKind>(r.get<std::uint8_t>());
  if (kind != c.type().kind())
    throw ClinkError(fmt::format("batch encoding has a column of kind {} where the schema has {} (byte {})",
                                 static_cast<int>(kind), c.type().to_string(), r.pos - 1));
  c.clear();
  c.grow_validity(rows);
  const char* validity = r.take((rows + 7) / 8);
  if (rows != 0) std::memcpy(c.validity(), validity, (rows + 7) / 8);
  switch (c.layout()) {
    case PhysicalLayout::kFixed: {
      std::size_t bytes = rows * static_cast<std::size_t>(fixed_width(kind));
      c.values_buffer().resize(bytes);
      if (bytes != 0) std::memcpy(c.values_buffer().data(), r.take(bytes), bytes);
      break;
    }
    case PhysicalLayout::kVarLen: {
      c.values_buffer().resize((rows + 1) * 4);
      std::memcpy(c.values_buffer().data(), r.take((rows + 1) * 4), (rows + 1) * 4);
      std::uint32_t bytes = c.offsets()[rows];
      c.arena().resize(bytes);
      if (bytes != 0) std::memcpy(c.arena().data(), r.take(bytes), bytes);
      break;
    }
    case PhysicalLayout::kList:
    case PhysicalLayout::kMap: {
      c.values_buffer().resize((rows + 1) * 4);
      std::memcpy(c.values_buffer().data(), r.take((rows + 1) * 4), (rows + 1) * 4);
      for (std::size_t k = 0; k < c.num_children(); ++k) read_column(c.child(k), c.offsets()[rows], r);
      break;
    }
    case PhysicalLayout::kStruct:
      for (std::size_t k = 0; k < c.num_children(); ++k) read_column(c.child(k), rows, r);
      break;
    case PhysicalLayout::kNull: break;
  }
  c.set_size(rows);
}

}  // namespace

void serialize_batch(const ColumnBatch& b, std::string& out) {
  out += "CLB1";
  put<std::uint32_t>(out, static_cast<std::uint32_t>(b.num_columns()));
  put<std::uint32_t>(out, static_cast<std::uint32_t>(b.size()));
  out.append(reinterpret_cast<const char*>(b.row_kinds().data()), b.size());
  bool has_times = false;
  for (auto t : b.event_times()) has_times |= t != kNoEventTime;
  out += has_times ? '\1' : '\0';
  if (has_times) out.append(reinterpret_cast<const char*>(b.event_times().data()), b.size() * 8);
  for (std::size_t c = 0; c < b.num_columns(); ++c) write_column(b.column(c), out);
}

std::string serialize_batch(const ColumnBatch& b) {
  std::string s;
  serialize_batch(b, s);
  return s;
}

ColumnBatch deserialize_batch(SchemaPtr schema, std::string_view bytes) {
  Reader r{bytes};
  if (std::string_view(r.take(4), 4) != "CLB1") throw ClinkError("not a batch encoding (no CLB1 header)");
  auto cols = r.get<std::uint32_t>();
  auto rows = r.get<std::uint32_t>();
  if (cols != schema->size())
    throw ClinkError(fmt::format("batch encoding has {} columns, the schema {} has {}", cols, schema->to_string(), schema->size()));
  ColumnBatch b(std::move(schema));
  b.row_kinds().resize(rows);
  const char* kinds = r.take(rows);
  if (rows != 0) std::memcpy(b.row_kinds().data(), kinds, rows);
  for (auto k : b.row_kinds())
    if (static_cast<std::uint8_t>(k) > 3) throw ClinkError(fmt::format("batch encoding has an invalid row kind {}", static_cast<int>(k)));
  b.event_times().assign(rows, kNoEventTime);
  if (r.get<std::uint8_t>() != 0) {
    const char* times = r.take(std::size_t(rows) * 8);
    if (rows != 0) std::memcpy(b.event_times().data(), times, std::size_t(rows) * 8);
  }
  for (std::size_t c = 0; c < cols; ++c) read_column(b.column(c), rows, r);
  if (r.pos != bytes.size()) throw ClinkError(fmt::format("batch encoding has {} trailing bytes", bytes.size() - r.pos));
  return b;
}

}  // namespace clink::sql
