#include "clink/sql/common/column.hpp"

#include <bit>

#include <fmt/format.h>

namespace clink::sql {

PhysicalLayout physical_layout(TypeKind k) {
  switch (k) {
    case TypeKind::kNull: return PhysicalLayout::kNull;
    case TypeKind::kChar:
    case TypeKind::kVarChar:
    case TypeKind::kBinary:
    case TypeKind::kVarBinary: return PhysicalLayout::kVarLen;
    case TypeKind::kArray: return PhysicalLayout::kList;
    case TypeKind::kMap: return PhysicalLayout::kMap;
    case TypeKind::kRow: return PhysicalLayout::kStruct;
    default: return PhysicalLayout::kFixed;
  }
}

int fixed_width(TypeKind k) {
  switch (k) {
    case TypeKind::kBoolean:
    case TypeKind::kTinyInt: return 1;
    case TypeKind::kSmallInt: return 2;
    case TypeKind::kInt:
    case TypeKind::kFloat:
    case TypeKind::kDate:
    case TypeKind::kTime:
    case TypeKind::kIntervalYearMonth: return 4;
    case TypeKind::kBigInt:
    case TypeKind::kDouble:
    case TypeKind::kTimestamp:
    case TypeKind::kTimestampLtz:
    case TypeKind::kIntervalDayTime: return 8;
    case TypeKind::kDecimal: return 16;
    default: return 0;
  }
}

Column::Column(LogicalType type) : type_(std::move(type)), layout_(physical_layout(type_.kind())) {
  switch (layout_) {
    case PhysicalLayout::kList: children_.emplace_back(type_.element_type()); break;
    case PhysicalLayout::kMap:
      children_.emplace_back(type_.key_type());
      children_.emplace_back(type_.value_type());
      break;
    case PhysicalLayout::kStruct:
      for (const auto& f : type_.fields()) children_.emplace_back(f.type);
      break;
    default: break;
  }
  // What clear() leaves, without clearing the (new, empty) children again: that made
  // building a column of a type nested n deep quadratic in n, and folding ARRAY[ARRAY[...]]
  // cubic.
  if (layout_ == PhysicalLayout::kVarLen || layout_ == PhysicalLayout::kList || layout_ == PhysicalLayout::kMap) {
    std::uint32_t zero = 0;
    values_.append(&zero, sizeof zero);
  }
}

void Column::clear() {
  size_ = 0;
  validity_.clear();
  values_.clear();
  arena_.clear();
  if (layout_ == PhysicalLayout::kVarLen || layout_ == PhysicalLayout::kList || layout_ == PhysicalLayout::kMap) {
    std::uint32_t zero = 0;
    values_.append(&zero, sizeof zero);
  }
  for (auto& c : children_) c.clear();
}

void Column::reserve(std::size_t rows) {
  validity_.reserve((rows + 63) / 64 * 8);
  switch (layout_) {
    case PhysicalLayout::kFixed: values_.reserve(rows * static_cast<std::size_t>(fixed_width(type_.kind()))); break;
    case PhysicalLayout::kVarLen:
    case PhysicalLayout::kList:
    case PhysicalLayout::kMap: values_.reserve((rows + 1) * 4); break;
    case PhysicalLayout::kStruct:
      for (auto& c : children_) c.reserve(rows);
      break;
    case PhysicalLayout::kNull: break;
  }
}

void Column::resize_fixed(std::size_t rows) {
  grow_validity(rows);
  values_.resize(rows * static_cast<std::size_t>(fixed_width(type_.kind())));
  size_ = rows;
}

void Column::set_all_valid() {
  std::size_t words = validity_words();
  auto* w = validity();
  for (std::size_t i = 0; i < words; ++i) w[i] = ~std::uint64_t(0);
  if (size_ % 64 != 0 && words > 0) w[words - 1] = (std::uint64_t(1) << (size_ % 64)) - 1;
}

std::size_t Column::null_count() const {
  std::size_t valid = 0;
  const auto* w = validity();
  std::size_t full = size_ / 64;
  for (std::size_t i = 0; i < full; ++i) valid += static_cast<std::size_t>(std::popcount(w[i]));
  if (size_ % 64 != 0) valid += static_cast<std::size_t>(std::popcount(w[full] & ((std::uint64_t(1) << (size_ % 64)) - 1)));
  return size_ - valid;
}

void Column::append_null() {
  grow_validity(size_ + 1);
  set_valid(size_, false);
  switch (layout_) {
    case PhysicalLayout::kFixed: {
      static const unsigned char kZeros[16] = {};
      values_.append(kZeros, static_cast<std::size_t>(fixed_width(type_.kind())));
      break;
    }
    case PhysicalLayout::kVarLen:
    case PhysicalLayout::kList:
    case PhysicalLayout::kMap: {
      std::uint32_t end = offsets()[size_];
      values_.append(&end, sizeof end);
      break;
    }
    case PhysicalLayout::kStruct:
      for (auto& c : children_) c.append_null();
      break;
    case PhysicalLayout::kNull: break;
  }
  ++size_;
}

void Column::append_string(std::string_view s) {
  grow_validity(size_ + 1);
  arena_.append(s.data(), s.size());
  auto end = static_cast<std::uint32_t>(arena_.size());
  values_.append(&end, sizeof end);
  set_valid(size_, true);
  ++size_;
}

void Column::append_value(const Value& v) {
  if (v.is_null()) {
    append_null();
    return;
  }
  switch (type_.kind()) {
    case TypeKind::kNull: append_null(); return;
    case TypeKind::kBoolean: append<std::uint8_t>(v.as_bool() ? 1 : 0); return;
    case TypeKind::kTinyInt: append<std::int8_t>(static_cast<std::int8_t>(v.as_int())); return;
    case TypeKind::kSmallInt: append<std::int16_t>(static_cast<std::int16_t>(v.as_int())); return;
    case TypeKind::kInt:
    case TypeKind::kDate:
    case TypeKind::kTime:
    case TypeKind::kIntervalYearMonth: append<std::int32_t>(static_cast<std::int32_t>(v.as_int())); return;
    case TypeKind::kBigInt:
    case TypeKind::kTimestamp:
    case TypeKind::kTimestampLtz:
    case TypeKind::kIntervalDayTime: append<std::int64_t>(v.as_int()); return;
    case TypeKind::kFloat: append<float>(static_cast<float>(v.as_double())); return;
    case TypeKind::kDouble: append<double>(v.as_double()); return;
    case TypeKind::kDecimal: append<Int128>(v.as_decimal()); return;
    case TypeKind::kChar:
    case TypeKind::kVarChar:
    case TypeKind::kBinary:
    case TypeKind::kVarBinary: append_string(v.as_string()); return;
    case TypeKind::kArray:
    case TypeKind::kMap: {
      const auto& items = v.as_list().items;
      if (layout_ == PhysicalLayout::kMap) {
        if (items.size() % 2 != 0) throw SqlTypeError("a MAP value needs key, value pairs");
        for (std::size_t i = 0; i < items.size(); i += 2) {
          children_[0].append_value(items[i]);
          children_[1].append_value(items[i + 1]);
        }
      } else {
        for (const auto& item : items) children_[0].append_value(item);
      }
      grow_validity(size_ + 1);
      auto end = static_cast<std::uint32_t>(children_[0].size());
      values_.append(&end, sizeof end);
      set_valid(size_, true);
      ++size_;
      return;
    }
    case TypeKind::kRow: {
      const auto& items = v.as_list().items;
      if (items.size() != children_.size())
        throw SqlTypeError(fmt::format("a ROW value of {} fields for type {}", items.size(), type_.to_string()));
      for (std::size_t i = 0; i < items.size(); ++i) children_[i].append_value(items[i]);
      grow_validity(size_ + 1);
      set_valid(size_, true);
      ++size_;
      return;
    }
  }
}

Value Column::value_at(std::size_t i) const {
  if (is_null(i)) return Value::null();
  switch (type_.kind()) {
    case TypeKind::kNull: return Value::null();
    case TypeKind::kBoolean: return Value(values<std::uint8_t>()[i] != 0);
    case TypeKind::kTinyInt: return Value(static_cast<std::int64_t>(values<std::int8_t>()[i]));
    case TypeKind::kSmallInt: return Value(static_cast<std::int64_t>(values<std::int16_t>()[i]));
    case TypeKind::kInt:
    case TypeKind::kDate:
    case TypeKind::kTime:
    case TypeKind::kIntervalYearMonth: return Value(static_cast<std::int64_t>(values<std::int32_t>()[i]));
    case TypeKind::kBigInt:
    case TypeKind::kTimestamp:
    case TypeKind::kTimestampLtz:
    case TypeKind::kIntervalDayTime: return Value(values<std::int64_t>()[i]);
    case TypeKind::kFloat: return Value(static_cast<double>(values<float>()[i]));
    case TypeKind::kDouble: return Value(values<double>()[i]);
    case TypeKind::kDecimal: return Value::decimal(values<Int128>()[i]);
    case TypeKind::kChar:
    case TypeKind::kVarChar:
    case TypeKind::kBinary:
    case TypeKind::kVarBinary: return Value(std::string(string_at(i)));
    case TypeKind::kArray:
    case TypeKind::kMap: {
      ValueList l;
      auto [b, e] = list_range(i);
      for (auto k = b; k < e; ++k) {
        l.items.push_back(children_[0].value_at(k));
        if (layout_ == PhysicalLayout::kMap) l.items.push_back(children_[1].value_at(k));
      }
      return Value(std::move(l));
    }
    case TypeKind::kRow: {
      ValueList l;
      for (const auto& c : children_) l.items.push_back(c.value_at(i));
      return Value(std::move(l));
    }
  }
  return Value::null();
}

namespace {

void gather_validity(Column& dst, const Column& src, std::size_t base, const std::uint32_t* idx, std::size_t n) {
  dst.grow_validity(base + n);
  const auto* sv = src.validity();
  auto* dv = dst.validity();
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t i = idx[k], o = base + k;
    std::uint64_t bit = (sv[i >> 6] >> (i & 63)) & 1;
    dv[o >> 6] = (dv[o >> 6] & ~(std::uint64_t(1) << (o & 63))) | (bit << (o & 63));
  }
}

template <class T>
void gather_fixed(Buffer& dst, const Buffer& src, std::size_t base, const std::uint32_t* idx, std::size_t n) {
  dst.resize((base + n) * sizeof(T));
  T* d = dst.as<T>() + base;
  const T* s = src.as<T>();
  for (std::size_t k = 0; k < n; ++k) d[k] = s[idx[k]];
}

}  // namespace

