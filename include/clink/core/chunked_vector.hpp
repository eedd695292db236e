#pragma once
// A vector of large, long-lived elements read at random (a window operator's per-key
// side data) that grows by adding 2 MiB huge-page chunks instead of relocating: element
// i is in chunk i / kPerChunk. A std::vector on HugePageAllocator moves every element
// into a fresh block at each doubling, and the kernel zeroes that block's huge pages on
// first touch, so the table's memory is zeroed about twice and copied once (7 % of a
// sliding window's time at a hundred thousand keys). Here each element's memory is
// zeroed once and never moved; the first chunk starts small on the heap (an operator
// with a few keys maps no huge page) and doubles until it is a full chunk.
//
// Indexing costs one load of the chunk's pointer (a short array, in cache) and a
// division by a constant (a multiply). Not thread-safe: one owner.
#include <algorithm>
#include <cstddef>
#include <new>
#include <utility>
#include <vector>

#include "clink/core/huge_page_allocator.hpp"

namespace clink {

template <class T>
class ChunkedVector {
 public:
  static constexpr std::size_t kChunkBytes = huge_pages::kHugePageBytes;
  static_assert(sizeof(T) <= kChunkBytes);
  static constexpr std::size_t kPerChunk = kChunkBytes / sizeof(T);

  ChunkedVector() = default;
  ChunkedVector(const ChunkedVector&) = delete;
  ChunkedVector& operator=(const ChunkedVector&) = delete;
  ChunkedVector(ChunkedVector&& o) noexcept { swap(o); }
  ChunkedVector& operator=(ChunkedVector&& o) noexcept {
    ChunkedVector(std::move(o)).swap(*this);
    return *this;
  }
  ~ChunkedVector() { release(); }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](std::size_t i) { return chunks_[i / kPerChunk][i % kPerChunk]; }
  const T& operator[](std::size_t i) const { return chunks_[i / kPerChunk][i % kPerChunk]; }

  template <class... Args>
  T& emplace_back(Args&&... args) {
    if (size_ == capacity_) [[unlikely]] grow();
    T* slot = &(*this)[size_];
    new (slot) T(std::forward<Args>(args)...);
    ++size_;
    return *slot;
  }
  void push_back(T&& v) { emplace_back(std::move(v)); }
  // Sizes the first chunk for n elements (up to a full chunk) so it does not double
  // its way there.
  void reserve(std::size_t n) {
    if (capacity_ < kPerChunk && n > capacity_) resize_first(std::min(n, kPerChunk));
  }
  void clear() {
    release();
    chunks_.clear();
    size_ = capacity_ = 0;
  }
  void swap(ChunkedVector& o) noexcept {
    chunks_.swap(o.chunks_);
    std::swap(size_, o.size_);
    std::swap(capacity_, o.capacity_);
  }

 private:
  static constexpr std::size_t kFirstCapacity = 16;

  // A chunk of n elements: a full one on huge pages, a smaller first one on the heap.
  static T* allocate(std::size_t n) {
    if (n == kPerChunk) return static_cast<T*>(huge_pages::map(kChunkBytes));
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{alignof(T)}));
  }
  static void deallocate(T* p, std::size_t n) {
    if (n == kPerChunk) huge_pages::unmap(p, kChunkBytes);
    else ::operator delete(p, std::align_val_t{alignof(T)});
  }

  void grow() {
    if (capacity_ < kPerChunk) resize_first(std::min(capacity_ == 0 ? kFirstCapacity : 2 * capacity_, kPerChunk));
    else {
      chunks_.push_back(allocate(kPerChunk));
      capacity_ += kPerChunk;
    }
  }
  // The first (only) chunk moved to a block of n elements.
  void resize_first(std::size_t n) {
    T* grown = allocate(n);
    if (!chunks_.empty()) {
      T* old = chunks_[0];
      for (std::size_t i = 0; i < size_; ++i) {
        new (grown + i) T(std::move(old[i]));
        old[i].~T();
      }
      deallocate(old, capacity_);
      chunks_[0] = grown;
    } else {
      chunks_.push_back(grown);
    }
    capacity_ = n;
  }
  void release() {
    for (std::size_t i = 0; i < size_; ++i) (*this)[i].~T();
    const std::size_t first = std::min(capacity_, kPerChunk);
    for (std::size_t c = 0; c < chunks_.size(); ++c) deallocate(chunks_[c], c == 0 ? first : kPerChunk);
  }

  std::vector<T*> chunks_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;  // the first chunk's while it is the only one and small
};

}  // namespace clink
