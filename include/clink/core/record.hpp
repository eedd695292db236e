#pragma once
#include <cstddef>
#include <memory>
#include <typeindex>
#include <typeinfo>
#include <utility>
#include <vector>

#include "clink/core/event_time.hpp"

namespace clink {

// One element of a typed stream. Records travel in batches, never one at a time.
template <class T>
struct Record {
  T value{};
  EventTime event_time = kNoEventTime;
  PartitionId partition = kNoPartition;

  bool has_event_time() const { return event_time != kNoEventTime; }
  friend bool operator==(const Record&, const Record&) = default;
};

// Type-erased batch: what channels, partitioners and chains move. The concrete type
// (Batch<T> for the DataStream API, a columnar batch for SQL) is known at plan time;
// operators cast once per batch.
class BatchBase {
 public:
  virtual ~BatchBase() = default;
  virtual std::size_t size() const = 0;
  virtual std::unique_ptr<BatchBase> clone() const = 0;
  // An empty batch of the same type, with room for `capacity` records.
  virtual std::unique_ptr<BatchBase> empty_like(std::size_t capacity) const = 0;
  virtual std::type_index type() const = 0;
  bool empty() const { return size() == 0; }
};
using BatchPtr = std::unique_ptr<BatchBase>;

template <class T>
class Batch final : public BatchBase {
 public:
  std::vector<Record<T>> records;

  Batch() = default;
  explicit Batch(std::vector<Record<T>> r) : records(std::move(r)) {}

  std::size_t size() const override { return records.size(); }
  BatchPtr clone() const override { return std::make_unique<Batch<T>>(records); }
  BatchPtr empty_like(std::size_t capacity) const override {
    auto b = std::make_unique<Batch<T>>();
    b->records.reserve(capacity);
    return b;
  }
  std::type_index type() const override { return typeid(Batch<T>); }

  void push(T value, EventTime ts = kNoEventTime, PartitionId p = kNoPartition) {
    records.push_back(Record<T>{std::move(value), ts, p});
  }
};

template <class T>
Batch<T>& batch_cast(BatchBase& b) {
  return static_cast<Batch<T>&>(b);
}
template <class T>
const Batch<T>& batch_cast(const BatchBase& b) {
  return static_cast<const Batch<T>&>(b);
}

// Default number of records a source or operator puts in one batch.
inline constexpr std::size_t kDefaultBatchSize = 1024;

}  // namespace clink
