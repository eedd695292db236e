#pragma once
// Flink's datagen connector: a sequence (start..end, bounded) or seeded random values
// (bounded or unbounded), optionally rate limited and stamped with event times.
//
// Rows are numbered globally; subtask i of p produces rows i, i+p, i+2p, ... so the
// union over subtasks is the same at any parallelism. That run of rows is the reader's
// split (next row, step, last row); a checkpoint stores the unfinished splits and a
// restore at another parallelism deals them over the new readers, each reading its
// splits in row order (a reader with none ends at once). A generator turns a row's number
// n into a record: DatagenSource<std::int64_t> emits n, DatagenSource<Event> emits
// {"k" + n % key_count, n}; make_datagen_sequence/make_datagen_random take any
// callable T(std::int64_t).
#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "clink/api/source.hpp"
#include "clink/api/spec_types.hpp"
#include "clink/connectors/rate_limiter.hpp"
#include "clink/core/error.hpp"

namespace clink {

enum class DatagenKind { kSequence, kRandom };

struct DatagenOptions {
  // Rows per second of the whole source, split evenly across subtasks; 0: unlimited.
  double rows_per_second = 0;
  // Event time of row k: event_time_start_ms + k * event_time_step_ms. kNoEventTime
  // (the default) leaves records without event time.
  EventTime event_time_start_ms = kNoEventTime;
  std::int64_t event_time_step_ms = 1;
};

struct DatagenConfig {
  DatagenKind kind = DatagenKind::kSequence;
  // Sequence: the values start..end (inclusive). Random: the range values are drawn from.
  std::int64_t start = 0;
  std::int64_t end = std::numeric_limits<std::int64_t>::max();
  std::int64_t number_of_rows = -1;  // random only; < 0: unbounded
  std::uint64_t seed = 0;            // random only
  DatagenOptions options;
};

template <class T>
struct DefaultGenerator;  // the generator DatagenSource<T> uses unless given one

template <>
struct DefaultGenerator<std::int64_t> {
  std::int64_t operator()(std::int64_t n) const { return n; }
};

template <>
struct DefaultGenerator<Event> {
  std::int64_t key_count = 10;
  Event operator()(std::int64_t n) const {
    std::int64_t k = n % key_count;
    if (k < 0) k += key_count;
    char buf[24] = {'k'};
    auto end = std::to_chars(buf + 1, buf + sizeof buf, k).ptr;
    return Event{std::string(buf, end), n};
  }
};
using EventGenerator = DefaultGenerator<Event>;

namespace detail {
// splitmix64 at position `index` of the stream seeded with `seed`: a counter-based
// generator, so row k's value depends only on (seed, k), not on the parallelism.
inline std::uint64_t splitmix64(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed + (index + 1) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
}  // namespace detail

template <class T, class Gen = DefaultGenerator<T>>
class DatagenSource final : public Source<T> {
 public:
  DatagenSource(DatagenConfig config, Gen gen) : config_(config), gen_(std::move(gen)) {}

  static std::shared_ptr<DatagenSource> sequence(std::int64_t start, std::int64_t end, DatagenOptions options = {},
                                                 Gen gen = {}) {
    return std::make_shared<DatagenSource>(DatagenConfig{DatagenKind::kSequence, start, end, -1, 0, options},
                                           std::move(gen));
  }
  // number_of_rows < 0: unbounded. Values are uniform in [min, max].
  static std::shared_ptr<DatagenSource> random(std::int64_t number_of_rows, std::uint64_t seed,
                                               DatagenOptions options = {}, Gen gen = {}, std::int64_t min = 0,
                                               std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
    return std::make_shared<DatagenSource>(
        DatagenConfig{DatagenKind::kRandom, min, max, number_of_rows, seed, options}, std::move(gen));
  }

  std::unique_ptr<SourceReader<T>> create_reader(int subtask, int parallelism) const override {
    return std::make_unique<Reader>(config_, gen_, subtask, parallelism);
  }
  std::string factory_name() const override { return "datagen"; }
  const DatagenConfig& config() const { return config_; }

 private:
  class Reader final : public SourceReader<T> {
   public:
    using Status = typename SourceReader<T>::Status;
    Reader(const DatagenConfig& c, const Gen& gen, int subtask, int parallelism) : c_(c), gen_(gen) {
      bool empty = false;
      if (c.kind == DatagenKind::kSequence) {
        // Row numbers are offsets from start: 0..last.
        empty = c.start > c.end;
        last_ = static_cast<std::uint64_t>(c.end) - static_cast<std::uint64_t>(c.start);
      } else {
        bounded_ = c.number_of_rows >= 0;
        if (bounded_) {
          empty = c.number_of_rows == 0;
          last_ = static_cast<std::uint64_t>(c.number_of_rows) - 1;
        }
        span_ = static_cast<std::uint64_t>(c.end) - static_cast<std::uint64_t>(c.start) + 1;  // 0: full range
      }
      has_end_ = bounded_ || c.kind == DatagenKind::kSequence;
      // A fresh reader has its own split: rows subtask, subtask + p, ...
      Split own{static_cast<std::uint64_t>(subtask), static_cast<std::uint64_t>(parallelism), last_};
      if (!empty && !(has_end_ && own.next > own.last)) splits_.push_back(own);
      if (c.options.rows_per_second > 0)
        limiter_.emplace(c.options.rows_per_second / parallelism, RateLimiter::Clock::now());
    }

