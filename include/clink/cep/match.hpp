#pragma once
// What a match is. Match<T>: the events of a match per pattern name, each list in
// event order (Flink's Map<String, List<T>>; what select / flat_select / process
// receive, and what MATCH_RECOGNIZE measures are computed over). MatchView<T>: the same
// match as it sits in the shared buffer, in event order, before it is released.
//
// A Match<T> is a view, not a copy: its events are the ones stored in the shared buffer,
// valid while the function it is passed to runs (copy what you keep, or take to_map()).
// The operator builds it once per match into reused storage (no allocation and no copy
// of an event per match); names are resolved against the compiled pattern's names.
#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "clink/cep/shared_buffer.hpp"

namespace clink::cep {

template <class T>
class MatchView {
 public:
  MatchView(const std::vector<std::string>* pages, const SharedBuffer<T>* buffer, const std::vector<MatchEntry>* path)
      : pages_(pages), buffer_(buffer), path_(path) {}

  // The taken events in event order, each with its pattern name.
  std::size_t size() const { return path_->size(); }
  bool empty() const { return path_->empty(); }
  const std::string& name(std::size_t i) const { return (*pages_)[static_cast<std::size_t>((*path_)[i].page)]; }
  // The pattern name as an index into the compiled NFA's names.
  std::int32_t page(std::size_t i) const { return (*path_)[i].page; }
  std::size_t page_count() const { return pages_->size(); }
  const std::vector<std::string>& pages() const { return *pages_; }
  const T& event(std::size_t i) const { return buffer_->event((*path_)[i].event); }
  EventTime timestamp(std::size_t i) const { return buffer_->event_id((*path_)[i].event).ts; }

  std::map<std::string, std::vector<T>> to_map() const {
    std::map<std::string, std::vector<T>> m;
    for (std::size_t i = 0; i < size(); ++i) m[name(i)].push_back(event(i));
    return m;
  }

 private:
  const std::vector<std::string>* pages_;
  const SharedBuffer<T>* buffer_;
  const std::vector<MatchEntry>* path_;
};

// The events one pattern name took, oldest first: a read-only random-access range of T.
template <class T>
class MatchEvents {
 public:
  class iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = const T*;
    using reference = const T&;
    iterator() = default;
    explicit iterator(const T* const* p) : p_(p) {}
    const T& operator*() const { return **p_; }
    const T* operator->() const { return *p_; }
    const T& operator[](difference_type i) const { return *p_[i]; }
    iterator& operator++() { return ++p_, *this; }
    iterator operator++(int) { return iterator(p_++); }
    iterator& operator--() { return --p_, *this; }
    iterator operator--(int) { return iterator(p_--); }
    iterator& operator+=(difference_type n) { return p_ += n, *this; }
    iterator& operator-=(difference_type n) { return p_ -= n, *this; }
    friend iterator operator+(iterator a, difference_type n) { return a += n; }
    friend iterator operator+(difference_type n, iterator a) { return a += n; }
    friend iterator operator-(iterator a, difference_type n) { return a -= n; }
    friend difference_type operator-(iterator a, iterator b) { return a.p_ - b.p_; }
    friend bool operator==(iterator a, iterator b) { return a.p_ == b.p_; }
    friend auto operator<=>(iterator a, iterator b) { return a.p_ <=> b.p_; }

   private:
    const T* const* p_ = nullptr;
  };

  MatchEvents() = default;
  MatchEvents(const T* const* first, std::size_t n) : first_(first), n_(n) {}
  std::size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  const T& operator[](std::size_t i) const { return *first_[i]; }
  const T& at(std::size_t i) const {
    if (i >= n_) throw std::out_of_range("cep match: event " + std::to_string(i) + " of " + std::to_string(n_));
    return *first_[i];
  }
  const T& front() const { return *first_[0]; }
  const T& back() const { return *first_[n_ - 1]; }
  iterator begin() const { return iterator(first_); }
  iterator end() const { return iterator(first_ + n_); }
  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

 private:
  const T* const* first_ = nullptr;
  std::size_t n_ = 0;
};

// A completed (or timed-out) match: for each pattern name that took events, its events
// in event order. Iterates (name, events) pairs in name order, as the std::map Flink's
// Map<String, List<T>> became would; only names with events are present.
template <class T>
class Match {
 public:
  using value_type = std::pair<const std::string&, MatchEvents<T>>;

  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Match::value_type;
    using difference_type = std::ptrdiff_t;
    using reference = value_type;
    struct pointer {
      value_type v;
      const value_type* operator->() const { return &v; }
    };
    iterator() = default;
    iterator(const Match* m, std::size_t i) : m_(m), i_(i) {}
    value_type operator*() const { return m_->entry(m_->present_[i_]); }
    pointer operator->() const { return pointer{**this}; }
    iterator& operator++() { return ++i_, *this; }
    iterator operator++(int) { return iterator(m_, i_++); }
    friend bool operator==(const iterator& a, const iterator& b) { return a.i_ == b.i_ && a.m_ == b.m_; }

