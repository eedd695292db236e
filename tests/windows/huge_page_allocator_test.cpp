// The allocators the window engine keeps its large tables in (huge_page_allocator.hpp).
#include "clink/core/huge_page_allocator.hpp"

#include "clink/core/chunked_vector.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <absl/container/flat_hash_map.h>

namespace clink::test {
namespace {

// The VmFlags of the mapping holding p, from /proc/self/smaps ("" if not found).
std::string vm_flags_of(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = addr >= lo && addr < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

bool kernel_has_transparent_huge_pages() {
  return std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled");
}

TEST(HugePageAllocator, LargeBlocksAreAlignedHugePageMappings) {
  std::vector<std::int64_t, HugePageAllocator<std::int64_t>> v(3'000'000);  // 24 MB
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int64_t>(i) * 3;
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % huge_pages::kHugePageBytes, 0u);
  EXPECT_EQ(v[2'999'999], 8'999'997);
  if (kernel_has_transparent_huge_pages()) {
    EXPECT_NE(vm_flags_of(v.data()).find(" hg"), std::string::npos);
  }
  v.resize(10);  // shrinking keeps the mapping; releasing it unmaps
  v.shrink_to_fit();
  EXPECT_EQ(v[9], 27);
}

TEST(HugePageAllocator, SmallBlocksAndOverAlignedTypes) {
  struct alignas(64) Line {
    std::int64_t x;
  };
  std::vector<Line, HugePageAllocator<Line>> lines(5);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(lines.data()) % 64, 0u);
  std::vector<Line, HugePageAllocator<Line>> many(50'000);  // 3.2 MB: mapped
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(many.data()) % huge_pages::kHugePageBytes, 0u);
}

TEST(HugePageAllocator, HashMapGrowsThroughIt) {
  absl::flat_hash_map<std::int64_t, std::int64_t, absl::flat_hash_map<std::int64_t, std::int64_t>::hasher,
                      absl::flat_hash_map<std::int64_t, std::int64_t>::key_equal,
                      HugePageAllocator<std::pair<const std::int64_t, std::int64_t>>>
      m;
  for (std::int64_t k = 0; k < 300'000; ++k) m[k * 7919] = k;
  ASSERT_EQ(m.size(), 300'000u);
  for (std::int64_t k = 0; k < 300'000; ++k) ASSERT_EQ(m.at(k * 7919), k);
  m.clear();
  m.rehash(0);
  EXPECT_TRUE(m.empty());
}

TEST(HugePagePool, ReusesFreedBlocksOfTheSameSizeClass) {
  HugePagePool pool;
  void* a = pool.allocate(100);  // the 128-byte class
  void* b = pool.allocate(128);
  void* c = pool.allocate(129);  // the 256-byte class
  EXPECT_NE(a, b);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(c) % 64, 0u);
  pool.deallocate(a, 100);
  EXPECT_EQ(pool.allocate(65), a);  // same class: the freed block
  pool.deallocate(c, 129);
  EXPECT_NE(pool.allocate(128), c);  // another class: not the freed 256-byte block
  EXPECT_EQ(pool.allocate(256), c);
  void* big = pool.allocate(HugePagePool::kMaxPooled + 1);  // not pooled
  static_cast<char*>(big)[HugePagePool::kMaxPooled] = 1;
  pool.deallocate(big, HugePagePool::kMaxPooled + 1);
}

TEST(HugePagePool, SpansChunksAndKeepsContents) {
  HugePagePool pool;
  using Pair = std::pair<std::int64_t, std::int64_t>;
  using Vec = std::vector<Pair, HugePagePoolAllocator<Pair>>;
  std::vector<Vec> lists;
  for (int k = 0; k < 2000; ++k) lists.emplace_back(HugePagePoolAllocator<Pair>(&pool));
  // 2000 lists growing to 600 pairs each: ~19 MB of blocks, many 2 MiB chunks, each
  // growth freeing the previous block for another list.
  for (std::int64_t i = 0; i < 600; ++i)
    for (int k = 0; k < 2000; ++k) lists[k].emplace_back(i, i * 2000 + k);
  for (int k = 0; k < 2000; ++k) {
    ASSERT_EQ(lists[k].size(), 600u);
    for (std::int64_t i = 0; i < 600; ++i) ASSERT_EQ(lists[k][i], Pair(i, i * 2000 + k));
  }
  Vec moved = std::move(lists[7]);  // the pool moves with the storage
  EXPECT_EQ(moved.get_allocator().pool(), &pool);
  EXPECT_EQ(moved[599], Pair(599, 599 * 2000 + 7));
  lists[7] = Vec(HugePagePoolAllocator<Pair>(&pool));
  lists[7].emplace_back(1, 2);
  EXPECT_EQ(lists[7][0], Pair(1, 2));
  Vec plain;  // no pool: operator new
  plain.emplace_back(3, 4);
  EXPECT_EQ(plain.get_allocator().pool(), nullptr);
}

TEST(HugePageBlocks, ReleasedBlocksAreReusedBestFitAndSplit) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  if (huge_pages::cached_bytes() + 46 * kMiB > huge_pages::kMaxCachedBytes) GTEST_SKIP() << "cache full";
  // 46 MiB: a size no other test releases, so the best fit is this block.
  auto* a = static_cast<char*>(huge_pages::map(46 * kMiB));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % huge_pages::kHugePageBytes, 0u);
  a[0] = 1;
  a[46 * kMiB - 1] = 2;
  const std::size_t before = huge_pages::cached_bytes();
  huge_pages::unmap(a, 46 * kMiB);
  EXPECT_EQ(huge_pages::cached_bytes(), before + 46 * kMiB);
  EXPECT_EQ(huge_pages::map(46 * kMiB), a);  // the same pages: no fault, no zeroing
  EXPECT_EQ(huge_pages::cached_bytes(), before);
  huge_pages::unmap(a, 46 * kMiB);
  // A smaller request takes the front of it; the rest stays cached, 2 MiB aligned.
  EXPECT_EQ(huge_pages::map(44 * kMiB), a);
  EXPECT_EQ(huge_pages::cached_bytes(), before + 2 * kMiB);
  huge_pages::unmap(a, 44 * kMiB);
  EXPECT_EQ(huge_pages::cached_bytes(), before + 46 * kMiB);
}

TEST(HugePageBlocks, ReleasingTheCacheUnmapsEveryCachedBlock) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  auto* a = static_cast<char*>(huge_pages::map(4 * kMiB));
  a[0] = 1;
  huge_pages::unmap(a, 4 * kMiB);
  EXPECT_GE(huge_pages::cached_bytes(), 4 * kMiB);
  huge_pages::release_cached();
  EXPECT_EQ(huge_pages::cached_bytes(), 0u);
  auto* b = static_cast<char*>(huge_pages::map(4 * kMiB));  // a fresh mapping works as before
  b[4 * kMiB - 1] = 1;
  huge_pages::unmap(b, 4 * kMiB);
}

