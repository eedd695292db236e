// sql_interval_join: the time-bounded join, Flink's RowTimeIntervalJoin (TimeIntervalJoin)
// behind KeyedCoProcessOperatorWithWatermarkDelay. A left row at time tl joins the right
// rows of its key with left.rt in [right.rt + lower, right.rt + upper], i.e. right times in
// [tl - upper, tl - lower]; symmetrically for right rows. Append-only in and out.
//   - Each side caches its rows per key in a map state time -> [(emitted, row)] while the
//     other side's watermark has not passed the row's window; a row arriving too late for
//     that is not cached (and, on an outer side, emitted null-padded at once if unmatched).
//   - Cleanup runs on event-time timers (one per key and side, at row time + the side's
//     relative size + half the window + 1, as Flink): rows whose window the watermark
//     passed are dropped, and an outer side's rows that never matched are emitted padded
//     with NULLs then.
//   - The output watermark is held back by max(-lower, upper), so joined rows (which keep
//     both time attributes) are not late downstream.
// The operator-level expiration times Flink keeps (not checkpointed there either) decide,
// per row, whether the other side's cache is scanned at all.
//
// Lateness by channel (runtime/lateness.hpp). The operator runs on the minimum of its
// channels' watermarks, so whether a row already behind its own channel's watermark still
// met its partners in the cache depended on how far the other channels had got: thread
// timing. Each row x carries W(x), the watermark its channel had sent before it (at least
// the operator's; Flink's operator time is never negative, nor is W). A pair (x of side
// s, y of side o) within the bounds is joined iff
//     W(y) < x.t + relative_[s]  and  W(x) < y.t + relative_[o]:
// each row came before its channel's watermark passed the last time a partner of the
// other row could have. Every pair of rows not late in their channels passes (W(y) < y.t
// <= x.t + relative_[s]), so this is Flink's full join there; for a late row it depends
// only on the rows and their channels, not on timing (at the boundary W(y) = x.t +
// relative_[s] Flink joins y with an x cached before but does not cache an x coming
// then: the rule joins neither). Whichever of a passing pair comes
// second finds the first still cached: the operator time op <= W at every arrival, the
// first is cached when op < x.t + relative_[s] (op <= W(y) < that) and expires only when
// op > x.t + relative_[s], which has not happened when y comes. Conversely, a row not
// cached or expired can have no later passing partner (W of a later row >= op), so an
// outer row is padded exactly when it has no passing partner. W is stored with a cached
// row only when it is late (W >= t): otherwise W(x) < x.t <= y.t + relative_[o] always.
#include <limits>

#include <absl/container/flat_hash_map.h>

#include "clink/core/error.hpp"
#include "clink/runtime/lateness.hpp"
#include "clink/state/keyed_state_backend.hpp"
#include "sql_join_common.hpp"
#include "sql_op_registration.hpp"

