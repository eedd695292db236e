#pragma once
// A hash map for large tables looked up in software-pipelined loops (the window engine's
// key table): open addressing with linear probing, so a key lives at its hash position
// or just after it, and prefetch(key) loads exactly the cache lines a find will read.
//
// Why not absl::flat_hash_map here: its prefetch loads the control bytes and the first
// slot of the key's 16-slot probe group; the key's slot is anywhere in the group (eight
// cache lines for 32-byte slots), so the find after the prefetch still misses. Measured
// on the window benchmark: 55 % of the tumbling record loop waited on that load.
//
// Semantics follow the subset of std::unordered_map the engine uses: find, try_emplace,
// operator[], erase(key), iteration (slot order), size. Entries are {first, second}.
// Insertion may rehash (invalidating pointers and iterators); erase moves later entries
// back (backward-shift deletion, no tombstones), so it invalidates them too. Max load
// 3/4 (probe sequences stay within a line or two).
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <utility>

#include <absl/hash/hash.h>

#include "clink/core/prefetch.hpp"

namespace clink {

template <class K, class V, class Hash = absl::Hash<K>, class Eq = std::equal_to<K>,
          class Alloc = std::allocator<std::pair<const K, V>>>
class LinearProbeMap {
 public:
  struct Entry {
    K first;
    V second;
  };

  template <bool kConst>
  class Iter {
    using Map = std::conditional_t<kConst, const LinearProbeMap, LinearProbeMap>;
    using Ref = std::conditional_t<kConst, const Entry&, Entry&>;

   public:
    Iter() = default;
    Iter(Map* m, std::size_t i) : m_(m), i_(i) { skip(); }
    Ref operator*() const { return m_->slots_[i_]; }
    auto* operator->() const { return &m_->slots_[i_]; }
    Iter& operator++() {
      ++i_;
      skip();
      return *this;
    }
    bool operator==(const Iter& o) const { return i_ == o.i_; }

   private:
    void skip() {
      while (i_ < m_->capacity() && m_->ctrl_[i_] == kEmpty) ++i_;
    }
    Map* m_ = nullptr;
    std::size_t i_ = 0;
  };
  using iterator = Iter<false>;
  using const_iterator = Iter<true>;

  LinearProbeMap() = default;
  LinearProbeMap(const LinearProbeMap&) = delete;
  LinearProbeMap& operator=(const LinearProbeMap&) = delete;
  ~LinearProbeMap() { release(); }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::size_t capacity() const { return mask_ == 0 && !slots_ ? 0 : mask_ + 1; }