   private:
    const Match* m_ = nullptr;
    std::size_t i_ = 0;
  };
  using const_iterator = iterator;

  // Names are the compiled pattern's (indexed by page id; must outlive the match).
  explicit Match(const std::vector<std::string>* names = nullptr) { bind(names); }
  // A view into the shared buffer: copying it would outlive its events (use to_map()).
  Match(const Match&) = delete;
  Match& operator=(const Match&) = delete;
  Match(Match&&) noexcept = default;
  Match& operator=(Match&&) noexcept = default;

  // Names present, and their events.
  std::size_t size() const { return present_.size(); }
  bool empty() const { return present_.empty(); }
  iterator begin() const { return iterator(this, 0); }
  iterator end() const { return iterator(this, present_.size()); }
  iterator find(std::string_view name) const {
    for (std::size_t i = 0; i < present_.size(); ++i)
      if (same(name, (*names_)[static_cast<std::size_t>(present_[i])])) return iterator(this, i);
    return end();
  }
  std::size_t count(std::string_view name) const { return find(name) == end() ? 0 : 1; }
  bool contains(std::string_view name) const { return count(name) != 0; }
  // The events of `name`; throws std::out_of_range (as std::map::at) when it took none.
  MatchEvents<T> at(std::string_view name) const {
    const int p = page_of(name);
    if (p < 0 || count_[static_cast<std::size_t>(p)] == 0)
      throw std::out_of_range("cep match: no events for pattern name '" + std::string(name) + "'");
    return events_of(p);
  }
  // The events of `name`, empty when it took none.
  MatchEvents<T> events(std::string_view name) const {
    const int p = page_of(name);
    return p < 0 ? MatchEvents<T>() : events_of(p);
  }
  // An owning copy.
  std::map<std::string, std::vector<T>> to_map() const {
    std::map<std::string, std::vector<T>> m;
    for (const auto& [name, evs] : *this) m.emplace(name, evs.to_vector());
    return m;
  }

  // Fills the match from a view of the shared buffer (reusing this object's storage).
  void assign(const MatchView<T>& m) {
    if (names_ != &m.pages()) bind(&m.pages());
    const std::size_t pages = names_->size();
    for (std::size_t p = 0; p < pages; ++p) count_[p] = 0;
    for (std::size_t i = 0; i < m.size(); ++i) ++count_[static_cast<std::size_t>(m.page(i))];
    std::uint32_t offset = 0;
    for (std::size_t p = 0; p < pages; ++p) {
      offset_[p] = offset;
      offset += count_[p];
    }
    events_.resize(m.size());
    for (std::size_t i = 0; i < m.size(); ++i) {
      const auto p = static_cast<std::size_t>(m.page(i));
      events_[offset_[p]++] = &m.event(i);
    }
    present_.clear();
    for (const std::int32_t p : by_name_) {
      const auto pi = static_cast<std::size_t>(p);
      offset_[pi] -= count_[pi];  // back to the first event of the name
      if (count_[pi] > 0) present_.push_back(p);
    }
  }

 private:
  void bind(const std::vector<std::string>* names) {
    static const std::vector<std::string> kNone;
    names_ = names ? names : &kNone;
    const std::size_t n = names_->size();
    count_.assign(n, 0);
    offset_.assign(n, 0);
    by_name_.clear();
    for (std::size_t p = 0; p < n; ++p) by_name_.push_back(static_cast<std::int32_t>(p));
    std::sort(by_name_.begin(), by_name_.end(), [this](std::int32_t a, std::int32_t b) {
      return (*names_)[static_cast<std::size_t>(a)] < (*names_)[static_cast<std::size_t>(b)];
    });
    events_.clear();
    present_.clear();
  }
  int page_of(std::string_view name) const {
    for (std::size_t p = 0; p < names_->size(); ++p)
      if (same(name, (*names_)[p])) return static_cast<int>(p);
    return -1;
  }
  // Pattern names are short: a plain loop beats a memcmp call (a select function looks
  // names up for every match).
  static bool same(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i]) return false;
    return true;
  }
  MatchEvents<T> events_of(int p) const {
    const auto pi = static_cast<std::size_t>(p);
    return MatchEvents<T>(events_.data() + offset_[pi], count_[pi]);
  }
  value_type entry(std::int32_t p) const { return value_type((*names_)[static_cast<std::size_t>(p)], events_of(p)); }

  const std::vector<std::string>* names_ = nullptr;
  std::vector<std::uint32_t> count_, offset_;  // by page id: events taken, first in events_
  std::vector<const T*> events_;               // grouped by page id, event order within
  std::vector<std::int32_t> by_name_;          // page ids in name order
  std::vector<std::int32_t> present_;          // page ids with events, in name order
};

}  // namespace clink::cep
