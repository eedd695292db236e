#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "clink/sql/common/types.hpp"
#include "clink/sql/common/value.hpp"

namespace clink::sql {

// A growable, malloc-backed byte buffer (16-byte aligned, enough for Int128). Unlike
// std::vector it does not zero-fill on resize: kernels overwrite whole ranges.
class Buffer {
 public:
  Buffer() = default;
  Buffer(const Buffer& o) { assign(o.data_, o.size_); }
  Buffer& operator=(const Buffer& o) {
    if (this != &o) assign(o.data_, o.size_);
    return *this;
  }
  Buffer(Buffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)), cap_(std::exchange(o.cap_, 0)) {}
  Buffer& operator=(Buffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(cap_, o.cap_);
    return *this;
  }
  ~Buffer() { std::free(data_); }

  unsigned char* data() { return data_; }
  const unsigned char* data() const { return data_; }
  std::size_t size() const { return size_; }
  void reserve(std::size_t n) {
    if (n <= cap_) return;
    std::size_t c = cap_ < 64 ? 64 : cap_;
    while (c < n) c *= 2;
    void* p = std::realloc(data_, c);
    if (p == nullptr) throw std::bad_alloc();
    data_ = static_cast<unsigned char*>(p);
    cap_ = c;
  }
  void resize(std::size_t n) {
    reserve(n);
    size_ = n;
  }
  void clear() { size_ = 0; }
  void append(const void* p, std::size_t n) {
    reserve(size_ + n);
    if (n != 0) std::memcpy(data_ + size_, p, n);
    size_ += n;
  }
  template <class T>
  T* as() {
    return reinterpret_cast<T*>(data_);
  }
  template <class T>
  const T* as() const {
    return reinterpret_cast<const T*>(data_);
  }

 private:
  void assign(const unsigned char* p, std::size_t n) {
    size_ = 0;
    append(p, n);
  }
  unsigned char* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t cap_ = 0;
};

// How a type is laid out in a column.
enum class PhysicalLayout : std::uint8_t { kFixed, kVarLen, kList, kMap, kStruct, kNull };
PhysicalLayout physical_layout(TypeKind k);
// Bytes per value for kFixed layouts (BOOLEAN is one byte per value).
int fixed_width(TypeKind k);

// One column of a batch: a validity bitmap (bit set = value present) plus
//   fixed-width types: one value per row (bool as uint8, ints, float, double, Int128 ...)
//   CHAR/VARCHAR/BINARY/VARBINARY: uint32 offsets (size + 1) into a byte arena
//   ARRAY: uint32 offsets into child(0); MAP: offsets into child(0) keys and child(1) values
//   ROW: one child per field, each as long as this column
// Values under a NULL are unspecified (kernels compute over them and mask them out);
// builders write zeros there so serialised bytes stay deterministic.
class Column {
 public:
  explicit Column(LogicalType type = LogicalType::null_type());

  const LogicalType& type() const { return type_; }
  PhysicalLayout layout() const { return layout_; }
  std::size_t size() const { return size_; }

  // --- validity
  bool is_valid(std::size_t i) const { return (validity_.as<std::uint64_t>()[i >> 6] >> (i & 63)) & 1; }
  bool is_null(std::size_t i) const { return !is_valid(i); }
  void set_valid(std::size_t i, bool valid) {
    auto* w = validity_.as<std::uint64_t>() + (i >> 6);
    if (valid) *w |= std::uint64_t(1) << (i & 63);
    else *w &= ~(std::uint64_t(1) << (i & 63));
  }
  std::uint64_t* validity() { return validity_.as<std::uint64_t>(); }
  const std::uint64_t* validity() const { return validity_.as<std::uint64_t>(); }
  std::size_t validity_words() const { return (size_ + 63) / 64; }
  std::size_t null_count() const;

  // --- fixed-width values
  template <class T>
  T* values() {
    return values_.as<T>();
  }
  template <class T>
  const T* values() const {
    return values_.as<T>();
  }

  // --- strings / bytes
  const std::uint32_t* offsets() const { return values_.as<std::uint32_t>(); }
  std::uint32_t* offsets() { return values_.as<std::uint32_t>(); }
  std::string_view string_at(std::size_t i) const {
    const auto* o = offsets();
    return {reinterpret_cast<const char*>(arena_.data()) + o[i], o[i + 1] - o[i]};
  }
  Buffer& arena() { return arena_; }
  const Buffer& arena() const { return arena_; }

  // --- nested
  std::size_t num_children() const { return children_.size(); }
  Column& child(std::size_t i) { return children_[i]; }
  const Column& child(std::size_t i) const { return children_[i]; }
  // ARRAY/MAP: the child range [begin, end) of row i.
  std::pair<std::uint32_t, std::uint32_t> list_range(std::size_t i) const { return {offsets()[i], offsets()[i + 1]}; }

  // --- building
  void clear();
  void reserve(std::size_t rows);
  // Sets the row count for a kernel that then writes every row (fixed-width values and
  // validity); validity content is unspecified until written.
  void resize_fixed(std::size_t rows);
  void set_all_valid();
  void append_null();
  template <class T>
  void append(T v) {
    grow_validity(size_ + 1);
    values_.append(&v, sizeof(T));
    set_valid(size_, true);
    ++size_;
  }
  void append_string(std::string_view s);
  // For kernels that write a string's bytes straight into arena(): ends the row there.
  void commit_string() {
    grow_validity(size_ + 1);
    auto end = static_cast<std::uint32_t>(arena_.size());
    values_.append(&end, sizeof end);
    set_valid(size_, true);
    ++size_;
  }
  // Appends a Value of this column's type (the slow, general path: tests, literals).
  void append_value(const Value& v);
  // The value at row i as a Value (the slow path: formatting, tests, UDF fallbacks).
  Value value_at(std::size_t i) const;

  // Appends rows src[idx[0..n)] (same type): the gather behind selection and partitioning.
  void append_gather(const Column& src, const std::uint32_t* idx, std::size_t n);
  // Appends rows [begin, end) of src.
  void append_range(const Column& src, std::size_t begin, std::size_t end);
  // A column of `rows` copies of a value (for constants that a kernel needs as a column).
  static Column constant(const LogicalType& type, const Value& v, std::size_t rows);

  // Low-level access for (de)serialisation and kernels that finish a column themselves.
  Buffer& values_buffer() { return values_; }
  const Buffer& values_buffer() const { return values_; }
  Buffer& validity_buffer() { return validity_; }
  const Buffer& validity_buffer() const { return validity_; }
  std::vector<Column>& children() { return children_; }
  void set_size(std::size_t n) { size_ = n; }
  void grow_validity(std::size_t rows) {
    std::size_t words = (rows + 63) / 64;
    std::size_t have = validity_.size() / 8;
    if (words > have) {
      validity_.resize(words * 8);
      std::memset(validity_.data() + have * 8, 0, (words - have) * 8);
    }
  }

 private:
  LogicalType type_;
  PhysicalLayout layout_;
  std::size_t size_ = 0;
  Buffer validity_;
  Buffer values_;  // fixed values or offsets
  Buffer arena_;
  std::vector<Column> children_;
};

// Writes row `row` of `src` (or NULL when src is null / the value is NULL) as row `i` of
// a fixed-width `out` already sized, or appends it to a variable-width / nested `out`.
void copy_row(const Column* src, std::size_t row, Column& out, std::size_t i);
// Prepares `out` for `rows` rows the way copy_row expects.
void prepare_for_copy(Column& out, std::size_t rows);

}  // namespace clink::sql
