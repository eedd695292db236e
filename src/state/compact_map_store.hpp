#pragma once
// Internal to src/state: the memory backend's map-state entries of one (state, key group).
//
// Why not a std::map of std::string pairs per (key, namespace) in a hash map of strings:
// every entry then costs a tree node, two string headers and usually two heap blocks
// (~150 B before its bytes), every key ~120 B more, lookups chase a pointer per level,
// and freeing millions of nodes at the end of a job takes seconds. A join keeps every
// row of both inputs in map state, so that overhead was most of its memory and CPU.
//
// Here the bytes live in one chunked arena: an entry is a blob `varint(len uk)
// varint(len v) uk v`. The key index is a flat hash map from composite key to Entries
// (32 B a slot; keys of up to 15 bytes, such as a BIGINT key without namespace, are kept
// in the slot, longer ones as a blob `varint(len) bytes`, so a lookup of a short key
// touches no other memory); Entries holds up to two blob
// pointers inline, or from the third on a B-tree of them ordered by user key (bytewise,
// as std::string compares) or, in an unordered store (a map state nobody iterates in
// order, such as COUNT(DISTINCT)'s), a hash set of them: a B-tree lookup costs a cache
// miss per level, so its cost grows with the map, a hash lookup's does not. A value
// rewritten with the same length is
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
#include <absl/container/flat_hash_set.h>
#include <absl/hash/hash.h>

#include "entry_arena.hpp"

namespace clink::state_internal {

class CompactMapStore {
 public:
  // An entry blob's user key and value (inline: the B-tree compares user keys).
  static std::string_view user_key(const char* blob) {
    std::size_t key_len = 0, value_len = 0;
    const char* bytes = read_lengths(blob, key_len, value_len);
    return {bytes, key_len};
  }
  static std::string_view value(const char* blob) {
    std::size_t key_len = 0, value_len = 0;
    const char* bytes = read_lengths(blob, key_len, value_len);
    return {bytes + key_len, value_len};
  }
  static const char* read_lengths(const char* blob, std::size_t& key_len, std::size_t& value_len) {
    return state_internal::read_varint(state_internal::read_varint(blob, key_len), value_len);
  }

  // A B-tree element: the blob and 4 bytes of its user key, those after the bytes every
  // key of the tree shares (its `skip`), big-endian and zero-padded. Comparisons decide on
  // unequal prefixes without touching the blob (a cache miss per comparison was most of a
  // large join's insert, and of a large COUNT(DISTINCT)'s lookup); a smaller prefix means
  // a smaller key (a zero pad stands for a shorter key), equal ones compare the keys.
  // Skipping the shared bytes keeps 4 bytes discriminating where keys start alike (a
  // marker byte and the high zero bytes of a BIGINT), so a slot is 12 bytes (packed),
  // not 16 with an 8-byte prefix of the first bytes.
  using Prefix = std::uint32_t;
  static Prefix key_prefix(std::string_view k, std::size_t skip) {
    Prefix p = 0;
    for (std::size_t i = skip; i < skip + sizeof(Prefix); ++i)
      p = (p << 8) | (i < k.size() ? static_cast<unsigned char>(k[i]) : 0u);
    return p;
  }
  struct __attribute__((packed)) Slot {
    Prefix prefix;
    const char* blob;
  };
  static_assert(sizeof(Slot) == 12);
  struct Probe {  // a looked-up user key with its prefix, computed once per lookup
    Prefix prefix;
    std::string_view key;
  };
  struct BlobLess {
    using is_transparent = void;
    bool operator()(const Slot& a, const Slot& b) const {
      return a.prefix != b.prefix ? a.prefix < b.prefix : user_key(a.blob) < user_key(b.blob);
    }
    bool operator()(const Slot& a, const Probe& b) const {
      return a.prefix != b.prefix ? a.prefix < b.prefix : user_key(a.blob) < b.key;
    }
    bool operator()(const Probe& a, const Slot& b) const {
      return a.prefix != b.prefix ? a.prefix < b.prefix : a.key < user_key(b.blob);
    }
  };
  using Tree = absl::btree_set<Slot, BlobLess>;
  // A B-tree of blobs with the bytes all its keys start with (up to kMaxSkip of them).
  // Prefixes are taken after those bytes, so they order the keys as the keys do. A key
  // that does not start with them narrows the shared bytes to what it shares and
  // recomputes every slot's prefix (at most kMaxSkip times in a tree's life: amortised
  // O(1) per entry).
  struct SharedTree {
    static constexpr std::size_t kMaxSkip = 15;
    Tree tree;
    std::uint8_t skip = 0;
    char shared[kMaxSkip];

    bool starts_with_shared(std::string_view k) const {
      return k.size() >= skip && std::char_traits<char>::compare(k.data(), shared, skip) == 0;
    }
    Probe probe(std::string_view k) const { return {key_prefix(k, skip), k}; }
    Slot slot(const char* blob) const { return {key_prefix(user_key(blob), skip), blob}; }
    // Makes `k` start with the shared bytes (fewer of them), then every prefix anew.
    void narrow_to(std::string_view k);
  };

  // An unordered store's entries of one (key, namespace) from the third on: the blobs
  // hashed by user key (8 bytes a slot; rehashing reads the blobs again, amortised O(1)
  // per insert). Lookups go by UserKey, so a blob pointer and a key never mix.
  struct UserKey {
    std::string_view key;
  };
  struct UserKeyHash {
    using is_transparent = void;
    std::size_t operator()(UserKey k) const { return absl::Hash<absl::string_view>{}({k.key.data(), k.key.size()}); }
    std::size_t operator()(const char* blob) const { return (*this)(UserKey{user_key(blob)}); }
  };
  struct UserKeyEq {
    using is_transparent = void;
    static std::string_view view(UserKey k) { return k.key; }
    static std::string_view view(const char* blob) { return user_key(blob); }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return view(a) == view(b);
    }
  };
  using HashSet = absl::flat_hash_set<const char*, UserKeyHash, UserKeyEq>;