namespace clink::sql {
namespace {

// Candidate pairs evaluated at once (bounds the joined rows materialised per chunk).
constexpr std::size_t kMaxPairs = 16 * 1024;

// A cached row's state: a flags byte, [its channel's watermark W if late], the row's
// length and bytes. State written before W was kept has flags 0 or 1 (rows taken as not late).
constexpr char kEmitted = 1;       // an outer side's row that has joined
constexpr char kLateInChannel = 2;  // W (8 bytes) follows

struct CachedHeader {
  bool emitted = false;
  EventTime watermark = kMinEventTime;  // W; kMinEventTime: not late in its channel
};

CachedHeader read_header(std::string_view& value, const std::string& where) {
  if (value.empty()) throw ClinkError(where + ": corrupt interval join state");
  CachedHeader h;
  const char flags = value[0];
  value.remove_prefix(1);
  h.emitted = (flags & kEmitted) != 0;
  if (flags & kLateInChannel) {
    if (value.size() < 8) throw ClinkError(where + ": corrupt interval join state");
    h.watermark = KeyCodec<std::int64_t>::decode(value);
  }
  return h;
}

void write_header(std::string& out, bool emitted, EventTime watermark) {
  out.push_back(static_cast<char>((emitted ? kEmitted : 0) | (watermark != kMinEventTime ? kLateInChannel : 0)));
  if (watermark != kMinEventTime) KeyCodec<std::int64_t>::encode(watermark, out);
}

struct IntervalJoinConfig {
  JoinSpec spec;
  std::size_t time_column[2] = {0, 0};
  std::int64_t lower_ms = 0, upper_ms = 0;
};

// One cached row of the other side, loaded for a batch.
struct CachedRow {
  std::int64_t time = 0;
  std::uint32_t bucket = 0;   // index into buckets_
  std::uint32_t row = 0;      // index into other_rows_ (decoded)
  std::size_t bytes_at = 0, bytes_len = 0;
  EventTime watermark = kMinEventTime;  // W, if late in its channel
  bool emitted = false;
};
// All cached rows of one (key, time) of the other side.
struct Bucket {
  std::string_view key;
  std::int64_t time = 0;
  std::uint32_t first = 0, last = 0;  // rows in cached_
  bool removed = false;
  bool dirty = false;
};

class SqlIntervalJoinOperator final : public StreamOperator {
 public:
  explicit SqlIntervalJoinOperator(std::shared_ptr<const IntervalJoinConfig> cfg)
      : cfg_(std::move(cfg)),
        spec_(cfg_->spec),
        codec_{SideRowCodec(*spec_.side[0]), SideRowCodec(*spec_.side[1])},
        key_encoder_{RowKeyEncoder(*spec_.side[0], spec_.keys[0]), RowKeyEncoder(*spec_.side[1], spec_.keys[1])},
        other_rows_{ColumnBatch(spec_.side[0]), ColumnBatch(spec_.side[1])},
        joined_(spec_),
        padded_{ColumnBatch(spec_.side[0]), ColumnBatch(spec_.side[1])} {
    relative_[0] = -cfg_->lower_ms;
    relative_[1] = cfg_->upper_ms;
    min_cleanup_ = (relative_[0] + relative_[1]) / 2;
    delay_ = std::max<std::int64_t>(0, std::max(relative_[0], relative_[1]));
  }

  int num_inputs() const override { return 2; }

  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    if (spec_.keys[0].empty() && ctx.parallelism() > 1)
      throw ClinkError(spec_.where + ": an interval join without equi-join keys runs at parallelism 1, got " +
                       std::to_string(ctx.parallelism()));
    backend_ = ctx.keyed_state_backend_or_private();
    backend_->set_current_namespace({});
    cache_[0] = backend_->register_state("interval-left", StateKind::kMap);
    cache_[1] = backend_->register_state("interval-right", StateKind::kMap);
    timer_[0] = backend_->register_state("interval-left-cleanup", StateKind::kValue);
    timer_[1] = backend_->register_state("interval-right-cleanup", StateKind::kValue);
  }

  void process_batch(int input, BatchPtr batch) override {
    const auto& in = column_batch_cast(*batch);
    const int own = input, other = 1 - input;
    const std::size_t n = in.size();
    const std::int64_t op_time = operator_time();
    const std::int64_t expiration = expiration_time(op_time, relative_[other]);
    const EventTime arrival_wm = std::max<EventTime>(lateness_watermark(ctx()), op_time);  // the rows' W
    load_batch(in, own, other);
    // Which rows scan the other side's cache (Flink's short cut on its expiration time).
    scans_.assign(n, false);
    for (std::size_t r = 0; r < n; ++r) {
      if (window_negative() || expiration_[other] >= times_[r] + relative_[own]) continue;
      expiration_[other] = expiration;
      scans_[r] = true;
    }
    // Candidate pairs (cached rows in the row's window) in chunks of at most kMaxPairs
    // (a row with more is a chunk of its own); the residual over a chunk's pairs at once,
    // then the chunk's rows in order.
    pair_begin_.resize(n + 1);
    for (std::size_t r = 0; r < n;) {
      joined_.reset_pairs();
      std::size_t end = r;
      while (end < n && (end == r || joined_.num_pairs() < kMaxPairs)) {
        pair_begin_[end] = joined_.num_pairs();
        if (scans_[end] && !has_null_key(in, end, spec_.keys[own], spec_.filter_nulls)) {
          const std::int64_t t = times_[end];
          const auto range = key_rows_.at(key_of(end));
          for (std::uint32_t c = range.first; c < range.second; ++c) {
            const std::int64_t ct = cached_[c].time;
            if (ct >= t - relative_[other] && ct <= t + relative_[own] && arrival_wm < ct + relative_[other] &&
                cached_[c].watermark < t + relative_[own])
              joined_.add_pair(static_cast<std::uint32_t>(end), c);
          }
        }
        ++end;
      }
      pair_begin_[end] = joined_.num_pairs();
      joined_.evaluate(own, in, other_rows_[other]);
      for (; r < end; ++r) process_row(in, r, own, other, op_time, expiration, arrival_wm);
    }
    write_back(other);
    joined_.flush(output());
  }

