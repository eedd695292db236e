#pragma once
// Internal to src/state: the memory backend's arena and its composite keys, shared by
// the map store (compact_map_store.hpp) and the value store (compact_value_store.hpp).
// Bytes of entries live in chunks, so there is no heap block per entry to allocate or
// free one by one (freeing millions of them at the end of a job took seconds), and a
// hash index slot stays small.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include <absl/hash/hash.h>

namespace clink::state_internal {

// Bump allocation in chunks that grow with the arena (4 KiB .. 64 KiB), so a key group
// holding a few entries stays small and a large one makes few allocations.
class EntryArena {
 public:
  char* allocate(std::size_t n);
  std::size_t capacity() const { return capacity_; }

 private:
  std::vector<std::unique_ptr<char[]>> chunks_;
  char* next_ = nullptr;
  std::size_t left_ = 0;
  std::size_t capacity_ = 0;
};

// LEB128 (as put_varint writes it), the common one-byte case first.
inline const char* read_varint(const char* p, std::size_t& out) {
  auto b = static_cast<unsigned char>(*p++);
  if (b < 0x80) {
    out = b;
    return p;
  }
  std::size_t v = b & 0x7f;
  int shift = 7;
  do {
    b = static_cast<unsigned char>(*p++);
    v |= static_cast<std::size_t>(b & 0x7f) << shift;
    shift += 7;
  } while (b >= 0x80);
  out = v;
  return p;
}
inline char* write_varint(std::size_t v, char* p) {
  while (v >= 0x80) {
    *p++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}
inline std::size_t varint_size(std::size_t v) {
  std::size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// A composite key in a store's hash index: inline up to 15 bytes (a BIGINT key without
// namespace: a lookup touches no other memory, rehashing reads no blob), else an arena
// blob `varint(len) bytes`.
class ArenaKey {
 public:
  static constexpr std::size_t kInline = 15;
  ArenaKey(std::string_view composite, EntryArena& arena);  // copies the bytes
  std::string_view view() const {
    if (tag_ != kLong) return {inline_, tag_};
    std::size_t n = 0;
    const char* p = read_varint(blob_, n);
    return {p, n};
  }
  // The bytes this key holds in the arena (0 inline).
  std::size_t arena_size() const;

 private:
  static constexpr unsigned char kLong = 0xff;
  union {
    char inline_[kInline];
    const char* blob_;
  };
  unsigned char tag_;  // inline length, or kLong
};
struct ArenaKeyHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return absl::Hash<absl::string_view>{}({s.data(), s.size()}); }
  std::size_t operator()(const ArenaKey& k) const { return (*this)(k.view()); }
};
struct ArenaKeyEq {
  using is_transparent = void;
  template <class A, class B>
  bool operator()(const A& a, const B& b) const {
    return view(a) == view(b);
  }
  static std::string_view view(std::string_view s) { return s; }
  static std::string_view view(const ArenaKey& k) { return k.view(); }
};

}  // namespace clink::state_internal
