#pragma once
// A typed source's WatermarkStrategy applied per split, in the source (Flink's
// env.fromSource(source, strategy, name), whose watermarks are per split, e.g. per Kafka
// partition): every split gets its own copy of the strategy, fed with that split's
// records, and the SplitWatermarkCombiner (time/split_watermark_combiner.hpp) emits the
// minimum over the splits the reader holds, with the strategy's idleness per split. The
// split of a record is its Record::partition (record_split); a source without splits
// puts every record in one.
//
// Like Flink's (and the SQL sources'), these watermarks are not checkpointed: after a
// restore the splits' strategies start again from their first records.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "clink/core/error.hpp"
#include "clink/core/record.hpp"
#include "clink/time/split_watermark_combiner.hpp"
#include "clink/time/watermark_strategy.hpp"

namespace clink {

// The split key of a record of partition `p` (SourceReader::held_splits holds these).
inline std::uint64_t record_split(PartitionId p) { return static_cast<std::uint32_t>(p); }

template <class T>
class SplitWatermarkStrategies {
 public:
  explicit SplitWatermarkStrategies(const WatermarkStrategy<T>& strategy)
      : prototype_(strategy.clone()), combiner_(strategy.idleness_ms(), 0, kMinEventTime) {
    if (strategy.alignment().enabled())
      throw ClinkError("a source's watermark strategy cannot align watermarks (with_watermark_alignment): use "
                       "assign_timestamps_and_watermarks after the source");
  }

  void set_splits(const std::vector<std::uint64_t>& splits, std::int64_t now_ms) { combiner_.set_splits(splits, now_ms); }

  // Stamps each record with the strategy's timestamp assigner (given the record's own
  // event time, as Flink's gets the Kafka timestamp) and feeds it to its split's strategy.
  void on_batch(Batch<T>& batch, std::int64_t now_ms) {
    const auto& assign = prototype_->timestamp_assigner();
    for (Record<T>& r : batch.records) {
      if (assign) r.event_time = assign(r.value, r.event_time);
      if (!r.has_event_time())
        throw ClinkError("a source record has no event time for its watermark strategy: give the strategy a "
                         "timestamp assigner (with_timestamp_assigner)");
      Split& s = split_of(record_split(r.partition));
      s.strategy->on_record(r);
      if (!s.touched) {
        s.touched = true;
        touched_.push_back(&s);
      }
    }
    for (Split* s : touched_) {
      combiner_.advance(s->key, s->strategy->watermark(), now_ms);
      s->touched = false;
    }
    touched_.clear();
  }

  std::optional<Watermark> poll(std::int64_t now_ms) { return combiner_.poll(now_ms); }

 private:
  struct Split {
    std::uint64_t key = 0;
    std::unique_ptr<WatermarkStrategy<T>> strategy;
    bool touched = false;  // has records in the batch being observed
  };
  Split& split_of(std::uint64_t key) {
    if (cached_ && cached_->key == key) return *cached_;
    auto [it, added] = splits_.try_emplace(key);
    if (added) {
      it->second.key = key;
      it->second.strategy = prototype_->clone();
    }
    cached_ = &it->second;  // map nodes are stable
    return *cached_;
  }

  std::unique_ptr<WatermarkStrategy<T>> prototype_;
  SplitWatermarkCombiner combiner_;
  std::map<std::uint64_t, Split> splits_;
  Split* cached_ = nullptr;
  std::vector<Split*> touched_;
};

}  // namespace clink