void Column::append_gather(const Column& src, const std::uint32_t* idx, std::size_t n) {
  std::size_t base = size_;
  gather_validity(*this, src, base, idx, n);
  switch (layout_) {
    case PhysicalLayout::kFixed:
      switch (fixed_width(type_.kind())) {
        case 1: gather_fixed<std::uint8_t>(values_, src.values_, base, idx, n); break;
        case 2: gather_fixed<std::uint16_t>(values_, src.values_, base, idx, n); break;
        case 4: gather_fixed<std::uint32_t>(values_, src.values_, base, idx, n); break;
        case 8: gather_fixed<std::uint64_t>(values_, src.values_, base, idx, n); break;
        case 16: gather_fixed<Int128>(values_, src.values_, base, idx, n); break;
      }
      break;
    case PhysicalLayout::kVarLen: {
      const auto* so = src.offsets();
      std::size_t bytes = 0;
      for (std::size_t k = 0; k < n; ++k) bytes += so[idx[k] + 1] - so[idx[k]];
      std::size_t arena_base = arena_.size();
      arena_.resize(arena_base + bytes);
      values_.resize((base + n + 1) * 4);
      auto* o = offsets();
      auto pos = static_cast<std::uint32_t>(arena_base);
      const unsigned char* sa = src.arena_.data();
      unsigned char* da = arena_.data();
      for (std::size_t k = 0; k < n; ++k) {
        std::uint32_t b = so[idx[k]], len = so[idx[k] + 1] - b;
        if (len != 0) std::memcpy(da + pos, sa + b, len);
        pos += len;
        o[base + k + 1] = pos;
      }
      break;
    }
    case PhysicalLayout::kList:
    case PhysicalLayout::kMap: {
      std::vector<std::uint32_t> child_idx;
      values_.resize((base + n + 1) * 4);
      const auto* so = src.offsets();
      for (std::size_t k = 0; k < n; ++k) {
        for (auto c = so[idx[k]]; c < so[idx[k] + 1]; ++c) child_idx.push_back(c);
        offsets()[base + k + 1] = offsets()[base] + static_cast<std::uint32_t>(child_idx.size());
      }
      for (std::size_t c = 0; c < children_.size(); ++c)
        children_[c].append_gather(src.children_[c], child_idx.data(), child_idx.size());
      break;
    }
    case PhysicalLayout::kStruct:
      for (std::size_t c = 0; c < children_.size(); ++c) children_[c].append_gather(src.children_[c], idx, n);
      break;
    case PhysicalLayout::kNull: break;
  }
  size_ = base + n;
}

