#pragma once
// Internal to src/state: the memory backend's map-state entries of one (state, key group).
//
// Why not a std::map of std::string pairs per (key, namespace) in a hash map of strings:
// every entry then costs a tree node, two string headers and usually two heap blocks
// (~150 B before its bytes), every key ~120 B more, lookups chase a pointer per level,
// and freeing millions of nodes at the end of a job takes seconds. A join keeps every
// row of both inputs in map state, so that overhead was most of its memory and CPU.
//
// Here every byte lives in one chunked arena: an entry is a blob `varint(len uk)
// varint(len v) uk v`, a composite key a blob `varint(len) bytes`. The key index is a
// flat hash map from composite-key blob to Entries (24 B a slot); Entries holds one blob
// inline, or a B-tree of blob pointers ordered by user key (bytewise, as std::string
// compares) once there are two or more. A value rewritten with the same length is
// overwritten in place; blobs freed by removals or length changes are garbage until the
// store is compacted (live blobs copied into a fresh arena, the index rebuilt) once the
// garbage outweighs the live bytes, so a long-running job does not grow with its churn.
// The arena is released in whole chunks.
//
// Entries must not change while they are iterated; the backend enforces that.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/btree_set.h>
#include <absl/container/flat_hash_map.h>
#include <absl/hash/hash.h>

namespace clink::state_internal {

// Bump allocation in chunks that grow with the arena (4 KiB .. 1 MiB), so a key group
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

class CompactMapStore {
 public:
  // An entry blob's user key and value.
  static std::string_view user_key(const char* blob);
  static std::string_view value(const char* blob);

  struct BlobLess {
    using is_transparent = void;
    bool operator()(const char* a, const char* b) const { return user_key(a) < user_key(b); }
    bool operator()(const char* a, std::string_view b) const { return user_key(a) < b; }
    bool operator()(std::string_view a, const char* b) const { return a < user_key(b); }
  };
  using Tree = absl::btree_set<const char*, BlobLess>;

  // One (key, namespace)'s entries in user-key order.
  class Entries {
   public:
    bool empty() const { return !one_ && !many_; }
    std::size_t size() const { return many_ ? many_->size() : (one_ ? 1 : 0); }
    // fn(blob) per entry in user-key order; returns false to stop.
    template <class Fn>
    void for_each(Fn&& fn) const {
      if (one_) {
        fn(one_);
      } else if (many_) {
        for (const char* blob : *many_)
          if (!fn(blob)) return;
      }
    }

   private:
    friend class CompactMapStore;
    const char* one_ = nullptr;    // the only entry
    std::unique_ptr<Tree> many_;  // two or more (one_ is then null)
  };

  // Where a user key is (blob set) or would go, from locate().
  struct Position {
    const char* blob = nullptr;
    Tree::iterator where{};
  };

  // The entries of a composite key, nullptr when it has none. Pointers stay valid until
  // a call that changes generation() (a key added or dropped, a compaction).
  Entries* find(std::string_view composite);
  Entries& find_or_create(std::string_view composite);
  // Drops a composite key and releases its blobs.
  void erase(std::string_view composite);
  std::uint64_t generation() const { return generation_; }

  // An entry's blob; nullptr when absent.
  const char* get(const Entries& entries, std::string_view user_key) const;
  Position locate(Entries& entries, std::string_view user_key) const;
  void put(Entries& entries, std::string_view user_key, std::string_view value);
  // With a position from locate(): the entry's new value (present), a new entry (absent).
  void replace(Entries& entries, const Position& at, std::string_view value);
  void insert(Entries& entries, const Position& at, std::string_view user_key, std::string_view value);
  // Removes a present entry, and the composite key when it was its last entry.
  void remove(std::string_view composite, Entries& entries, const Position& at);

  // Every composite key with its entries, in no particular order.
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (const auto& [key, entries] : keys_) fn(composite_of(key), entries);
  }

  std::size_t num_keys() const { return keys_.size(); }
  std::size_t live_bytes() const { return live_; }
  std::size_t garbage_bytes() const { return garbage_; }
  std::size_t arena_bytes() const { return arena_.capacity(); }

 private:
  static std::string_view composite_of(const char* key_blob);
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return absl::Hash<absl::string_view>{}({s.data(), s.size()}); }
    std::size_t operator()(const char* key_blob) const { return (*this)(composite_of(key_blob)); }
  };
  struct KeyEq {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return view(a) == view(b);
    }
    static std::string_view view(std::string_view s) { return s; }
    static std::string_view view(const char* key_blob) { return composite_of(key_blob); }
  };
  using KeyIndex = absl::flat_hash_map<const char*, Entries, KeyHash, KeyEq>;

  const char* make_blob(std::string_view user_key, std::string_view value);
  const char* make_key_blob(std::string_view composite);
  void release_entry(const char* blob);
  void release_key(const char* key_blob);
  void maybe_compact();

  KeyIndex keys_;
  EntryArena arena_;
  std::size_t live_ = 0, garbage_ = 0;
  std::uint64_t generation_ = 0;
};

}  // namespace clink::state_internal