  iterator begin() { return iterator(this, 0); }
  iterator end() { return iterator(this, capacity()); }
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, capacity()); }

  // Starts loading the control byte and the slot at the key's hash position.
  void prefetch(const K& key) const {
    if (!slots_) return;
    const std::size_t i = home(Hash{}(key));
    clink::prefetch(&ctrl_[i]);
    clink::prefetch(&slots_[i]);
  }

  iterator find(const K& key) {
    const std::size_t i = locate(key);
    return i == kNone ? end() : iterator(this, i);
  }
  const_iterator find(const K& key) const {
    const std::size_t i = const_cast<LinearProbeMap*>(this)->locate(key);
    return i == kNone ? end() : const_iterator(this, i);
  }

  // Calls fn(entry) for every entry, in slot order: the iterators' loop, inline.
  template <class Fn>
  void for_each(Fn&& fn) {
    const std::size_t cap = capacity();
    for (std::size_t i = 0; i < cap; ++i)
      if (ctrl_[i] != kEmpty) fn(slots_[i]);
  }

  // The entry of key, or null: find without building iterators, whose constructors
  // skip empty slots (measured: a tumbling window's record loop 18 % faster).
  Entry* find_entry(const K& key) {
    const std::size_t i = locate(key);
    return i == kNone ? nullptr : &slots_[i];
  }

  // The entry of key, value-initialised if absent; second: whether it was inserted.
  // Only an insertion rehashes (a key found moves nothing).
  std::pair<iterator, bool> try_emplace(const K& key) {
    const std::size_t h = Hash{}(key);
    const std::uint8_t t = tag(h);
    std::size_t i = 0;
    if (slots_) {
      for (i = home(h);; i = (i + 1) & mask_) {
        if (ctrl_[i] == kEmpty) break;
        if (ctrl_[i] == t && Eq{}(slots_[i].first, key)) return {iterator(this, i), false};
      }
    }
    if (4 * (size_ + 1) > 3 * capacity()) {
      grow();
      for (i = home(h); ctrl_[i] != kEmpty;) i = (i + 1) & mask_;
    }
    new (&slots_[i]) Entry{key, V{}};
    ctrl_[i] = t;
    ++size_;
    return {iterator(this, i), true};
  }
  V& operator[](const K& key) { return try_emplace(key).first->second; }

  std::size_t erase(const K& key) {
    std::size_t i = locate(key);
    if (i == kNone) return 0;
    slots_[i].~Entry();
    ctrl_[i] = kEmpty;
    --size_;
    // Backward shift: move each following entry of the run into the hole if the hole
    // lies on its probe path (between its home and where it is), so finds need no
    // tombstones.
    for (std::size_t j = (i + 1) & mask_; ctrl_[j] != kEmpty; j = (j + 1) & mask_) {
      const std::size_t h = home(Hash{}(slots_[j].first));
      if (((j - h) & mask_) >= ((j - i) & mask_)) {
        new (&slots_[i]) Entry(std::move(slots_[j]));
        ctrl_[i] = ctrl_[j];
        slots_[j].~Entry();
        ctrl_[j] = kEmpty;
        i = j;
      }
    }
    return 1;
  }

  void clear() {
    release();
    size_ = 0;
  }

 private:
  static constexpr std::uint8_t kEmpty = 0;
  static constexpr std::size_t kNone = ~std::size_t{0};
  using EntryAlloc = typename std::allocator_traits<Alloc>::template rebind_alloc<Entry>;
  using CtrlAlloc = typename std::allocator_traits<Alloc>::template rebind_alloc<std::uint8_t>;

  // The top bits choose the position (the low ones feed the tag): a table of 2^b slots
  // uses hash bits 63..64-b.
  std::size_t home(std::size_t h) const { return (h >> shift_) & mask_; }
  static std::uint8_t tag(std::size_t h) { return static_cast<std::uint8_t>(0x80 | (h & 0x7f)); }

  std::size_t locate(const K& key) {
    if (size_ == 0) return kNone;
    const std::size_t h = Hash{}(key);
    const std::uint8_t t = tag(h);
    for (std::size_t i = home(h);; i = (i + 1) & mask_) {
      if (ctrl_[i] == kEmpty) return kNone;
      if (ctrl_[i] == t && Eq{}(slots_[i].first, key)) return i;
    }
  }

  void grow() {
    const std::size_t old_cap = capacity();
    Entry* old_slots = slots_;
    std::uint8_t* old_ctrl = ctrl_;
    const std::size_t cap = old_cap == 0 ? 16 : 2 * old_cap;
    slots_ = EntryAlloc().allocate(cap);
    ctrl_ = CtrlAlloc().allocate(cap);
    std::fill(ctrl_, ctrl_ + cap, kEmpty);
    mask_ = cap - 1;
    shift_ = 64 - std::countr_zero(cap);
    for (std::size_t j = 0; j < old_cap; ++j) {
      if (old_ctrl[j] == kEmpty) continue;
      std::size_t i = home(Hash{}(old_slots[j].first));
      while (ctrl_[i] != kEmpty) i = (i + 1) & mask_;
      new (&slots_[i]) Entry(std::move(old_slots[j]));
      ctrl_[i] = old_ctrl[j];
      old_slots[j].~Entry();
    }
    if (old_slots) {
      EntryAlloc().deallocate(old_slots, old_cap);
      CtrlAlloc().deallocate(old_ctrl, old_cap);
    }
  }

  void release() {
    if (!slots_) return;
    const std::size_t cap = capacity();
    for (std::size_t j = 0; j < cap; ++j)
      if (ctrl_[j] != kEmpty) slots_[j].~Entry();
    EntryAlloc().deallocate(slots_, cap);
    CtrlAlloc().deallocate(ctrl_, cap);
    slots_ = nullptr;
    ctrl_ = nullptr;
    mask_ = 0;
  }

  Entry* slots_ = nullptr;
  std::uint8_t* ctrl_ = nullptr;
  std::size_t mask_ = 0;
  int shift_ = 64;
  std::size_t size_ = 0;
};

}  // namespace clink
