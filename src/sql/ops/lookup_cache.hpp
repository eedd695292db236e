#pragma once
// Flink's DefaultLookupCache ('lookup.cache' = 'PARTIAL'): a lookup join's rows per key,
// so a key looked up again is answered without asking the table. Entries are counted by
// key ('lookup.partial-cache.max-rows' is Guava's maximumSize, as in Flink) and expire a
// duration after they were written or last read (Guava's expireAfterWrite /
// expireAfterAccess, on the op's processing-time clock); an empty result is cached only
// with 'lookup.partial-cache.cache-missing-key'. Beyond max-rows the least recently read
// entry goes. A hit allocates nothing.
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <absl/container/flat_hash_map.h>

#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/spec/lookup_join_spec.hpp"

namespace clink::sql {

// The rows of one key: `count` rows of `batch` from `begin` (shared by the keys one
// lookup answered, and alive while a cache entry or a waiting row holds it).
struct LookupRows {
  std::shared_ptr<const ColumnBatch> batch;
  std::uint32_t begin = 0;
  std::uint32_t count = 0;
};

class LookupCache {
 public:
  explicit LookupCache(const LookupOptions& options) : options_(options) {}

  // The rows cached for `key` (refreshing its access), or null when absent or expired.
  // Valid until the next put().
  const LookupRows* get(std::string_view key, std::int64_t now);
  // Caches `rows` for `key` (an empty result only with cache-missing-key).
  void put(std::string_view key, const LookupRows& rows, std::int64_t now);

  std::size_t size() const { return map_.size(); }
  std::int64_t hits() const { return hits_; }
  std::int64_t misses() const { return misses_; }

 private:
  struct Node {
    std::string key;
    LookupRows rows;
    std::int64_t written = 0;
    std::int64_t accessed = 0;
  };
  using List = std::list<Node>;
  bool expired(const Node& n, std::int64_t now) const;
  void erase(List::iterator it);

  LookupOptions options_;
  List lru_;  // most recently read first
  absl::flat_hash_map<std::string_view, List::iterator> map_;  // keys point into the nodes
  std::int64_t hits_ = 0;
  std::int64_t misses_ = 0;
};

}  // namespace clink::sql
