#pragma once
// What a match is. Match<T>: the events of a match per pattern name, each list in
// event order (Flink's Map<String, List<T>>; what select / flat_select / process
// receive, and what MATCH_RECOGNIZE measures are computed over). MatchView<T>: the same
// match as it sits in the shared buffer, before it is released (no copies).
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "clink/cep/shared_buffer.hpp"

namespace clink::cep {

template <class T>
using Match = std::map<std::string, std::vector<T>>;

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
  const T& event(std::size_t i) const { return buffer_->event((*path_)[i].event); }
  EventTime timestamp(std::size_t i) const { return buffer_->event_id((*path_)[i].event).ts; }

  Match<T> to_map() const {
    Match<T> m;
    for (std::size_t i = 0; i < size(); ++i) m[name(i)].push_back(event(i));
    return m;
  }

 private:
  const std::vector<std::string>* pages_;
  const SharedBuffer<T>* buffer_;
  const std::vector<MatchEntry>* path_;
};

}  // namespace clink::cep
