#include "compact_value_store.hpp"

#include <algorithm>
#include <limits>

#include <absl/container/inlined_vector.h>

#include "clink/core/error.hpp"

namespace clink::state_internal {
namespace {

// Compaction waits for this much garbage, so small stores do not compact on every change.
constexpr std::size_t kMinGarbageToCompact = 64 * 1024;
// A new segment is as large as the value so far up to this: larger ones would leave the
// arena's chunks (64 KiB) with tails too short for them, wasted.
constexpr std::size_t kMaxSegment = 4 * 1024;

std::uint32_t checked_size(std::size_t n) {
  if (n >= 0x80000000u)
    throw ClinkError("keyed state: a value segment of " + std::to_string(n) +
                     " bytes is over the memory backend's 2 GiB");
  return static_cast<std::uint32_t>(n);
}

}  // namespace

std::string_view CompactValueStore::value_of(const char* last, std::string& scratch) {
  if (!linked(header(last))) return bytes(last);
  absl::InlinedVector<const char*, 32> segments;  // last to first
  std::size_t total = 0;
  for (const char* s = last;; s = previous(s)) {
    segments.push_back(s);
    total += header(s).size;
    if (!linked(header(s))) break;
  }
  scratch.clear();
  scratch.reserve(total);
  for (auto it = segments.rbegin(); it != segments.rend(); ++it) scratch.append(bytes(*it));
  return scratch;
}

char* CompactValueStore::make_segment(std::string_view value, std::size_t capacity, const char* prev) {
  Header h{checked_size(value.size()), checked_size(capacity)};
  if (prev) h.capacity |= kLinked;
  const std::size_t header_bytes = header_size(h);
  char* segment = arena_.allocate(header_bytes + capacity);
  std::memcpy(segment, &h, sizeof h);
  if (prev) std::memcpy(segment + sizeof h, &prev, sizeof prev);
  if (!value.empty()) std::memcpy(segment + header_bytes, value.data(), value.size());
  live_ += header_bytes + capacity;
  return segment;
}

void CompactValueStore::assign(char*& last, std::string_view value) {
  Header h = header(last);
  if (!linked(h) && value.size() <= capacity(h)) {
    // memmove: a rewrite may pass a view of the value itself
    if (!value.empty()) std::memmove(last + sizeof h, value.data(), value.size());
    h.size = static_cast<std::uint32_t>(value.size());
    std::memcpy(last, &h, sizeof h);
    return;
  }
  char* fresh = make_segment(value, value.size(), nullptr);
  release_segments(last);
  last = fresh;
}

char*& CompactValueStore::find_or_add(std::string_view composite, std::string_view initial, bool& fresh) {
  fresh = false;
  return index_
      .lazy_emplace(composite,
                    [&](const auto& make) {
                      fresh = true;
                      ArenaKey key(composite, arena_);
                      live_ += key.arena_size();
                      make(key, make_segment(initial, initial.size(), nullptr));
                    })
      ->second;
}

bool CompactValueStore::put(std::string_view composite, std::string_view value) {
  bool fresh = false;
  char*& last = find_or_add(composite, value, fresh);
  if (!fresh) {
    assign(last, value);
    maybe_compact();
  }
  return fresh;
}

bool CompactValueStore::append(std::string_view composite, std::string_view more) {
  bool fresh = false;
  char*& last = find_or_add(composite, more, fresh);
  if (fresh) return true;
  Header h = header(last);
  // The last segment's room first, the rest into a new segment as large as the value so far.
  const std::size_t room = std::min(capacity(h) - h.size, more.size());
  if (room > 0) {
    std::memcpy(last + header_size(h) + h.size, more.data(), room);
    h.size += static_cast<std::uint32_t>(room);
    std::memcpy(last, &h, sizeof h);
    more.remove_prefix(room);
  }
  if (more.empty()) return false;
  std::size_t total = 0;  // of the value so far, up to kMaxSegment
  for (const char* s = last; total < kMaxSegment; s = previous(s)) {
    total += header(s).size;
    if (!linked(header(s))) break;
  }
  last = make_segment(more, std::max(more.size(), std::min(total, kMaxSegment)), last);
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

void CompactValueStore::release_segments(const char* last) {
  for (const char* s = last;;) {
    const Header h = header(s);
    const std::size_t n = header_size(h) + capacity(h);
    live_ -= n;
    garbage_ += n;
    if (!linked(h)) break;
    s = previous(s);
  }
}

void CompactValueStore::release(const ArenaKey& key, const char* last) {
  release_segments(last);
  live_ -= key.arena_size();
  garbage_ += key.arena_size();
}

void CompactValueStore::maybe_compact() {
  if (garbage_ < kMinGarbageToCompact || 2 * garbage_ < live_) return;
  EntryArena old;
  std::swap(old, arena_);  // the copies go into arena_; `old` holds the originals until the end
  decltype(index_) rebuilt;
  rebuilt.reserve(index_.size());
  live_ = 0;
  std::string scratch;
  for (const auto& [key, last] : index_) {
    ArenaKey copied(key.view(), arena_);
    live_ += copied.arena_size();
    const std::string_view value = value_of(last, scratch);
    rebuilt.emplace(copied, make_segment(value, value.size(), nullptr));
  }
  index_ = std::move(rebuilt);
  garbage_ = 0;
}

}  // namespace clink::state_internal
