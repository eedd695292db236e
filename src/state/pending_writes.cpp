#include "pending_writes.hpp"

#include <algorithm>
#include <functional>

#include "clink/core/error.hpp"

namespace clink::state_internal {

namespace {

std::uint32_t hash_of(std::uint32_t cf_id, std::string_view bytes) {
  const std::uint64_t h = std::hash<std::string_view>{}(bytes) ^ (std::uint64_t{cf_id} * 0x9E3779B97F4A7C15ull);
  return static_cast<std::uint32_t>(h ^ (h >> 32));
}

void check(const rocksdb::Status& s, const char* what) {
  if (!s.ok()) throw ClinkError(std::string("rocksdb state backend: ") + what + ": " + s.ToString());
}

}  // namespace

// A slot holds the hash (high half), so that a probe compares an entry's bytes only when
// the hashes match: most reads find nothing pending and touch no entry.
std::uint64_t* PendingWrites::slot(Index& index, bool prefix, std::uint32_t hash, std::uint32_t cf_id,
                                   std::string_view bytes) {
  if ((index.used + 1) * 2 > index.slots.size()) grow(index);
  const std::size_t mask = index.slots.size() - 1;
  for (std::size_t pos = hash & mask;; pos = (pos + 1) & mask) {
    std::uint64_t& s = index.slots[pos];
    if (s == 0 || matches(s, prefix, hash, cf_id, bytes)) return &s;
  }
}

std::uint32_t PendingWrites::latest(const Index& index, bool prefix, std::uint32_t hash, std::uint32_t cf_id,
                                    std::string_view bytes) const {
  if (index.used == 0) return kNone;
  const std::size_t mask = index.slots.size() - 1;
  for (std::size_t pos = hash & mask;; pos = (pos + 1) & mask) {
    const std::uint64_t s = index.slots[pos];
    if (s == 0) return kNone;
    if (matches(s, prefix, hash, cf_id, bytes)) return entry_of(s);
  }
}

bool PendingWrites::matches(std::uint64_t slot, bool prefix, std::uint32_t hash, std::uint32_t cf_id,
                            std::string_view bytes) const {
  if (static_cast<std::uint32_t>(slot >> 32) != hash) return false;
  const Entry& e = entries_[entry_of(slot)];
  return e.cf_id == cf_id && key_of(e).substr(0, prefix ? e.prefix_size : e.key_size) == bytes;
}

void PendingWrites::grow(Index& index) {
  std::vector<std::uint64_t> old = std::move(index.slots);
  index.slots.assign(std::max<std::size_t>(64, old.size() * 2), 0);
  const std::size_t mask = index.slots.size() - 1;
  for (std::uint64_t s : old) {
    if (s == 0) continue;
    std::size_t pos = (s >> 32) & mask;
    while (index.slots[pos] != 0) pos = (pos + 1) & mask;
    index.slots[pos] = s;
  }
}

void PendingWrites::add(Op op, rocksdb::ColumnFamilyHandle* cf, std::string_view key, std::string_view value,
                        std::size_t prefix_size) {
  if (bytes_.size() + key.size() + value.size() >= kNone) throw ClinkError("rocksdb state backend: write too large");
  const auto index = static_cast<std::uint32_t>(entries_.size());
  Entry& e = entries_.emplace_back();
  e.cf = cf;
  e.cf_id = cf->GetID();
  e.begin = static_cast<std::uint32_t>(bytes_.size());
  e.key_size = static_cast<std::uint32_t>(key.size());
  e.value_size = static_cast<std::uint32_t>(value.size());
  e.prefix_size = static_cast<std::uint32_t>(prefix_size);
  e.op = op;
  const std::uint32_t cf_id = e.cf_id, key_hash = hash_of(cf_id, key);
  // `key` and `value` are the caller's (never in bytes_): the probes below may compare
  // them with the entries' bytes after this append.
  bytes_.append(key);
  bytes_.append(value);
  std::uint64_t* s = slot(by_key_, false, key_hash, cf_id, key);
  if (*s == 0) ++by_key_.used;
  else entries_[index].prev_of_key = entry_of(*s);
  *s = slot_value(key_hash, index);
  if (prefix_size == 0) return;
  const std::string_view prefix = key.substr(0, prefix_size);
  const std::uint32_t prefix_hash = hash_of(cf_id, prefix);
  std::uint64_t* p = slot(by_prefix_, true, prefix_hash, cf_id, prefix);
  if (*p == 0) ++by_prefix_.used;
  else entries_[index].prev_of_prefix = entry_of(*p);
  *p = slot_value(prefix_hash, index);
}

void PendingWrites::clear() {
  bytes_.clear();
  entries_.clear();
  std::fill(by_key_.slots.begin(), by_key_.slots.end(), 0);
  std::fill(by_prefix_.slots.begin(), by_prefix_.slots.end(), 0);
  by_key_.used = by_prefix_.used = 0;
}

PendingWrites::Found PendingWrites::find(rocksdb::ColumnFamilyHandle* cf, std::string_view key,
                                         std::string& out) const {
  if (entries_.empty()) return Found::kNothing;
  const std::uint32_t cf_id = cf->GetID();
  std::uint32_t i = latest(by_key_, false, hash_of(cf_id, key), cf_id, key);
  if (i == kNone) return Found::kNothing;
  // Newest first: the merges since the last put or delete, then that put or delete.
  chain_.clear();
  while (i != kNone && entries_[i].op == Op::kMerge) {
    chain_.push_back(i);
    i = entries_[i].prev_of_key;
  }
  out.clear();
  if (i != kNone && entries_[i].op == Op::kPut) out.assign(value_of(entries_[i]));
  for (auto it = chain_.rbegin(); it != chain_.rend(); ++it) out.append(value_of(entries_[*it]));
  if (i == kNone) return Found::kAppend;
  if (entries_[i].op == Op::kDelete && chain_.empty()) return Found::kDeleted;
  return Found::kValue;
}

void PendingWrites::map_writes(rocksdb::ColumnFamilyHandle* cf, std::string_view prefix, MapWrites& out) const {
  out.bytes.clear();
  out.items.clear();
  if (entries_.empty()) return;
  const std::uint32_t cf_id = cf->GetID();
  chain_.clear();
  for (std::uint32_t i = latest(by_prefix_, true, hash_of(cf_id, prefix), cf_id, prefix); i != kNone;
       i = entries_[i].prev_of_prefix)
    chain_.push_back(i);
  if (chain_.empty()) return;
  auto user_key = [&](std::uint32_t i) { return key_of(entries_[i]).substr(entries_[i].prefix_size); };
  // By user key, the newest write of each first.
  std::sort(chain_.begin(), chain_.end(), [&](std::uint32_t a, std::uint32_t b) {
    const int c = user_key(a).compare(user_key(b));
    return c != 0 ? c < 0 : a > b;
  });
  for (std::size_t j = 0; j < chain_.size(); ++j) {
    const std::uint32_t i = chain_[j];
    if (j > 0 && user_key(chain_[j - 1]) == user_key(i)) continue;
    const Entry& e = entries_[i];
    MapWrites::Item item{static_cast<std::uint32_t>(out.bytes.size()), static_cast<std::uint32_t>(user_key(i).size()),
                         0, 0, e.op == Op::kDelete};
    out.bytes.append(user_key(i));
    if (e.op == Op::kPut) {
      item.value_begin = static_cast<std::uint32_t>(out.bytes.size());
      item.value_size = e.value_size;
      out.bytes.append(value_of(e));
    }
    out.items.push_back(item);
  }
}

void PendingWrites::commit(rocksdb::DB& db, const rocksdb::WriteOptions& options) {
  if (entries_.empty()) return;
  order_.resize(entries_.size());
  for (std::uint32_t i = 0; i < order_.size(); ++i) order_[i] = i;
  std::sort(order_.begin(), order_.end(), [&](std::uint32_t a, std::uint32_t b) {
    const Entry &x = entries_[a], &y = entries_[b];
    if (x.cf_id != y.cf_id) return x.cf_id < y.cf_id;
    const int c = key_of(x).compare(key_of(y));
    return c != 0 ? c < 0 : a < b;  // one key's writes in the order made
  });
  // A key's writes before its last put or delete are overwritten: only that one and the
  // merges after it reach the memtable (a PTF puts a value and deletes it a watermark
  // later, often within one commit).
  batch_.Clear();
  std::size_t from = 0;
  for (std::size_t j = 0; j < order_.size(); ++j) {
    const Entry& e = entries_[order_[j]];
    if (j == 0 || e.prev_of_key == kNone) from = j;  // a key's first (oldest) write
    if (e.op != Op::kMerge) from = j;
    const bool last = j + 1 == order_.size() || entries_[order_[j + 1]].prev_of_key == kNone;
    if (!last) continue;
    for (std::size_t w = from; w <= j; ++w) write_to_batch(entries_[order_[w]]);
  }
  clear();
  check(db.Write(options, &batch_), "write");
}

void PendingWrites::write_to_batch(const Entry& e) {
  const rocksdb::Slice k(bytes_.data() + e.begin, e.key_size), v(bytes_.data() + e.begin + e.key_size, e.value_size);
  switch (e.op) {
    case Op::kPut: check(batch_.Put(e.cf, k, v), "put"); break;
    case Op::kMerge: check(batch_.Merge(e.cf, k, v), "merge"); break;
    case Op::kDelete: check(batch_.Delete(e.cf, k), "delete"); break;
  }
}

}  // namespace clink::state_internal