// Rows [begin, begin + n) of src's validity to rows [base, base + n) of dst's: whole
// words when both start on a word (the usual case: a column appended whole), else bit by bit.
void copy_validity_range(Column& dst, const Column& src, std::size_t base, std::size_t begin, std::size_t n) {
  dst.grow_validity(base + n);
  const auto* sv = src.validity();
  auto* dv = dst.validity();
  if (base % 64 == 0 && begin % 64 == 0) {
    std::memcpy(dv + base / 64, sv + begin / 64, (n + 63) / 64 * 8);
    if (n % 64 != 0) dv[(base + n) / 64] &= (std::uint64_t(1) << (n % 64)) - 1;  // no bits past the end
    return;
  }
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t i = begin + k, o = base + k;
    std::uint64_t bit = (sv[i >> 6] >> (i & 63)) & 1;
    dv[o >> 6] = (dv[o >> 6] & ~(std::uint64_t(1) << (o & 63))) | (bit << (o & 63));
  }
}

void Column::append_range(const Column& src, std::size_t begin, std::size_t end) {
  // Fixed-width and string columns: contiguous copies (the FIELD kernel appends a ROW's
  // child whole per batch); nested ones through the gather.
  const std::size_t n = end - begin, base = size_;
  if (n != 0 && (layout_ == PhysicalLayout::kFixed || layout_ == PhysicalLayout::kVarLen)) {
    copy_validity_range(*this, src, base, begin, n);
    if (layout_ == PhysicalLayout::kFixed) {
      const auto w = static_cast<std::size_t>(fixed_width(type_.kind()));
      values_.resize((base + n) * w);
      std::memcpy(values_.data() + base * w, src.values_.data() + begin * w, n * w);
    } else {
      const auto* so = src.offsets();
      const std::uint32_t first = so[begin];
      const auto arena_base = static_cast<std::uint32_t>(arena_.size());
      arena_.append(src.arena_.data() + first, so[end] - first);
      values_.resize((base + n + 1) * 4);
      auto* o = offsets();
      for (std::size_t k = 1; k <= n; ++k) o[base + k] = so[begin + k] - first + arena_base;
    }
    size_ = base + n;
    return;
  }
  std::vector<std::uint32_t> idx(end - begin);
  for (std::size_t i = begin; i < end; ++i) idx[i - begin] = static_cast<std::uint32_t>(i);
  append_gather(src, idx.data(), idx.size());
}

