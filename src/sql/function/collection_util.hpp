// Helpers for kernels that build or inspect ARRAY / MAP columns: ending a list row,
// comparing two cells of one element type. Private to src/sql.
#pragma once
#include <cstdint>
#include <cstring>

#include "clink/sql/common/column.hpp"
#include "clink/sql/common/decimal.hpp"

namespace clink::sql::collections {

// Ends row `out.size()` of an ARRAY / MAP column whose elements were appended to
// child(0) (and child(1)) since the previous row.
inline void commit_list(Column& out) {
  std::size_t row = out.size();
  out.grow_validity(row + 1);
  auto end = static_cast<std::uint32_t>(out.child(0).size());
  out.values_buffer().append(&end, sizeof end);
  out.set_valid(row, true);
  out.set_size(row + 1);
}

// Whether cell_compare orders values of type t (Flink's comparable, non-nested types).
inline bool is_orderable(const LogicalType& t) {
  switch (t.kind()) {
    case TypeKind::kNull:
    case TypeKind::kArray:
    case TypeKind::kMap:
    case TypeKind::kRow: return false;
    default: return true;
  }
}

// -1, 0, 1 comparing a[i] with b[j] (same orderable type, both non-NULL). Strings and
// bytes compare as unsigned bytes (BinaryStringData.compareTo); FLOAT/DOUBLE numerically.
inline int cell_compare(const Column& a, std::size_t i, const Column& b, std::size_t j) {
  auto cmp = [](auto x, auto y) { return x < y ? -1 : (y < x ? 1 : 0); };
  switch (a.type().kind()) {
    case TypeKind::kBoolean: return cmp(a.values<std::uint8_t>()[i], b.values<std::uint8_t>()[j]);
    case TypeKind::kTinyInt: return cmp(a.values<std::int8_t>()[i], b.values<std::int8_t>()[j]);
    case TypeKind::kSmallInt: return cmp(a.values<std::int16_t>()[i], b.values<std::int16_t>()[j]);
    case TypeKind::kInt:
    case TypeKind::kDate:
    case TypeKind::kTime:
    case TypeKind::kIntervalYearMonth: return cmp(a.values<std::int32_t>()[i], b.values<std::int32_t>()[j]);
    case TypeKind::kBigInt:
    case TypeKind::kTimestamp:
    case TypeKind::kTimestampLtz:
    case TypeKind::kIntervalDayTime: return cmp(a.values<std::int64_t>()[i], b.values<std::int64_t>()[j]);
    case TypeKind::kFloat: return cmp(a.values<float>()[i], b.values<float>()[j]);
    case TypeKind::kDouble: return cmp(a.values<double>()[i], b.values<double>()[j]);
    case TypeKind::kDecimal: return cmp(a.values<Int128>()[i], b.values<Int128>()[j]);
    default: {
      int r = a.string_at(i).compare(b.string_at(j));
      return r < 0 ? -1 : (r > 0 ? 1 : 0);
    }
  }
}

// Whether a[i] equals b[j] (same type, both non-NULL); nested values compare as Values.
inline bool cell_equal(const Column& a, std::size_t i, const Column& b, std::size_t j) {
  switch (a.layout()) {
    case PhysicalLayout::kFixed: {
      auto w = static_cast<std::size_t>(fixed_width(a.type().kind()));
      if (a.type().is(TypeKind::kFloat)) return a.values<float>()[i] == b.values<float>()[j];
      if (a.type().is(TypeKind::kDouble)) return a.values<double>()[i] == b.values<double>()[j];
      return std::memcmp(a.values_buffer().data() + i * w, b.values_buffer().data() + j * w, w) == 0;
    }
    case PhysicalLayout::kVarLen: return a.string_at(i) == b.string_at(j);
    default: return a.value_at(i) == b.value_at(j);
  }
}

// Equality where NULL equals NULL (Objects.equals on the elements, as Flink's collection
// functions compare).
inline bool cell_equal_nulls(const Column& a, std::size_t i, const Column& b, std::size_t j) {
  bool av = a.is_valid(i), bv = b.is_valid(j);
  if (!av || !bv) return av == bv;
  return cell_equal(a, i, b, j);
}

}  // namespace clink::sql::collections
