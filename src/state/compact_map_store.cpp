#include "compact_map_store.hpp"

#include <algorithm>
#include <cstring>

namespace clink::state_internal {
namespace {

// Compaction waits for this much garbage, so small stores do not compact on every removal.
constexpr std::size_t kMinGarbageToCompact = 64 * 1024;

inline std::size_t blob_size(std::size_t key_len, std::size_t value_len) {
  return varint_size(key_len) + varint_size(value_len) + key_len + value_len;
}
// Where a blob's bytes start and its two lengths.
struct BlobView {
  const char* bytes;
  std::size_t key_len, value_len;
};
inline BlobView view(const char* blob) {
  BlobView v{};
  v.bytes = CompactMapStore::read_lengths(blob, v.key_len, v.value_len);
  return v;
}

}  // namespace

CompactMapStore::Entries* CompactMapStore::find(std::string_view composite) {
  auto it = keys_.find(composite);
  return it == keys_.end() ? nullptr : &it->second;
}

CompactMapStore::Entries& CompactMapStore::find_or_create(std::string_view composite) {
  // One probe: the key's bytes are copied (into the arena when long) only when it is new.
  return keys_
      .lazy_emplace(composite,
                    [&](const KeyIndex::constructor& make) {
                      ++generation_;
                      ArenaKey key(composite, arena_);
                      live_ += key.arena_size();
                      make(std::piecewise_construct, std::forward_as_tuple(key), std::forward_as_tuple());
                    })
      ->second;
}

void CompactMapStore::erase(std::string_view composite) {
  auto it = keys_.find(composite);
  if (it == keys_.end()) return;
  it->second.for_each([&](const char* blob) {
    release_entry(blob);
    return true;
  });
  const std::size_t key_bytes = it->first.arena_size();
  keys_.erase(it);
  live_ -= key_bytes;
  garbage_ += key_bytes;
  ++generation_;
  maybe_compact();
}

const char CompactMapStore::Entries::kTreeTag = 0;
const char CompactMapStore::Entries::kHashTag = 0;

void CompactMapStore::SharedTree::narrow_to(std::string_view k) {
  std::size_t n = 0;
  while (n < skip && n < k.size() && k[n] == shared[n]) ++n;
  skip = static_cast<std::uint8_t>(n);
  // The prefixes after fewer shared bytes order the keys as before, so the slots stay
  // where they are (set elements are const only to keep callers from reordering them).
  for (const Slot& s : tree) const_cast<Slot&>(s).prefix = key_prefix(user_key(s.blob), skip);
}

const char* CompactMapStore::get(const Entries& entries, std::string_view user_key) const {
  if (SharedTree* t = entries.tree()) {
    if (!t->starts_with_shared(user_key)) return nullptr;
    auto it = t->tree.find(t->probe(user_key));
    return it == t->tree.end() ? nullptr : it->blob;
  }
  if (HashSet* h = entries.hash()) {
    auto it = h->find(UserKey{user_key});
    return it == h->end() ? nullptr : *it;
  }
  if (entries.p0_ && CompactMapStore::user_key(entries.first()) == user_key) return entries.first();
  if (entries.p1_ && CompactMapStore::user_key(entries.p1_) == user_key) return entries.p1_;
  return nullptr;
}

CompactMapStore::Position CompactMapStore::locate(Entries& entries, std::string_view user_key) {
  Position at;
  if (SharedTree* t = entries.tree()) {
    if (!t->starts_with_shared(user_key)) t->narrow_to(user_key);
    at.where = t->tree.lower_bound(t->probe(user_key));
    if (at.where != t->tree.end() && CompactMapStore::user_key(at.where->blob) == user_key) at.blob = at.where->blob;
    return at;
  }
  if (HashSet* h = entries.hash()) {
    if (auto it = h->find(UserKey{user_key}); it != h->end()) at.blob = *it;
    return at;
  }
  const char* inline_blobs[2] = {entries.first(), entries.p1_};
  for (const char* blob : inline_blobs) {
    if (!blob) break;
    std::string_view k = CompactMapStore::user_key(blob);
    if (k == user_key) {
      at.blob = blob;
      return at;
    }
    if (user_key < k) return at;
    ++at.index;
  }
  return at;
}

void CompactMapStore::put(Entries& entries, std::string_view user_key, std::string_view value) {
  Position at = locate(entries, user_key);
  if (at.blob) replace(entries, at, value);
  else insert(entries, at, user_key, value);
}

void CompactMapStore::insert(Entries& entries, const Position& at, std::string_view user_key, std::string_view value) {
  const char* blob = make_blob(user_key, value);
  if (SharedTree* t = entries.tree()) {
    t->tree.insert(at.where, t->slot(blob));
  } else if (HashSet* h = entries.hash()) {
    h->insert(blob);
  } else if (!entries.p0_) {
    entries.p0_ = const_cast<char*>(blob);
  } else if (!entries.p1_) {
    if (at.index == 0) {
      entries.p1_ = entries.first();
      entries.p0_ = const_cast<char*>(blob);
    } else {
      entries.p1_ = blob;
    }
  } else {
    grow(entries, blob);
  }
}

void CompactMapStore::grow(Entries& entries, const char* third) {
  const std::vector<const char*> blobs{entries.first(), entries.p1_, third};
  if (ordered_) {
    entries.p0_ = make_tree(blobs).release();
    entries.p1_ = &Entries::kTreeTag;
  } else {
    entries.p0_ = new HashSet(blobs.begin(), blobs.end());
    entries.p1_ = &Entries::kHashTag;
  }
}

std::unique_ptr<CompactMapStore::SharedTree> CompactMapStore::make_tree(const std::vector<const char*>& blobs) {
  auto t = std::make_unique<SharedTree>();
  const std::string_view first = user_key(blobs.front());
  t->skip = static_cast<std::uint8_t>(std::min(first.size(), SharedTree::kMaxSkip));
  std::memcpy(t->shared, first.data(), t->skip);
  for (const char* blob : blobs)
    if (!t->starts_with_shared(user_key(blob))) t->narrow_to(user_key(blob));
  for (const char* blob : blobs) t->tree.insert(t->slot(blob));
  return t;
}

void CompactMapStore::replace(Entries& entries, const Position& at, std::string_view value) {
  BlobView v = view(at.blob);
  if (v.value_len == value.size()) {
    // In place: blobs are handed out as const to keep B-tree keys immutable; the value
    // bytes are not part of the order.
    std::memcpy(const_cast<char*>(v.bytes + v.key_len), value.data(), value.size());
    return;
  }
  const char* fresh = make_blob({v.bytes, v.key_len}, value);
  if (SharedTree* t = entries.tree()) {
    auto it = t->tree.erase(at.where);
    t->tree.insert(it, t->slot(fresh));
  } else if (HashSet* h = entries.hash()) {
    h->erase(UserKey{user_key(at.blob)});
    h->insert(fresh);
  } else if (entries.first() == at.blob) {
    entries.p0_ = const_cast<char*>(fresh);
  } else {
    entries.p1_ = fresh;
  }
  release_entry(at.blob);
  maybe_compact();
}

void CompactMapStore::remove(std::string_view composite, Entries& entries, const Position& at) {
  if (SharedTree* t = entries.tree()) {
    t->tree.erase(at.where);
    if (t->tree.empty()) entries.reset();
  } else if (HashSet* h = entries.hash()) {
    h->erase(UserKey{user_key(at.blob)});
    if (h->empty()) entries.reset();
  } else if (entries.first() == at.blob) {
    entries.p0_ = const_cast<char*>(entries.p1_);
    entries.p1_ = nullptr;
  } else {
    entries.p1_ = nullptr;
  }
  release_entry(at.blob);
  if (entries.empty()) erase(composite);
  else maybe_compact();
}

const char* CompactMapStore::make_blob(std::string_view user_key, std::string_view value) {
  const std::size_t n = blob_size(user_key.size(), value.size());
  char* blob = arena_.allocate(n);
  char* p = write_varint(value.size(), write_varint(user_key.size(), blob));
  std::memcpy(p, user_key.data(), user_key.size());
  std::memcpy(p + user_key.size(), value.data(), value.size());
  live_ += n;
  return blob;
}

void CompactMapStore::release_entry(const char* blob) {
  BlobView v = view(blob);
  const std::size_t n = blob_size(v.key_len, v.value_len);
  live_ -= n;
  garbage_ += n;
}

void CompactMapStore::maybe_compact() {
  if (garbage_ < kMinGarbageToCompact || garbage_ < live_) return;
  // Copy every live blob into a fresh arena and rebuild the index and each B-tree in
  // order (appending at the end of a B-tree is linear).
  EntryArena fresh;
  auto copy = [&fresh](const char* blob, std::size_t n) {
    char* out = fresh.allocate(n);
    std::memcpy(out, blob, n);
    return static_cast<const char*>(out);
  };
  auto copy_entry = [&](const char* blob) {
    BlobView v = view(blob);
    return copy(blob, blob_size(v.key_len, v.value_len));
  };
  KeyIndex rebuilt;
  rebuilt.reserve(keys_.size());
  for (auto& [key, entries] : keys_) {
    Entries moved;
    if (SharedTree* t = entries.tree()) {
      auto tree = std::make_unique<SharedTree>();
      tree->skip = t->skip;
      std::memcpy(tree->shared, t->shared, t->skip);
      for (const Slot& slot : t->tree) tree->tree.insert(tree->tree.end(), Slot{slot.prefix, copy_entry(slot.blob)});
      moved.p0_ = tree.release();
      moved.p1_ = &Entries::kTreeTag;
    } else if (HashSet* h = entries.hash()) {
      auto copied = std::make_unique<HashSet>();
      copied->reserve(h->size());
      for (const char* blob : *h) copied->insert(copy_entry(blob));
      moved.p0_ = copied.release();
      moved.p1_ = &Entries::kHashTag;
    } else {
      if (entries.p0_) moved.p0_ = const_cast<char*>(copy_entry(entries.first()));
      if (entries.p1_) moved.p1_ = copy_entry(entries.p1_);
    }
    rebuilt.emplace(ArenaKey(key.view(), fresh), std::move(moved));
  }
  keys_ = std::move(rebuilt);
  arena_ = std::move(fresh);
  garbage_ = 0;
  ++generation_;
}

void CompactMapStore::set_ordered(bool ordered) {
  if (ordered == ordered_) return;
  ordered_ = ordered;
  ++generation_;
  std::vector<const char*> blobs;
  for (auto& [key, entries] : keys_) {
    if (entries.is_inline()) continue;
    blobs.clear();
    entries.for_each([&](const char* blob) {
      blobs.push_back(blob);
      return true;
    });
    Entries rebuilt;
    if (ordered) {
      rebuilt.p0_ = make_tree(blobs).release();
      rebuilt.p1_ = &Entries::kTreeTag;
    } else {
      rebuilt.p0_ = new HashSet(blobs.begin(), blobs.end());
      rebuilt.p1_ = &Entries::kHashTag;
    }
    entries = std::move(rebuilt);
  }
}

}  // namespace clink::state_internal