    Status poll(Batch<T>& out, std::size_t max_records) override {
      if (splits_.empty()) return Status::kEnd;
      auto n = static_cast<std::int64_t>(std::min<std::uint64_t>(max_records, remaining()));
      if (limiter_) {
        n = limiter_->acquire(n, RateLimiter::Clock::now());
        if (n == 0) return Status::kNothingAvailable;
      }
      const auto& o = c_.options;
      bool timed = o.event_time_start_ms != kNoEventTime;
      // With several splits (a restore at a lower parallelism) rows come in row order
      // across them: the split with the lowest next row runs until it passes the next
      // lowest, so event times stay as ordered as at the original parallelism.
      while (n > 0 && !splits_.empty()) {
        std::size_t s = 0;
        for (std::size_t i = 1; i < splits_.size(); ++i)
          if (splits_[i].next < splits_[s].next) s = i;
        std::uint64_t bound = std::numeric_limits<std::uint64_t>::max();  // run while next <= bound
        for (std::size_t i = 0; i < splits_.size(); ++i)
          if (i != s) bound = std::min(bound, splits_[i].next);
        Split& sp = splits_[s];
        bool more = true;
        do {
          EventTime ts = timed ? o.event_time_start_ms + static_cast<std::int64_t>(sp.next) * o.event_time_step_ms
                               : kNoEventTime;
          out.records.push_back(Record<T>{gen_(value_of(sp.next)), ts, kNoPartition});
          --n;
          more = advance(sp);
        } while (more && n > 0 && sp.next <= bound);
        if (!more) splits_.erase(splits_.begin() + static_cast<std::ptrdiff_t>(s));
      }
      return splits_.empty() ? Status::kEnd : Status::kMore;
    }
    std::int64_t wait_hint_ms() const override { return limiter_ ? limiter_->wait_ms() : 1; }
    // A split is "next step last" (row numbers); finished splits are left out. Random
    // rows depend only on (seed, row), so a restored reader continues each exactly.
    std::optional<std::vector<std::string>> snapshot_splits() const override {
      std::vector<std::string> out;
      out.reserve(splits_.size());
      for (const auto& sp : splits_)
        out.push_back(std::to_string(sp.next) + " " + std::to_string(sp.step) + " " + std::to_string(sp.last));
      return out;
    }
    void restore_splits(std::vector<std::string> splits) override {
      splits_.clear();
      for (const auto& text : splits) {
        Split sp;
        if (std::sscanf(text.c_str(), "%" SCNu64 " %" SCNu64 " %" SCNu64, &sp.next, &sp.step, &sp.last) != 3 ||
            sp.step == 0)
          throw ClinkError("datagen: malformed split '" + text + "' in the restored checkpoint");
        if (has_end_ && sp.next > sp.last) continue;
        splits_.push_back(sp);
      }
    }

   private:
    struct Split {
      std::uint64_t next = 0;  // global row number of the next row
      std::uint64_t step = 1;
      std::uint64_t last = 0;  // the last row (unused when unbounded)
    };

    std::int64_t value_of(std::uint64_t row) const {
      if (c_.kind == DatagenKind::kSequence) return static_cast<std::int64_t>(static_cast<std::uint64_t>(c_.start) + row);
      std::uint64_t r = detail::splitmix64(c_.seed, row);
      if (span_ != 0) r %= span_;
      return static_cast<std::int64_t>(static_cast<std::uint64_t>(c_.start) + r);
    }
    // Rows this reader still has to produce (capped; unbounded is "many").
    std::uint64_t remaining() const {
      if (!has_end_) return std::numeric_limits<std::uint64_t>::max();
      std::uint64_t total = 0;
      for (const auto& sp : splits_) {
        std::uint64_t r = (sp.last - sp.next) / sp.step + 1;
        total = r > std::numeric_limits<std::uint64_t>::max() - total ? std::numeric_limits<std::uint64_t>::max()
                                                                       : total + r;
      }
      return total;
    }
    // Moves `sp` to its next row; false once it is finished.
    bool advance(Split& sp) const {
      if (has_end_ && sp.last - sp.next < sp.step) return false;  // next row would pass the last one
      sp.next += sp.step;  // unbounded random wraps after 2^64 rows, which is fine
      return true;
    }

    DatagenConfig c_;
    Gen gen_;
    std::vector<Split> splits_;  // unfinished splits
    std::uint64_t last_ = 0;
    std::uint64_t span_ = 0;
    bool bounded_ = false;
    bool has_end_ = false;
    std::optional<RateLimiter> limiter_;
  };

  DatagenConfig config_;
  Gen gen_;
};

// Datagen with a custom generator; T is what the generator returns.
template <class Gen>
auto make_datagen_sequence(std::int64_t start, std::int64_t end, Gen gen, DatagenOptions options = {}) {
  using T = std::decay_t<std::invoke_result_t<Gen&, std::int64_t>>;
  return DatagenSource<T, Gen>::sequence(start, end, options, std::move(gen));
}
template <class Gen>
auto make_datagen_random(std::int64_t number_of_rows, std::uint64_t seed, Gen gen, DatagenOptions options = {}) {
  using T = std::decay_t<std::invoke_result_t<Gen&, std::int64_t>>;
  return DatagenSource<T, Gen>::random(number_of_rows, seed, options, std::move(gen));
}

}  // namespace clink
