#pragma once
// "count": keyed count of strings (the string is the key) or events (Event::key),
// producing (key, count) pairs.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "clink/api/spec_types.hpp"
#include "clink/runtime/operator.hpp"

namespace clink {

enum class CountEmit {
  kFinal,  // one (key, count) per key at the end of the input, sorted by key per subtask
  kEvery,  // the running count after every record, like Flink's streaming WordCount sum()
};

inline const std::string& count_key(const std::string& s) { return s; }
inline const std::string& count_key(const Event& e) { return e.key; }

template <class In>
class CountOperator final : public StreamOperator {
 public:
  explicit CountOperator(CountEmit emit = CountEmit::kFinal) : emit_(emit) {}

  void process_batch(int, BatchPtr batch) override {
    const auto& in = batch_cast<In>(*batch).records;
    if (emit_ == CountEmit::kEvery) {
      auto out = std::make_unique<Batch<WordCount>>();
      out->records.reserve(in.size());
      for (const auto& r : in) {
        const std::string& key = count_key(r.value);
        std::int64_t c = ++counts_[key];
        out->records.push_back(Record<WordCount>{WordCount{key, c}, r.event_time, kNoPartition});
      }
      if (!out->records.empty()) output().emit(std::move(out));
    } else {
      for (const auto& r : in) ++counts_[count_key(r.value)];
    }
  }

  void finish() override {
    if (emit_ != CountEmit::kFinal || counts_.empty()) return;
    std::vector<std::pair<std::string, std::int64_t>> entries(counts_.begin(), counts_.end());
    std::sort(entries.begin(), entries.end());
    std::unique_ptr<Batch<WordCount>> out;
    for (auto& e : entries) {
      if (!out) {
        out = std::make_unique<Batch<WordCount>>();
        out->records.reserve(std::min(entries.size(), kDefaultBatchSize));
      }
      out->records.push_back(Record<WordCount>{std::move(e), kNoEventTime, kNoPartition});
      if (out->records.size() >= kDefaultBatchSize) output().emit(std::move(out));
    }
    if (out && !out->records.empty()) output().emit(std::move(out));
  }

 private:
  CountEmit emit_;
  // Keyed state as a plain hash map inside the operator, for now: the keyed state
  // backends (and with them checkpointing of this count) arrive with the state issue.
  std::unordered_map<std::string, std::int64_t> counts_;
};

}  // namespace clink
