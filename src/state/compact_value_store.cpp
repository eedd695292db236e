#include "compact_value_store.hpp"

#include <algorithm>
#include <limits>

#include "clink/core/error.hpp"

namespace clink::state_internal {
namespace {

// Compaction waits for this much garbage, so small stores do not compact on every change.
constexpr std::size_t kMinGarbageToCompact = 64 * 1024;

std::uint32_t checked_size(std::size_t n) {
  if (n > std::numeric_limits<std::uint32_t>::max())
    throw ClinkError("keyed state: a value of " + std::to_string(n) + " bytes is over the memory backend's 4 GiB");
  return static_cast<std::uint32_t>(n);
}

}  // namespace

char* CompactValueStore::make_blob(std::string_view value, std::size_t capacity) {
  const Header h{checked_size(value.size()), checked_size(capacity)};
  char* blob = arena_.allocate(sizeof h + capacity);
  std::memcpy(blob, &h, sizeof h);
  if (!value.empty()) std::memcpy(blob + sizeof h, value.data(), value.size());
  live_ += sizeof h + capacity;
  return blob;
}

void CompactValueStore::assign(char*& blob, std::string_view value) {
  Header h = header(blob);
  if (value.size() <= h.capacity) {
    // memmove: a rewrite may pass a view of the value itself
    if (!value.empty()) std::memmove(blob + sizeof h, value.data(), value.size());
    h.size = static_cast<std::uint32_t>(value.size());
    std::memcpy(blob, &h, sizeof h);
    return;
  }
  char* moved = make_blob(value, value.size());
  live_ -= sizeof h + h.capacity;
  garbage_ += sizeof h + h.capacity;
  blob = moved;
}

bool CompactValueStore::put(std::string_view composite, std::string_view value) {
  bool fresh = false;
  auto it = index_.lazy_emplace(composite, [&](const auto& make) {
    fresh = true;
    ArenaKey key(composite, arena_);
    live_ += key.arena_size();
    make(key, make_blob(value, value.size()));
  });
  if (!fresh) {
    assign(it->second, value);
    maybe_compact();
  }
  return fresh;
}

bool CompactValueStore::append(std::string_view composite, std::string_view more) {
  bool fresh = false;
  auto it = index_.lazy_emplace(composite, [&](const auto& make) {
    fresh = true;
    ArenaKey key(composite, arena_);
    live_ += key.arena_size();
    make(key, make_blob(more, more.size()));
  });
  if (fresh) return true;
  char*& blob = it->second;
  Header h = header(blob);
  const std::size_t size = h.size + more.size();
  if (size <= h.capacity) {
    std::memcpy(blob + sizeof h + h.size, more.data(), more.size());
    h.size = static_cast<std::uint32_t>(size);
    std::memcpy(blob, &h, sizeof h);
    return false;
  }
  char* grown = make_blob(bytes(blob), std::max(size, std::size_t{2} * h.capacity));
  Header g = header(grown);
  std::memcpy(grown + sizeof g + g.size, more.data(), more.size());
  g.size = static_cast<std::uint32_t>(size);
  std::memcpy(grown, &g, sizeof g);
  live_ -= sizeof h + h.capacity;
  garbage_ += sizeof h + h.capacity;
  blob = grown;
  maybe_compact();
  return false;
}

bool CompactValueStore::erase(std::string_view composite) {
  auto it = index_.find(composite);
  if (it == index_.end()) return false;
  release(it->first, it->second);
  index_.erase(it);
  maybe_compact();
  return true;
}

void CompactValueStore::release(const ArenaKey& key, const char* blob) {
  const std::size_t n = sizeof(Header) + header(blob).capacity + key.arena_size();
  live_ -= n;
  garbage_ += n;
}

void CompactValueStore::maybe_compact() {
  if (garbage_ < kMinGarbageToCompact || garbage_ < live_) return;
  EntryArena fresh;
  std::swap(fresh, arena_);  // the new blobs go into arena_; `fresh` holds the old ones
  decltype(index_) rebuilt;
  rebuilt.reserve(index_.size());
  live_ = 0;
  for (const auto& [key, blob] : index_) {
    ArenaKey copied(key.view(), arena_);
    live_ += copied.arena_size();
    const std::string_view value = bytes(blob);
    rebuilt.emplace(copied, make_blob(value, value.size()));
  }
  index_ = std::move(rebuilt);
  garbage_ = 0;
}

}  // namespace clink::state_internal
