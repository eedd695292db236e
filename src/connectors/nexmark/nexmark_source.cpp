#include "clink/connectors/nexmark/nexmark_source.hpp"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <optional>
#include <vector>

#include "clink/connectors/nexmark/nexmark_generator.hpp"
#include "clink/connectors/rate_limiter.hpp"
#include "clink/core/error.hpp"

namespace clink {
namespace {

using nexmark::GeneratorConfig;
using nexmark::NexmarkGenerator;

// A run of stream positions: next, next + step, ... up to last (inclusive).
struct Split {
  std::int64_t next = 0;
  std::int64_t step = 1;
  std::int64_t last = 0;
};

class NexmarkReader final : public SourceReader<NexmarkEvent> {
 public:
  NexmarkReader(const nexmark::NexmarkSourceOptions& options, int subtask, int parallelism)
      : generator_(options.generator) {
    std::int64_t last = generator_.max_events() - 1;
    if (subtask <= last) splits_.push_back(Split{subtask, parallelism, last});
    if (!options.max_emit_speed)
      limiter_.emplace(static_cast<double>(options.generator.first_event_rate) / parallelism,
                       RateLimiter::Clock::now());
  }

  Status poll(Batch<NexmarkEvent>& out, std::size_t max_records) override {
    if (splits_.empty()) return Status::kEnd;
    auto n = static_cast<std::int64_t>(std::min<std::uint64_t>(max_records, remaining()));
    if (limiter_) {
      n = limiter_->acquire(n, RateLimiter::Clock::now());
      if (n == 0) return Status::kNothingAvailable;
    }
    // With several splits (restored at a lower parallelism) positions come in order
    // across them: the split with the lowest next position runs until it passes the
    // next lowest, so event times stay as ordered as at the original parallelism.
    while (n > 0 && !splits_.empty()) {
      std::size_t s = 0;
      for (std::size_t i = 1; i < splits_.size(); ++i)
        if (splits_[i].next < splits_[s].next) s = i;
      std::int64_t bound = std::numeric_limits<std::int64_t>::max();
      for (std::size_t i = 0; i < splits_.size(); ++i)
        if (i != s) bound = std::min(bound, splits_[i].next);
      Split& sp = splits_[s];
      bool more = true;
      do {
        auto& rec = out.records.emplace_back();
        generator_.generate(sp.next, rec.value);
        rec.event_time = rec.value.date_time();
        --n;
        more = sp.last - sp.next >= sp.step;
        if (more) sp.next += sp.step;
      } while (more && n > 0 && sp.next <= bound);
      if (!more) splits_.erase(splits_.begin() + static_cast<std::ptrdiff_t>(s));
    }
    return splits_.empty() ? Status::kEnd : Status::kMore;
  }

  std::int64_t wait_hint_ms() const override { return limiter_ ? limiter_->wait_ms() : 1; }

  // "next step last base_time"; finished splits are left out.
  std::optional<std::vector<std::string>> snapshot_splits() const override {
    std::vector<std::string> out;
    out.reserve(splits_.size());
    for (const auto& sp : splits_) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "%" PRId64 " %" PRId64 " %" PRId64 " %" PRId64, sp.next, sp.step, sp.last,
                    generator_.config().base_time);
      out.emplace_back(buf);
    }
    return out;
  }

  void restore_splits(std::vector<std::string> splits) override {
    splits_.clear();
    std::optional<std::int64_t> base_time;
    for (const auto& text : splits) {
      Split sp;
      std::int64_t base = 0;
      int used = 0;
      if (std::sscanf(text.c_str(), "%" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 "%n", &sp.next, &sp.step, &sp.last,
                      &base, &used) != 4 ||
          static_cast<std::size_t>(used) != text.size() || sp.step <= 0 || sp.next < 0 || sp.next > sp.last)
        throw ClinkError("nexmark: malformed split '" + text + "' in the restored checkpoint");
      if (sp.last >= generator_.max_events())
        throw ClinkError("nexmark: restored split '" + text + "' goes past the " +
                         std::to_string(generator_.max_events()) + " events of this source's configuration");
      if (base_time && *base_time != base)
        throw ClinkError("nexmark: restored splits have different base times (" + std::to_string(*base_time) +
                         " and " + std::to_string(base) + ")");
      base_time = base;
      splits_.push_back(sp);
    }
    // The events continue on the timeline they started on, whatever the base time now.
    if (base_time && *base_time != generator_.config().base_time) {
      GeneratorConfig c = generator_.config();
      c.base_time = *base_time;
      generator_ = NexmarkGenerator(c);
    }
  }

 private:
  std::uint64_t remaining() const {
    std::uint64_t total = 0;
    for (const auto& sp : splits_) total += static_cast<std::uint64_t>((sp.last - sp.next) / sp.step + 1);
    return total;
  }

  NexmarkGenerator generator_;
  std::vector<Split> splits_;
  std::optional<RateLimiter> limiter_;
};

}  // namespace

NexmarkSource::NexmarkSource(nexmark::NexmarkSourceOptions options) : options_(std::move(options)) {
  NexmarkGenerator::validate(options_.generator);
  if (!options_.base_time_set) {
    options_.generator.base_time = std::chrono::duration_cast<std::chrono::milliseconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count();
    options_.base_time_set = true;
  }
}

std::shared_ptr<NexmarkSource> NexmarkSource::from_options(const std::map<std::string, std::string>& options) {
  return std::make_shared<NexmarkSource>(nexmark::parse_nexmark_options(options));
}

std::unique_ptr<SourceReader<NexmarkEvent>> NexmarkSource::create_reader(int subtask, int parallelism) const {
  return std::make_unique<NexmarkReader>(options_, subtask, parallelism);
}

}  // namespace clink
