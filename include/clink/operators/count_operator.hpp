#pragma once
// "count": keyed count of strings (the string is the key) or events (Event::key),
// producing (key, count) pairs.
//
// The counts are keyed state: a ValueState<int64> "count" per key in the subtask's
// keyed state backend, so they are part of every checkpoint and savepoint, restored
// after a failure and redistributed by key group when a job restores at another
// parallelism. The "final" emission at the end of the input walks the backend's key
// groups (for_each_entry), so it also emits the keys a restore brought in.
//
// The executor gives the backend to operators whose inputs are hash-partitioned. A
// count behind another edge (forward at parallelism 1) still counts, in a private
// memory backend that no checkpoint covers: a checkpoint of such a job fails, naming
// the operator, rather than lose the counts on the next restore.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "clink/api/spec_types.hpp"
#include "clink/core/error.hpp"
#include "clink/runtime/key_group.hpp"
#include "clink/runtime/operator.hpp"
#include "clink/state/keyed_state.hpp"
#include "clink/state/keyed_state_backend.hpp"

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
  static constexpr const char* kStateName = "count";

  explicit CountOperator(CountEmit emit = CountEmit::kFinal) : emit_(emit) {}

  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    private_backend_ = !ctx.keyed_state_backend();
    backend_ = ctx.keyed_state_backend_or_private();
    backend_->set_current_namespace({});
    count_ = &KeyedStateStore(*backend_).get_state(ValueStateDescriptor<std::int64_t>{kStateName});
    state_id_ = backend_->register_state(kStateName, StateKind::kValue);
  }

  void process_batch(int, BatchPtr batch) override {
    const auto& in = batch_cast<In>(*batch).records;
    if (emit_ == CountEmit::kEvery) {
      auto out = std::make_unique<Batch<WordCount>>();
      out->records.reserve(in.size());
      for (const auto& r : in) {
        const std::string& key = count_key(r.value);
        out->records.push_back(Record<WordCount>{WordCount{key, increment(key)}, r.event_time, kNoPartition});
      }
      if (!out->records.empty()) output().emit(std::move(out));
    } else {
      for (const auto& r : in) increment(count_key(r.value));
    }
  }

  void snapshot_state(std::int64_t) override {
    if (private_backend_)
      throw ClinkError("count '" + ctx().operator_name() +
                       "': its input is not hash-partitioned, so its counts are not keyed state and cannot be "
                       "checkpointed; feed it through a hash edge (key string.self or event.key)");
  }

  void finish() override {
    if (emit_ != CountEmit::kFinal) return;
    std::vector<WordCount> entries;
    const KeyGroupRange groups = backend_->key_groups();
    for (int kg = groups.first; kg <= groups.last; ++kg) {
      backend_->for_each_entry(state_id_, kg, [&](std::string_view key, std::string_view, std::string_view value) {
        entries.emplace_back(decode_key<std::string>(key), decode_state<std::int64_t>(value));
      });
    }
    if (entries.empty()) return;
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
  // Counts one record of `key` and returns its new count. No allocation once the key
  // buffer has grown to the longest key (and the key is known to the backend).
  std::int64_t increment(const std::string& key) {
    key_bytes_.clear();
    KeyCodec<std::string>::encode(key, key_bytes_);
    backend_->set_current_key(key_bytes_);
    std::int64_t c = count_->value().value_or(0) + 1;
    count_->update(c);
    return c;
  }

  CountEmit emit_;
  bool private_backend_ = false;
  KeyedStateBackend* backend_ = nullptr;
  ValueState<std::int64_t>* count_ = nullptr;
  StateId state_id_;
  std::string key_bytes_;
};

}  // namespace clink
