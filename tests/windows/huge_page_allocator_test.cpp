// The allocators the window engine keeps its large tables in (huge_page_allocator.hpp).
#include "clink/core/huge_page_allocator.hpp"

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

}  // namespace
}  // namespace clink::test
