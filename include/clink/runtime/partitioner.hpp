#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "clink/core/record.hpp"
#include "clink/runtime/key_group.hpp"

namespace clink {

enum class Partitioning { kForward, kHash, kRebalance, kBroadcast };
const char* partitioning_name(Partitioning p);
Partitioning parse_partitioning(const std::string& name);

// Splits one batch among the downstream subtasks: out[i] receives subtask i's part
// (null when it gets nothing). One instance per producing subtask, on its thread.
class Partitioner {
 public:
  virtual ~Partitioner() = default;
  virtual void partition(BatchPtr batch, std::vector<BatchPtr>& out) = 0;
};

// Builds the partitioner for (producing subtask, downstream parallelism, max parallelism).
using PartitionerFactory = std::function<std::unique_ptr<Partitioner>(int subtask, int targets, int max_parallelism)>;

std::unique_ptr<Partitioner> make_forward_partitioner(int subtask, int targets);
std::unique_ptr<Partitioner> make_rebalance_partitioner(int subtask, int targets);
std::unique_ptr<Partitioner> make_broadcast_partitioner(int targets);

// Routes each record by its key: key bytes -> 64-bit hash -> key group -> subtask.
template <class T, class KeyFn>
class HashPartitioner final : public Partitioner {
 public:
  HashPartitioner(KeyFn key_fn, int targets, int max_parallelism)
      : key_fn_(std::move(key_fn)), targets_(targets), max_parallelism_(max_parallelism) {}

  void partition(BatchPtr batch, std::vector<BatchPtr>& out) override {
    auto& in = batch_cast<T>(*batch);
    std::vector<Batch<T>*> parts(static_cast<std::size_t>(targets_), nullptr);
    for (auto& rec : in.records) {
      key_bytes_.clear();
      using K = std::decay_t<decltype(key_fn_(rec.value))>;
      KeyCodec<K>::encode(key_fn_(rec.value), key_bytes_);
      int kg = key_group_for_hash(key_hash(key_bytes_), max_parallelism_);
      auto t = static_cast<std::size_t>(subtask_for_key_group(kg, max_parallelism_, targets_));
      if (parts[t] == nullptr) {
        auto b = std::make_unique<Batch<T>>();
        b->records.reserve(in.records.size() / static_cast<std::size_t>(targets_) + 16);
        parts[t] = b.get();
        out[t] = std::move(b);
      }
      parts[t]->records.push_back(std::move(rec));
    }
  }

 private:
  KeyFn key_fn_;
  int targets_;
  int max_parallelism_;
  std::string key_bytes_;
};

template <class T, class KeyFn>
PartitionerFactory hash_partitioner_factory(KeyFn key_fn) {
  return [key_fn](int, int targets, int max_parallelism) -> std::unique_ptr<Partitioner> {
    return std::make_unique<HashPartitioner<T, KeyFn>>(key_fn, targets, max_parallelism);
  };
}

}  // namespace clink
