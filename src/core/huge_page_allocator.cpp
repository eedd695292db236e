#include "clink/core/huge_page_allocator.hpp"

#include <sys/mman.h>

#include <iterator>
#include <map>
#include <mutex>

namespace clink::huge_pages {

namespace {

// Released blocks by size (bytes, a multiple of 2 MiB), for reuse. Their pages stay
// resident and marked for huge pages: taking one costs no fault and no zeroing.
struct BlockCache {
  std::mutex mu;
  std::multimap<std::size_t, void*> blocks;
  std::size_t bytes = 0;
};

BlockCache& cache() {
  static auto* c = new BlockCache;  // never destroyed: blocks may be released at exit
  return *c;
}

// Maps `bytes` starting on a 2 MiB boundary: transparent huge pages only back aligned
// 2 MiB ranges, so one extra huge page is mapped and the unaligned head and tail are
// unmapped again.
void* map_fresh(std::size_t bytes) {
  void* raw = ::mmap(nullptr, bytes + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const auto aligned = (start + kHugePageBytes - 1) & ~std::uintptr_t{kHugePageBytes - 1};
  if (aligned != start) ::munmap(raw, aligned - start);
  const std::uintptr_t tail = start + bytes + kHugePageBytes - (aligned + bytes);
  if (tail != 0) ::munmap(reinterpret_cast<void*>(aligned + bytes), tail);
#ifdef MADV_HUGEPAGE
  ::madvise(reinterpret_cast<void*>(aligned), bytes, MADV_HUGEPAGE);  // failing: ordinary pages
#endif
  return reinterpret_cast<void*>(aligned);
}

}  // namespace

void* map(std::size_t bytes) {
  BlockCache& c = cache();
  {
    std::lock_guard lock(c.mu);
    auto it = c.blocks.lower_bound(bytes);  // the smallest block that fits
    if (it != c.blocks.end()) {
      auto [size, p] = *it;
      c.blocks.erase(it);
      c.bytes -= size;
      if (size > bytes) {  // the rest stays cached (still 2 MiB aligned)
        c.blocks.emplace(size - bytes, static_cast<char*>(p) + bytes);
        c.bytes += size - bytes;
      }
      return p;
    }
  }
  return map_fresh(bytes);
}

void unmap(void* p, std::size_t bytes) {
  BlockCache& c = cache();
  {
    std::lock_guard lock(c.mu);
    if (c.bytes + bytes <= kMaxCachedBytes) {
      c.blocks.emplace(bytes, p);
      c.bytes += bytes;
      return;
    }
  }
  ::munmap(p, bytes);
}

void release_cached() {
  std::multimap<std::size_t, void*> blocks;
  {
    BlockCache& c = cache();
    std::lock_guard lock(c.mu);
    blocks.swap(c.blocks);
    c.bytes = 0;
  }
  for (const auto& [bytes, p] : blocks) ::munmap(p, bytes);
}

std::size_t cached_bytes() {
  BlockCache& c = cache();
  std::lock_guard lock(c.mu);
  return c.bytes;
}

}  // namespace clink::huge_pages
