#include "compact_map_store.hpp"

#include <algorithm>
#include <cstring>

namespace clink::state_internal {
namespace {

constexpr std::size_t kMinChunk = 4 * 1024;
constexpr std::size_t kMaxChunk = 1024 * 1024;
// Compaction waits for this much garbage, so small stores do not compact on every removal.
constexpr std::size_t kMinGarbageToCompact = 64 * 1024;

// LEB128 as put_varint writes it (state_codec.hpp); blobs are written here only.
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
  v.bytes = read_varint(read_varint(blob, v.key_len), v.value_len);
  return v;
}

}  // namespace

char* EntryArena::allocate(std::size_t n) {
  if (n > left_) {
    std::size_t chunk = std::clamp(capacity_, kMinChunk, kMaxChunk);
    if (n > chunk / 4) chunk = std::max(chunk, n);  // a large blob: its own chunk when needed
    if (n > chunk) chunk = n;
    chunks_.push_back(std::make_unique_for_overwrite<char[]>(chunk));
    next_ = chunks_.back().get();
    left_ = chunk;
    capacity_ += chunk;
  }
  char* p = next_;
  next_ += n;
  left_ -= n;
  return p;
}

std::string_view CompactMapStore::user_key(const char* blob) {
  BlobView v = view(blob);
  return {v.bytes, v.key_len};
}
std::string_view CompactMapStore::value(const char* blob) {
  BlobView v = view(blob);
  return {v.bytes + v.key_len, v.value_len};
}

std::string_view CompactMapStore::composite_of(const char* key_blob) {
  std::size_t n = 0;
  const char* p = read_varint(key_blob, n);
  return {p, n};
}

CompactMapStore::Entries* CompactMapStore::find(std::string_view composite) {
  auto it = keys_.find(composite);
  return it == keys_.end() ? nullptr : &it->second;
}

CompactMapStore::Entries& CompactMapStore::find_or_create(std::string_view composite) {
  auto it = keys_.find(composite);
  if (it != keys_.end()) return it->second;
  ++generation_;
  return keys_.try_emplace(make_key_blob(composite)).first->second;
}

void CompactMapStore::erase(std::string_view composite) {
  auto it = keys_.find(composite);
  if (it == keys_.end()) return;
  it->second.for_each([&](const char* blob) {
    release_entry(blob);
    return true;
  });
  const char* key_blob = it->first;
  keys_.erase(it);
  release_key(key_blob);
  ++generation_;
  maybe_compact();
}

const char* CompactMapStore::get(const Entries& entries, std::string_view user_key) const {
  if (entries.one_) return CompactMapStore::user_key(entries.one_) == user_key ? entries.one_ : nullptr;
  if (!entries.many_) return nullptr;
  auto it = entries.many_->find(user_key);
  return it == entries.many_->end() ? nullptr : *it;
}

CompactMapStore::Position CompactMapStore::locate(Entries& entries, std::string_view user_key) const {
  Position at;
  if (entries.one_) {
    if (CompactMapStore::user_key(entries.one_) == user_key) at.blob = entries.one_;
  } else if (entries.many_) {
    at.where = entries.many_->lower_bound(user_key);
    if (at.where != entries.many_->end() && CompactMapStore::user_key(*at.where) == user_key) at.blob = *at.where;
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
  if (entries.many_) {
    entries.many_->insert(at.where, blob);
  } else if (entries.one_) {
    entries.many_ = std::make_unique<Tree>();
    entries.many_->insert(entries.one_);
    entries.many_->insert(blob);
    entries.one_ = nullptr;
  } else {
    entries.one_ = blob;
  }
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
  if (entries.one_) {
    entries.one_ = fresh;
  } else {
    auto it = entries.many_->erase(at.where);
    entries.many_->insert(it, fresh);
  }
  release_entry(at.blob);
  maybe_compact();
}

void CompactMapStore::remove(std::string_view composite, Entries& entries, const Position& at) {
  if (entries.one_) {
    entries.one_ = nullptr;
  } else {
    entries.many_->erase(at.where);
    if (entries.many_->empty()) entries.many_.reset();
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

const char* CompactMapStore::make_key_blob(std::string_view composite) {
  const std::size_t n = varint_size(composite.size()) + composite.size();
  char* blob = arena_.allocate(n);
  std::memcpy(write_varint(composite.size(), blob), composite.data(), composite.size());
  live_ += n;
  return blob;
}

void CompactMapStore::release_entry(const char* blob) {
  BlobView v = view(blob);
  const std::size_t n = blob_size(v.key_len, v.value_len);
  live_ -= n;
  garbage_ += n;
}

void CompactMapStore::release_key(const char* key_blob) {
  std::string_view c = composite_of(key_blob);
  const std::size_t n = varint_size(c.size()) + c.size();
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
  for (auto& [key_blob, entries] : keys_) {
    std::string_view c = composite_of(key_blob);
    Entries moved;
    if (entries.one_) {
      moved.one_ = copy_entry(entries.one_);
    } else if (entries.many_) {
      moved.many_ = std::make_unique<Tree>();
      for (const char* blob : *entries.many_) moved.many_->insert(moved.many_->end(), copy_entry(blob));
    }
    rebuilt.emplace(copy(key_blob, varint_size(c.size()) + c.size()), std::move(moved));
  }
  keys_ = std::move(rebuilt);
  arena_ = std::move(fresh);
  garbage_ = 0;
  ++generation_;
}

}  // namespace clink::state_internal