Column Column::constant(const LogicalType& type, const Value& v, std::size_t rows) {
  Column c(type);
  c.reserve(rows);
  for (std::size_t i = 0; i < rows; ++i) c.append_value(v);
  return c;
}

void prepare_for_copy(Column& out, std::size_t rows) {
  out.clear();
  if (out.layout() == PhysicalLayout::kFixed || out.layout() == PhysicalLayout::kNull) {
    out.resize_fixed(rows);
  } else {
    out.reserve(rows);
  }
}

void copy_row(const Column* src, std::size_t row, Column& out, std::size_t i) {
  bool fixed = out.layout() == PhysicalLayout::kFixed || out.layout() == PhysicalLayout::kNull;
  if (src == nullptr || src->is_null(row)) {
    if (fixed) out.set_valid(i, false);
    else out.append_null();
    return;
  }
  if (fixed) {
    int w = fixed_width(out.type().kind());
    std::memcpy(out.values_buffer().data() + i * static_cast<std::size_t>(w),
                src->values_buffer().data() + row * static_cast<std::size_t>(w), static_cast<std::size_t>(w));
    out.set_valid(i, true);
  } else if (out.layout() == PhysicalLayout::kVarLen) {
    out.append_string(src->string_at(row));
  } else {
    auto r = static_cast<std::uint32_t>(row);
    out.append_gather(*src, &r, 1);
  }
}

}  // namespace clink::sql