// Counts live instances, so the test sees every element destroyed exactly once.
struct alignas(64) Tracked {
  static inline int live = 0;
  explicit Tracked(std::int64_t v) : value(v), payload{v, v + 1} { ++live; }
  Tracked(Tracked&& o) noexcept : value(o.value), payload(std::move(o.payload)) { ++live; }
  Tracked& operator=(Tracked&& o) noexcept {
    value = o.value;
    payload = std::move(o.payload);
    return *this;
  }
  ~Tracked() { --live; }
  std::int64_t value;
  std::vector<std::int64_t> payload;
};

TEST(ChunkedVector, GrowsByChunksWithoutMovingFullChunks) {
  using V = ChunkedVector<Tracked>;
  const std::size_t n = 3 * V::kPerChunk + 5;  // the heap first chunk, then four full ones
  {
    V v;
    EXPECT_TRUE(v.empty());
    v.emplace_back(0);
    const Tracked* first = &v[0];
    for (std::size_t i = 1; i < V::kPerChunk; ++i) v.emplace_back(static_cast<std::int64_t>(i));
    const Tracked* chunk0 = &v[0];  // the first chunk is full now: it never moves again
    EXPECT_NE(chunk0, first);       // (it moved while small)
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(chunk0) % huge_pages::kHugePageBytes, 0u);
    for (std::size_t i = V::kPerChunk; i < n; ++i) v.emplace_back(static_cast<std::int64_t>(i));
    EXPECT_EQ(&v[0], chunk0);
    ASSERT_EQ(v.size(), n);
    EXPECT_EQ(Tracked::live, static_cast<int>(n));
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(v[i].value, static_cast<std::int64_t>(i));
      ASSERT_EQ(v[i].payload[1], static_cast<std::int64_t>(i) + 1);
    }
    V moved = std::move(v);
    EXPECT_EQ(moved.size(), n);
    EXPECT_EQ(v.size(), 0u);
    EXPECT_EQ(&moved[0], chunk0);
    V packed;
    packed.reserve(100);
    const Tracked* reserved = &packed.emplace_back(7);
    for (int i = 1; i < 100; ++i) packed.emplace_back(7 + i);
    EXPECT_EQ(&packed[0], reserved);  // reserve sized the first chunk
    packed.swap(moved);
    EXPECT_EQ(packed.size(), n);
    EXPECT_EQ(moved[99].value, 106);
    EXPECT_EQ(Tracked::live, static_cast<int>(n) + 100);
    moved.clear();
    EXPECT_EQ(Tracked::live, static_cast<int>(n));
    moved.emplace_back(1);
    EXPECT_EQ(moved[0].value, 1);
  }
  EXPECT_EQ(Tracked::live, 0);
}

}  // namespace
}  // namespace clink::test
