#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "clink/api/source.hpp"

namespace clink {

// A bounded source over in-memory records (parallelism 1), for tests and examples.
template <class T>
class CollectionSource final : public Source<T> {
 public:
  explicit CollectionSource(std::vector<Record<T>> records) : records_(std::move(records)) {}
  static std::shared_ptr<CollectionSource<T>> of(std::vector<T> values) {
    std::vector<Record<T>> r;
    r.reserve(values.size());
    for (auto& v : values) r.push_back(Record<T>{std::move(v), kNoEventTime, kNoPartition});
    return std::make_shared<CollectionSource<T>>(std::move(r));
  }
  // (value, event time) pairs.
  static std::shared_ptr<CollectionSource<T>> with_timestamps(std::vector<std::pair<T, EventTime>> values) {
    std::vector<Record<T>> r;
    for (auto& [v, ts] : values) r.push_back(Record<T>{std::move(v), ts, kNoPartition});
    return std::make_shared<CollectionSource<T>>(std::move(r));
  }

  std::unique_ptr<SourceReader<T>> create_reader(int, int) const override {
    return std::make_unique<Reader>(records_);
  }
  int max_parallelism() const override { return 1; }
  std::string factory_name() const override { return "collection"; }

 private:
  class Reader final : public SourceReader<T> {
   public:
    explicit Reader(const std::vector<Record<T>>& r) : records_(r) {}
    typename SourceReader<T>::Status poll(Batch<T>& out, std::size_t max) override {
      while (pos_ < records_.size() && out.records.size() < max) out.records.push_back(records_[pos_++]);
      return pos_ < records_.size() ? SourceOperator::PollStatus::kMore : SourceOperator::PollStatus::kEnd;
    }
    // One split: the index of the next record.
    std::optional<std::vector<std::string>> snapshot_splits() const override {
      return std::vector<std::string>{std::to_string(pos_)};
    }
    void restore_splits(std::vector<std::string> splits) override {
      pos_ = records_.size();  // no split: nothing left to read
      for (const auto& p : splits) pos_ = std::stoull(p);
    }

   private:
    const std::vector<Record<T>>& records_;
    std::size_t pos_ = 0;
  };
  std::vector<Record<T>> records_;
};

}  // namespace clink
