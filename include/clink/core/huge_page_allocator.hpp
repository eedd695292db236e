#pragma once
// An allocator for large, long-lived tables read at random (a window operator's key
// table, its per-key side data, its pane storage): blocks of 2 MiB and more are mapped
// directly and marked MADV_HUGEPAGE, so the kernel backs them with transparent huge
// pages. A hundred thousand keys' state spread over 4 KiB pages misses the TLB at almost
// every access (its few thousand entries cover a few MiB); on 2 MiB pages the same
// tables need a handful of entries. Hosts with transparent huge pages in `madvise` mode
// (the Debian default) only back regions that ask for them, hence the explicit madvise.
//
// Where huge pages are unavailable (THP disabled or `never`, a kernel without them) the
// madvise fails and the block keeps ordinary pages: nothing else changes. Smaller blocks
// go to operator new. A failed mmap is out of memory: std::bad_alloc.
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace clink {

namespace huge_pages {

inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

inline std::size_t round_up(std::size_t bytes) { return (bytes + kHugePageBytes - 1) & ~(kHugePageBytes - 1); }

// A block of `bytes` (a multiple of 2 MiB) starting on a 2 MiB boundary, marked for
// transparent huge pages. Blocks released before are reused first (best fit, split):
// a fresh mapping costs a page fault and the kernel's zeroing of every huge page on
// first touch, and a growing table releases its old block just as the next table (or
// its own side vector, or a pane pool's next chunk) needs one. Thread-safe.
void* map(std::size_t bytes);
// Releases a block from map (or a part of one, at a 2 MiB boundary): kept for reuse up
// to kMaxCachedBytes in all, unmapped past that.
void unmap(void* p, std::size_t bytes);
inline constexpr std::size_t kMaxCachedBytes = std::size_t{256} << 20;
// What the cache holds now (tests).
std::size_t cached_bytes();
// Unmaps every cached block: when a job's tasks are gone (a worker or a shell lives on
// and would keep up to kMaxCachedBytes of huge pages resident otherwise).
void release_cached();

}  // namespace huge_pages

// A standard allocator (stateless: all instances are equal) for containers that hold
// large tables: vectors, absl::flat_hash_map. Small blocks cost what operator new costs.
template <class T>
class HugePageAllocator {
 public:
  using value_type = T;

  HugePageAllocator() noexcept = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}  // NOLINT: rebinding is implicit

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes >= huge_pages::kHugePageBytes) return static_cast<T*>(huge_pages::map(huge_pages::round_up(bytes)));
    if constexpr (alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__)
      return static_cast<T*>(::operator new(bytes, std::align_val_t{alignof(T)}));
    else
      return static_cast<T*>(::operator new(bytes));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    const std::size_t bytes = n * sizeof(T);
    if (bytes >= huge_pages::kHugePageBytes) {
      huge_pages::unmap(p, huge_pages::round_up(bytes));
      return;
    }
    if constexpr (alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__)
      ::operator delete(p, std::align_val_t{alignof(T)});
    else
      ::operator delete(p);
  }

  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
};

// Many small blocks on huge pages: a window operator's per-key pane lists (a hundred
// thousand vectors of a few hundred bytes to a few KiB, read at random by every
// firing). Blocks are carved from 2 MiB-aligned huge-page chunks, one free list per
// power-of-two size class; a freed block is reused by the next request of its class
// and the chunks are unmapped when the pool is destroyed (its owner's state lives as
// long). Requests above kMaxPooled go to HugePageAllocator. Not thread-safe: one owner.
class HugePagePool {
 public:
  static constexpr std::size_t kMinPooled = 64, kMaxPooled = std::size_t{64} << 10;

  HugePagePool() = default;
  HugePagePool(const HugePagePool&) = delete;
  HugePagePool& operator=(const HugePagePool&) = delete;
  ~HugePagePool() {
    for (auto [p, bytes] : chunks_) huge_pages::unmap(p, bytes);
  }

  void* allocate(std::size_t bytes) {
    if (bytes > kMaxPooled) return HugePageAllocator<Line>().allocate(lines(bytes));
    const std::size_t c = size_class(bytes);
    if (FreeBlock* b = free_[c]) {
      free_[c] = b->next;
      return b;
    }
    const std::size_t size = kMinPooled << c;
    if (static_cast<std::size_t>(end_ - next_) < size) {
      const std::size_t chunk = huge_pages::kHugePageBytes;
      next_ = static_cast<char*>(huge_pages::map(chunk));
      end_ = next_ + chunk;
      chunks_.emplace_back(next_, chunk);
    }
    void* p = next_;
    next_ += size;
    return p;
  }
  void deallocate(void* p, std::size_t bytes) noexcept {
    if (bytes > kMaxPooled) {
      HugePageAllocator<Line>().deallocate(static_cast<Line*>(p), lines(bytes));
      return;
    }
    const std::size_t c = size_class(bytes);
    free_[c] = new (p) FreeBlock{free_[c]};
  }

 private:
  struct FreeBlock {
    FreeBlock* next;
  };
  static constexpr std::size_t kClasses = 11;  // 64 B .. 64 KiB
  static std::size_t size_class(std::size_t bytes) {
    return bytes <= kMinPooled ? 0 : static_cast<std::size_t>(std::bit_width((bytes - 1) / kMinPooled));
  }
  struct alignas(kMinPooled) Line {  // unpooled blocks keep the pooled ones' alignment
    char bytes[kMinPooled];
  };
  static std::size_t lines(std::size_t bytes) { return (bytes + kMinPooled - 1) / kMinPooled; }

  std::array<FreeBlock*, kClasses> free_{};
  char* next_ = nullptr;
  char* end_ = nullptr;
  std::vector<std::pair<void*, std::size_t>> chunks_;
};

// A standard allocator drawing from a HugePagePool (null: operator new). Containers
// using it move their pool with their storage (propagate on move and swap).
template <class T>
class HugePagePoolAllocator {
 public:
  using value_type = T;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  using propagate_on_container_copy_assignment = std::true_type;

  HugePagePoolAllocator() noexcept = default;
  explicit HugePagePoolAllocator(HugePagePool* pool) noexcept : pool_(pool) {}
  template <class U>
  HugePagePoolAllocator(const HugePagePoolAllocator<U>& o) noexcept : pool_(o.pool()) {}  // NOLINT: rebinding

  T* allocate(std::size_t n) {
    static_assert(alignof(T) <= HugePagePool::kMinPooled, "pooled blocks are aligned to 64 bytes");
    if (!pool_) return std::allocator<T>().allocate(n);
    return static_cast<T*>(pool_->allocate(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (!pool_) std::allocator<T>().deallocate(p, n);
    else pool_->deallocate(p, n * sizeof(T));
  }
  HugePagePool* pool() const noexcept { return pool_; }

  template <class U>
  bool operator==(const HugePagePoolAllocator<U>& o) const noexcept {
    return pool_ == o.pool();
  }

 private:
  HugePagePool* pool_ = nullptr;
};

}  // namespace clink
