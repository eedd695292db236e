#include "lookup_cache.hpp"

namespace clink::sql {

bool LookupCache::expired(const Node& n, std::int64_t now) const {
  if (options_.expire_after_write_ms && now - n.written >= *options_.expire_after_write_ms) return true;
  if (options_.expire_after_access_ms && now - n.accessed >= *options_.expire_after_access_ms) return true;
  return false;
}

void LookupCache::erase(List::iterator it) {
  map_.erase(std::string_view(it->key));
  lru_.erase(it);
}

const LookupRows* LookupCache::get(std::string_view key, std::int64_t now) {
  auto found = map_.find(key);
  if (found == map_.end()) {
    ++misses_;
    return nullptr;
  }
  List::iterator it = found->second;
  if (expired(*it, now)) {
    erase(it);
    ++misses_;
    return nullptr;
  }
  it->accessed = now;
  if (it != lru_.begin()) lru_.splice(lru_.begin(), lru_, it);
  ++hits_;
  return &it->rows;
}

void LookupCache::put(std::string_view key, const LookupRows& rows, std::int64_t now) {
  if (rows.count == 0 && !options_.cache_missing_key) return;
  if (auto found = map_.find(key); found != map_.end()) erase(found->second);
  lru_.push_front(Node{std::string(key), rows, now, now});
  map_.emplace(std::string_view(lru_.front().key), lru_.begin());
  // Evict past the size bound, and expired entries from the cold end (so entries nobody
  // reads again do not pile up).
  while (!lru_.empty() &&
         ((options_.max_rows && static_cast<std::int64_t>(lru_.size()) > *options_.max_rows) ||
          (lru_.size() > 1 && expired(lru_.back(), now))))
    erase(std::prev(lru_.end()));
}

}  // namespace clink::sql
