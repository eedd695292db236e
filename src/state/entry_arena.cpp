#include "entry_arena.hpp"

#include <algorithm>
#include <cstring>

namespace clink::state_internal {
namespace {

constexpr std::size_t kMinChunk = 4 * 1024;
constexpr std::size_t kMaxChunk = 64 * 1024;  // below malloc's mmap threshold; little tail waste

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

ArenaKey::ArenaKey(std::string_view composite, EntryArena& arena) : inline_{}, tag_(0) {
  if (composite.size() <= kInline) {
    std::memcpy(inline_, composite.data(), composite.size());
    tag_ = static_cast<unsigned char>(composite.size());
    return;
  }
  char* blob = arena.allocate(varint_size(composite.size()) + composite.size());
  std::memcpy(write_varint(composite.size(), blob), composite.data(), composite.size());
  blob_ = blob;
  tag_ = kLong;
}

std::size_t ArenaKey::arena_size() const {
  if (tag_ != kLong) return 0;
  const std::size_t n = view().size();
  return varint_size(n) + n;
}

}  // namespace clink::state_internal