  void process_watermark(Watermark wm) override {
    if (!wm.idle) {
      ctx().timer_service().advance_watermark(wm.timestamp, [this](const Timer& t) { on_event_time_timer(t); });
      joined_.flush(output());
      if (wm.timestamp != kMaxEventTime && __builtin_sub_overflow(wm.timestamp, delay_, &wm.timestamp))
        wm.timestamp = kMinEventTime;
    }
    output().emit_watermark(wm);
  }

  void on_event_time_timer(const Timer& t) override {
    backend_->set_current_key(t.key);
    const std::int64_t op_time = operator_time();
    // Flink checks the timer cleaning the right cache first.
    for (int side : {1, 0}) {
      if (read_timer(side) != t.time) continue;
      expiration_[side] = expiration_time(op_time, relative_[side]);
      remove_expired(side, expiration_[side], t.key, t.time);
    }
  }

 private:
  bool window_negative() const { return cfg_->upper_ms < cfg_->lower_ms; }

  // Flink's calExpirationTime: rows at or before it can no longer be joined. At the end of
  // the input (the maximum watermark) everything expires; saturates instead of overflowing.
  static std::int64_t expiration_time(std::int64_t op_time, std::int64_t relative) {
    if (op_time == std::numeric_limits<std::int64_t>::max()) return op_time;
    std::int64_t out;
    if (__builtin_sub_overflow(op_time, relative, &out) || __builtin_sub_overflow(out, 1, &out))
      return relative >= 0 ? std::numeric_limits<std::int64_t>::min() : std::numeric_limits<std::int64_t>::max();
    return out;
  }

  std::int64_t operator_time() {
    const EventTime wm = ctx().timer_service().current_watermark();
    return wm > 0 ? wm : 0;
  }

  std::string_view key_of(std::size_t r) const {
    std::size_t from = r == 0 ? 0 : key_end_[r - 1];
    return std::string_view(keys_).substr(from, key_end_[r] - from);
  }

  std::int64_t row_time(const ColumnBatch& in, std::size_t r, int side) const {
    return time_attribute_ms(spec_, side, in, r, cfg_->time_column[side]);
  }

  // Keys and times of the batch's rows; the other side's cached rows of each key.
  void load_batch(const ColumnBatch& in, int own, int other) {
    const std::size_t n = in.size();
    keys_.clear();
    key_end_.resize(n);
    times_.resize(n);
    for (std::size_t r = 0; r < n; ++r) {
      key_encoder_[own].encode(in, r, keys_);
      key_end_[r] = keys_.size();
      times_[r] = row_time(in, r, own);
    }
    key_rows_.clear();
    cached_.clear();
    buckets_.clear();
    bytes_.clear();
    other_rows_[other].clear();
    if (window_negative()) return;
    for (std::size_t r = 0; r < n; ++r) {
      auto [it, created] = key_rows_.try_emplace(key_of(r));
      if (!created) continue;
      const std::string_view key = it->first;
      backend_->set_current_key(key);
      const auto first = static_cast<std::uint32_t>(cached_.size());
      backend_->map_for_each(cache_[other], [&](std::string_view time_bytes, std::string_view value) {
        Bucket b;
        b.key = key;
        b.time = KeyCodec<std::int64_t>::decode(time_bytes);
        b.first = static_cast<std::uint32_t>(cached_.size());
        while (!value.empty()) {
          CachedRow c;
          c.time = b.time;
          c.bucket = static_cast<std::uint32_t>(buckets_.size());
          const CachedHeader h = read_header(value, spec_.where);
          c.emitted = h.emitted;
          c.watermark = h.watermark;
          const std::size_t len = KeyCodec<std::uint32_t>::decode(value);
          if (len > value.size()) throw ClinkError(spec_.where + ": corrupt interval join state");
          c.row = static_cast<std::uint32_t>(other_rows_[other].size());
          c.bytes_at = bytes_.size();
          c.bytes_len = len;
          bytes_.append(value.substr(0, len));
          codec_[other].decode(value.substr(0, len), other_rows_[other]);
          value.remove_prefix(len);
          cached_.push_back(c);
        }
        b.last = static_cast<std::uint32_t>(cached_.size());
        buckets_.push_back(b);
        return true;
      });
      it->second = {first, static_cast<std::uint32_t>(cached_.size())};
    }
  }

