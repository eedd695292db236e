#pragma once
// Flink's DeweyNumber: the version of a partial match. Each branch of the NFA gets a
// number that extends (new stage) or increments (sibling branch) its parent's, so the
// shared buffer can tell, for a node reached by several partial matches, which of its
// edges belongs to which match: an edge is followed only when the walking version is
// compatible with it (a prefix, or the same stage with a digit at least as large).
//
// Most versions are short (one stage per step taken), so up to kInline digits live in
// the object; longer ones (long loops) spill to the heap.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

namespace clink::cep {

class DeweyNumber {
 public:
  static constexpr int kInline = 4;

  DeweyNumber() = default;
  explicit DeweyNumber(std::int32_t start) { push(start); }
  DeweyNumber(const DeweyNumber& o) { copy_from(o); }
  DeweyNumber& operator=(const DeweyNumber& o) {
    if (this != &o) {
      len_ = 0;
      copy_from(o);
    }
    return *this;
  }
  DeweyNumber(DeweyNumber&& o) noexcept { take(o); }
  DeweyNumber& operator=(DeweyNumber&& o) noexcept {
    if (this != &o) take(o);
    return *this;
  }

  int length() const { return static_cast<int>(len_); }
  std::int32_t operator[](int i) const { return data()[i]; }

  // A copy with the last digit increased by `times` (a sibling branch).
  DeweyNumber increase(std::int32_t times = 1) const {
    DeweyNumber d(*this);
    d.mutable_data()[len_ - 1] += times;
    return d;
  }
  // A copy with a new stage (digit 0) appended (a step further down the same branch).
  DeweyNumber add_stage() const {
    DeweyNumber d(*this);
    d.push(0);
    return d;
  }
  // In place: the last digit increased by `times` / a new stage appended.
  void increase_in_place(std::int32_t times) { mutable_data()[len_ - 1] += times; }
  void add_stage_in_place() { push(0); }
  // Whether this version may follow an edge stored with version `other`: `other` is a
  // proper prefix of this, or both have the same length, the same leading digits and
  // this one's last digit is >= other's.
  // Inline with plain loops: versions are a few digits, and this runs for every edge a
  // shared-buffer walk visits (a memcmp call costs more than the comparison).
  bool is_compatible_with(const DeweyNumber& other) const {
    const std::int32_t* a = data();
    const std::int32_t* b = other.data();
    if (len_ > other.len_) return same_digits(a, b, other.len_);
    if (len_ == other.len_ && len_ > 0) {
      const std::uint32_t last = len_ - 1;
      return same_digits(a, b, last) && a[last] >= b[last];
    }
    return false;
  }

  friend bool operator==(const DeweyNumber& a, const DeweyNumber& b) {
    return a.len_ == b.len_ && same_digits(a.data(), b.data(), a.len_);
  }
  std::string to_string() const;  // "1.0.2"
  static DeweyNumber parse(std::string_view s);

  // Compact binary form (varint length, zig-zag varint digits) for checkpoints.
  void encode(std::string& out) const;
  static DeweyNumber decode(std::string_view& in);

  // Heap bytes owned (memory accounting).
  std::size_t heap_bytes() const { return heap_ ? cap_ * sizeof(std::int32_t) : 0; }

 private:
  const std::int32_t* data() const { return heap_ ? heap_.get() : inline_; }
  std::int32_t* mutable_data() { return heap_ ? heap_.get() : inline_; }
  static bool same_digits(const std::int32_t* a, const std::int32_t* b, std::uint32_t n) {
    for (std::uint32_t i = 0; i < n; ++i)
      if (a[i] != b[i]) return false;
    return true;
  }
  void push(std::int32_t v) {
    if (len_ == cap_) grow();
    mutable_data()[len_++] = v;
  }
  void grow();
  // Inline versions copy the whole fixed-size array (a few register moves: no loop over
  // the length and no memcpy call; DeweyNumbers are copied for every branch of the NFA).
  void copy_from(const DeweyNumber& o) {
    if (o.heap_) return copy_from_long(o);
    if (heap_) {
      heap_.reset();
      cap_ = kInline;
    }
    std::memcpy(inline_, o.inline_, sizeof inline_);
    len_ = o.len_;
  }
  void copy_from_long(const DeweyNumber& o);
  void take(DeweyNumber& o) noexcept {
    len_ = o.len_;
    cap_ = o.cap_;
    heap_ = std::move(o.heap_);
    if (!heap_) std::memcpy(inline_, o.inline_, sizeof inline_);
    o.len_ = 0;
    o.cap_ = kInline;
  }

  std::uint32_t len_ = 0;
  std::uint32_t cap_ = kInline;
  std::int32_t inline_[kInline] = {};
  std::unique_ptr<std::int32_t[]> heap_;
};

}  // namespace clink::cep