  // One (key, namespace)'s entries: up to two blob pointers inline (most join keys hold
  // one or two rows), from the third on a B-tree in user-key order (an ordered store) or
  // a hash set (an unordered one). Inline entries are in user-key order either way.
  class Entries {
   public:
    Entries() = default;
    Entries(Entries&& o) noexcept : p0_(o.p0_), p1_(o.p1_) {
      o.p0_ = nullptr;
      o.p1_ = nullptr;
    }
    Entries& operator=(Entries&& o) noexcept {
      if (this != &o) {
        reset();
        p0_ = o.p0_;
        p1_ = o.p1_;
        o.p0_ = nullptr;
        o.p1_ = nullptr;
      }
      return *this;
    }
    Entries(const Entries&) = delete;
    Entries& operator=(const Entries&) = delete;
    ~Entries() { reset(); }

    bool empty() const { return p0_ == nullptr; }
    std::size_t size() const {
      if (SharedTree* t = tree()) return t->tree.size();
      if (HashSet* h = hash()) return h->size();
      return p0_ ? (p1_ ? 2 : 1) : 0;
    }
    // fn(blob) per entry, in user-key order unless a hash set holds them; returns false
    // to stop.
    template <class Fn>
    void for_each(Fn&& fn) const {
      if (SharedTree* t = tree()) {
        for (const Slot& slot : t->tree)
          if (!fn(slot.blob)) return;
      } else if (HashSet* h = hash()) {
        for (const char* blob : *h)
          if (!fn(blob)) return;
      } else if (p0_) {
        if (fn(first()) && p1_) fn(p1_);
      }
    }

   private:
    friend class CompactMapStore;
    static const char kTreeTag, kHashTag;
    SharedTree* tree() const { return p1_ == &kTreeTag ? static_cast<SharedTree*>(p0_) : nullptr; }
    HashSet* hash() const { return p1_ == &kHashTag ? static_cast<HashSet*>(p0_) : nullptr; }
    bool is_inline() const { return p1_ != &kTreeTag && p1_ != &kHashTag; }
    const char* first() const { return static_cast<const char*>(p0_); }
    void reset() {
      delete tree();
      delete hash();
      p0_ = nullptr;
      p1_ = nullptr;
    }
    // Inline: p0_ the first blob (or null), p1_ the second (or null). A B-tree: p0_ is
    // the SharedTree, p1_ == &kTreeTag. A hash set: p0_ is the HashSet, p1_ == &kHashTag.
    void* p0_ = nullptr;
    const char* p1_ = nullptr;
  };

  // Where a user key is (blob set) or would go, from locate().
  struct Position {
    const char* blob = nullptr;
    Tree::iterator where{};  // in a B-tree
    int index = 0;           // inline: the entry's slot, or where it would go
  };

  // Ordered (the default): every (key, namespace)'s entries in user-key order. Unordered:
  // hash sets instead of B-trees, so Entries::for_each is in no particular order.
  explicit CompactMapStore(bool ordered = true) : ordered_(ordered) {}
  bool ordered() const { return ordered_; }
  // Rebuilds every B-tree as a hash set or the other way round (a state restored before
  // it was registered with its flavour). Changes generation().
  void set_ordered(bool ordered);

  // The entries of a composite key, nullptr when it has none. Pointers stay valid until
  // a call that changes generation() (a key added or dropped, a compaction).
  Entries* find(std::string_view composite);
  Entries& find_or_create(std::string_view composite);
  void prefetch(std::string_view composite) const { keys_.prefetch(composite); }
  // Drops a composite key and releases its blobs.
  void erase(std::string_view composite);
  std::uint64_t generation() const { return generation_; }

  // An entry's blob; nullptr when absent.
  const char* get(const Entries& entries, std::string_view user_key) const;
  // (Not const: a key that does not start with a B-tree's shared bytes narrows them.)
  Position locate(Entries& entries, std::string_view user_key);
  void put(Entries& entries, std::string_view user_key, std::string_view value);
  // With a position from locate(): the entry's new value (present), a new entry (absent).
  void replace(Entries& entries, const Position& at, std::string_view value);
  void insert(Entries& entries, const Position& at, std::string_view user_key, std::string_view value);
  // Removes a present entry, and the composite key when it was its last entry.
  void remove(std::string_view composite, Entries& entries, const Position& at);

  // Every composite key with its entries, in no particular order.
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (const auto& [key, entries] : keys_) fn(key.view(), entries);
  }

  std::size_t num_keys() const { return keys_.size(); }
  std::size_t live_bytes() const { return live_; }
  std::size_t garbage_bytes() const { return garbage_; }
  std::size_t arena_bytes() const { return arena_.capacity(); }

 private:
  using KeyIndex = absl::flat_hash_map<ArenaKey, Entries, ArenaKeyHash, ArenaKeyEq>;

  const char* make_blob(std::string_view user_key, std::string_view value);
  // A B-tree of blobs (an inline key's three, a hash set's), sharing what they share.
  static std::unique_ptr<SharedTree> make_tree(const std::vector<const char*>& blobs);
  // Turns inline entries that take a third blob into a B-tree or hash set.
  void grow(Entries& entries, const char* third);
  void release_entry(const char* blob);
  void maybe_compact();

  KeyIndex keys_;
  bool ordered_;
  EntryArena arena_;
  std::size_t live_ = 0, garbage_ = 0;
  std::uint64_t generation_ = 0;
};

}  // namespace clink::state_internal