  void process_row(const ColumnBatch& in, std::size_t r, int own, int other, std::int64_t op_time,
                   std::int64_t expiration, EventTime arrival_wm) {
    const std::int64_t t = times_[r];
    const std::int64_t lower = t - relative_[other], upper = t + relative_[own];
    bool emitted = false;
    if (scans_[r]) {
      const auto range = key_rows_.at(key_of(r));
      std::size_t p = pair_begin_[r];
      const std::size_t p_end = pair_begin_[r + 1];
      // Bucket by bucket in time order: join its rows, then drop it if expired.
      for (std::uint32_t c = range.first; c < range.second;) {
        Bucket& b = buckets_[cached_[c].bucket];
        if (!b.removed) {
          if (b.time >= lower && b.time <= upper) {
            for (std::uint32_t i = b.first; i < b.last; ++i) {
              while (p < p_end && joined_.other_row(p) < cached_[i].row) ++p;
              if (p >= p_end || joined_.other_row(p) != cached_[i].row || !joined_.matches(p)) continue;
              joined_.emit_pair(p, RowKind::kInsert, in.event_times()[r]);
              emitted = true;
              if (spec_.outer[other] && !cached_[i].emitted) {
                cached_[i].emitted = true;
                b.dirty = true;
              }
            }
          }
          if (b.time <= expiration) {
            if (spec_.outer[other])
              for (std::uint32_t i = b.first; i < b.last; ++i)
                if (!cached_[i].emitted)
                  joined_.emit_padded(other, other_rows_[other], cached_[i].row, RowKind::kInsert, in.event_times()[r]);
            b.removed = true;
            b.dirty = true;
          }
        }
        c = b.last;
      }
    }
    if (!window_negative() && op_time < upper) {
      cache_row(in, r, own, t, emitted, arrival_wm >= t ? arrival_wm : kMinEventTime);
    } else if (!emitted && spec_.outer[own]) {
      joined_.emit_padded(own, in, r, RowKind::kInsert, in.event_times()[r]);
    }
    if (joined_.pending() >= kDefaultBatchSize) joined_.flush(output());
  }

  void cache_row(const ColumnBatch& in, std::size_t r, int own, std::int64_t t, bool emitted, EventTime late_wm) {
    backend_->set_current_key(key_of(r));
    time_key_.clear();
    KeyCodec<std::int64_t>::encode(t, time_key_);
    if (!backend_->map_get(cache_[own], time_key_, value_)) value_.clear();
    row_bytes_.clear();
    codec_[own].encode(in, r, row_bytes_);
    write_header(value_, emitted, late_wm);
    KeyCodec<std::uint32_t>::encode(static_cast<std::uint32_t>(row_bytes_.size()), value_);
    value_.append(row_bytes_);
    backend_->map_put(cache_[own], time_key_, value_);
    if (!read_timer(own)) register_cleanup(own, t, key_of(r));
  }

  void register_cleanup(int side, std::int64_t row_time, std::string_view key) {
    const std::int64_t at = row_time + relative_[side] + min_cleanup_ + 1;
    ctx().timer_service().register_event_time_timer(at, key, {});
    value_.clear();
    KeyCodec<std::int64_t>::encode(at, value_);
    backend_->put(timer_[side], value_);
  }
  std::optional<std::int64_t> read_timer(int side) {
    if (!backend_->get(timer_[side], timer_bytes_)) return std::nullopt;
    std::string_view v(timer_bytes_);
    return KeyCodec<std::int64_t>::decode(v);
  }

