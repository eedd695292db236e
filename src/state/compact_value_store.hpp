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
// always is); an append past the capacity moves the value to a blob of twice the
// capacity, so a list that grows by appends costs amortised O(1) per byte. Blobs left
// behind are garbage until the store compacts (live blobs copied into a fresh arena,
// trimmed to their size) once the garbage outweighs the live bytes.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

#include <absl/container/flat_hash_map.h>

#include "entry_arena.hpp"

namespace clink::state_internal {

class CompactValueStore {
 public:
  // The value of a composite key; nullopt when absent. Valid until the next change.
  std::optional<std::string_view> get(std::string_view composite) const {
    auto it = index_.find(composite);
    if (it == index_.end()) return std::nullopt;
    return bytes(it->second);
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
    for (const auto& [key, blob] : index_) fn(key.view(), bytes(blob));
  }
  // fn(composite, value) for every key returns nullopt to drop the key, or its value
  // (a view of `value` keeps it as it is, any other replaces it); the one change a store
  // may have while it is iterated.
  template <class Fn>
  void rewrite(Fn&& fn) {
    for (auto it = index_.begin(); it != index_.end();) {
      const std::string_view value = bytes(it->second);
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
  struct Header {
    std::uint32_t size, capacity;
  };
  static Header header(const char* blob) {
    Header h;
    std::memcpy(&h, blob, sizeof h);
    return h;
  }
  static std::string_view bytes(const char* blob) { return {blob + sizeof(Header), header(blob).size}; }
  // A blob of `capacity` holding `value`.
  char* make_blob(std::string_view value, std::size_t capacity);
  // Writes `value` into the blob, in place when it fits.
  void assign(char*& blob, std::string_view value);
  void release(const ArenaKey& key, const char* blob);
  void maybe_compact();

  absl::flat_hash_map<ArenaKey, char*, ArenaKeyHash, ArenaKeyEq> index_;
  EntryArena arena_;
  std::size_t live_ = 0, garbage_ = 0;
};

}  // namespace clink::state_internal
