#pragma once
// Internal to src/state: the memory backend's value- and list-state values of one
// (state, key group).
//
// Why not a hash map of std::string pairs: a value of more than 15 bytes is a heap block
// of its own (a join keeping every row of an input as list state allocated one per key,
// and freeing a million of them at the end of a job was a tenth of its run), and a slot of
// two string headers (64 B) makes every rehash move twice the bytes.
//
// Here a value is an arena blob `u32 size, u32 capacity, bytes` (entry_arena.hpp) and the
// index maps the composite key (inline up to 15 bytes) to it: 24 B a slot. A value
// rewritten within its capacity is overwritten in place (an accumulator of fixed size
// always is). An append fills the blob's room and goes on in a new segment as large as
// the value so far (up to 4 KiB), linked back to the last one (the index points at the
// last segment): a list growing by appends is never copied and leaves no garbage; its
// segments are joined when the value is read. Blobs left by rewrites and
// removals are garbage until the store compacts (live values copied into a fresh arena,
// each as one blob of its size) once the garbage reaches half the live bytes (waiting
// for a whole made q19's peak memory 17 % higher: its Top-N values are rewritten longer
// and shorter).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include <absl/container/flat_hash_map.h>

#include "entry_arena.hpp"

namespace clink::state_internal {

class CompactValueStore {
 public:
  // The value of a composite key, nullopt when absent: a view of the store (valid until
  // the next change) or, for a value in segments, of `scratch` holding it joined.
  std::optional<std::string_view> get(std::string_view composite, std::string& scratch) const {
    auto it = index_.find(composite);
    if (it == index_.end()) return std::nullopt;
    return value_of(it->second, scratch);
  }
  void prefetch(std::string_view composite) const { index_.prefetch(composite); }
  // Each returns true when the key was absent before.
  bool put(std::string_view composite, std::string_view value);
  bool append(std::string_view composite, std::string_view bytes);
  // False when the key was absent.
  bool erase(std::string_view composite);

  // fn(composite, value) for every key, in no particular order; the store must not change
  // meanwhile.
  template <class Fn>
  void for_each(Fn&& fn) const {
    std::string scratch;
    for (const auto& [key, last] : index_) fn(key.view(), value_of(last, scratch));
  }
  // fn(composite, value) for every key returns nullopt to drop the key, or its value
  // (a view of `value` keeps it as it is, any other replaces it); the one change a store
  // may have while it is iterated.
  template <class Fn>
  void rewrite(Fn&& fn) {
    std::string scratch;
    for (auto it = index_.begin(); it != index_.end();) {
      const std::string_view value = value_of(it->second, scratch);
      const std::optional<std::string_view> kept = fn(it->first.view(), value);
      if (!kept) {
        release(it->first, it->second);
        index_.erase(it++);
        continue;
      }
      if (kept->data() != value.data() || kept->size() != value.size()) assign(it->second, *kept);
      ++it;
    }
    maybe_compact();
  }

  std::size_t size() const { return index_.size(); }
  std::size_t live_bytes() const { return live_; }
  std::size_t garbage_bytes() const { return garbage_; }

 private:
  // A segment: this header; then, in a value's segments after the first (kLinked set in
  // `capacity`), the previous segment's address; then `capacity` bytes, `size` of them used.
  struct Header {
    std::uint32_t size, capacity;
  };
  static constexpr std::uint32_t kLinked = 0x80000000u;
  static Header header(const char* segment) {
    Header h;
    std::memcpy(&h, segment, sizeof h);
    return h;
  }
  static bool linked(const Header& h) { return (h.capacity & kLinked) != 0; }
  static std::size_t capacity(const Header& h) { return h.capacity & ~kLinked; }
  static std::size_t header_size(const Header& h) { return sizeof(Header) + (linked(h) ? sizeof(char*) : 0); }
  static const char* previous(const char* segment) {
    const char* p;
    std::memcpy(&p, segment + sizeof(Header), sizeof p);
    return p;
  }
  static std::string_view bytes(const char* segment) {
    const Header h = header(segment);
    return {segment + header_size(h), h.size};
  }
  static std::string_view value_of(const char* last, std::string& scratch);
  // The last segment of the key's value; a new key gets `initial` (fresh set).
  char*& find_or_add(std::string_view composite, std::string_view initial, bool& fresh);
  // A segment of `capacity` holding `value`, after `previous` (null: a value's first).
  char* make_segment(std::string_view value, std::size_t capacity, const char* previous);
  // Writes `value` into the value whose last segment is `last`: in place when it is one
  // segment with room, else as a new blob.
  void assign(char*& last, std::string_view value);
  void release_segments(const char* last);
  void release(const ArenaKey& key, const char* last);
  void maybe_compact();

  absl::flat_hash_map<ArenaKey, char*, ArenaKeyHash, ArenaKeyEq> index_;  // key -> last segment
  EntryArena arena_;
  std::size_t live_ = 0, garbage_ = 0;
};

}  // namespace clink::state_internal