  // The other side's buckets this batch changed (emitted flags, expired rows).
  void write_back(int other) {
    for (const Bucket& b : buckets_) {
      if (!b.dirty) continue;
      backend_->set_current_key(b.key);
      time_key_.clear();
      KeyCodec<std::int64_t>::encode(b.time, time_key_);
      if (b.removed) {
        backend_->map_remove(cache_[other], time_key_);
        continue;
      }
      value_.clear();
      for (std::uint32_t i = b.first; i < b.last; ++i) {
        write_header(value_, cached_[i].emitted, cached_[i].watermark);
        KeyCodec<std::uint32_t>::encode(static_cast<std::uint32_t>(cached_[i].bytes_len), value_);
        value_.append(bytes_, cached_[i].bytes_at, cached_[i].bytes_len);
      }
      backend_->map_put(cache_[other], time_key_, value_);
    }
  }

  // Flink's removeExpiredRows for the current key: drops the side's rows at or before
  // `expiration` (padding unmatched ones of an outer side), re-arms the cleanup timer for
  // the earliest row left or clears the timer state.
  void remove_expired(int side, std::int64_t expiration, const std::string& key, std::int64_t timer_time) {
    std::optional<std::int64_t> earliest;
    expired_keys_.clear();
    padded_[side].clear();
    backend_->map_for_each(cache_[side], [&](std::string_view time_bytes, std::string_view value) {
      std::string_view tb = time_bytes;
      const std::int64_t time = KeyCodec<std::int64_t>::decode(tb);
      if (time > expiration) {
        if (!earliest || time < *earliest) earliest = time;
        return true;
      }
      expired_keys_.emplace_back(time_bytes);
      if (spec_.outer[side])
        while (!value.empty()) {
          const bool emitted = read_header(value, spec_.where).emitted;
          const std::size_t len = KeyCodec<std::uint32_t>::decode(value);
          if (!emitted) codec_[side].decode(value.substr(0, len), padded_[side]);
          value.remove_prefix(len);
        }
      return true;
    });
    for (const auto& k : expired_keys_) backend_->map_remove(cache_[side], k);
    for (std::size_t i = 0; i < padded_[side].size(); ++i)
      joined_.emit_padded(side, padded_[side], i, RowKind::kInsert, timer_time);
    padded_[side].clear();
    if (earliest) register_cleanup(side, *earliest, key);
    else backend_->remove(timer_[side]);
  }

  std::shared_ptr<const IntervalJoinConfig> cfg_;
  const JoinSpec& spec_;
  SideRowCodec codec_[2];
  RowKeyEncoder key_encoder_[2];
  ColumnBatch other_rows_[2];
  JoinedRows joined_;
  KeyedStateBackend* backend_ = nullptr;
  StateId cache_[2], timer_[2];
  std::int64_t relative_[2] = {0, 0};  // Flink's leftRelativeSize, rightRelativeSize
  std::int64_t min_cleanup_ = 0, delay_ = 0;
  std::int64_t expiration_[2] = {0, 0};  // Flink's leftExpirationTime, rightExpirationTime
  // Per batch (buffers reused).
  std::string keys_;
  std::vector<std::size_t> key_end_;
  std::vector<std::int64_t> times_;
  absl::flat_hash_map<std::string_view, std::pair<std::uint32_t, std::uint32_t>> key_rows_;
  std::vector<CachedRow> cached_;
  std::vector<Bucket> buckets_;
  std::string bytes_;
  std::vector<bool> scans_;
  std::vector<std::size_t> pair_begin_;
  std::vector<std::string> expired_keys_;
  ColumnBatch padded_[2];
  std::string time_key_, value_, row_bytes_, timer_bytes_;
};

}  // namespace

void register_sql_interval_join(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "sql_interval_join",
      .description = "sql_row x sql_row -> sql_row: event-time interval join (inner, left, right, full outer), "
                     "append-only, state cleaned up by the watermark",
      .num_inputs = 2,
      .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        SqlOpParams p(ctx, "sql_interval_join",
                      JoinSpec::param_names({"left_time", "right_time", "lower_ms", "upper_ms"}));
        auto cfg = std::make_shared<IntervalJoinConfig>();
        cfg->spec = JoinSpec::parse(p);
        cfg->time_column[0] = cfg->spec.time_column(p, 0, "left_time");
        cfg->time_column[1] = cfg->spec.time_column(p, 1, "right_time");
        cfg->lower_ms = p.require_int("lower_ms");
        cfg->upper_ms = p.require_int("upper_ms");
        return [cfg] { return std::make_unique<SqlIntervalJoinOperator>(cfg); };
      }});
}

}  // namespace clink::sql
