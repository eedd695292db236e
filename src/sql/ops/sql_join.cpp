// sql_join: the regular streaming join, Flink's StreamingJoinOperator. Both inputs are
// hash-partitioned by the equi-join key and keyed by it; each side keeps, per key, a map
// state from the row (SideRowCodec's bytes, row kind erased) to the number of times it
// is present and, for a preserved (outer) side, the number of other-side rows it joined
// with (Flink's OuterJoinRecordStateView). Per input row, in order:
//   accumulate (+I/+U), input side outer:   no match: +I[row+NULLs], else for every matched
//                                           other row without matches so far (other side
//                                           outer) -D[NULLs+other], then +I[row+other]s
//   accumulate, input side inner:           matches: +I[row+other]s (+U when the input
//                                           was +U and the other side is inner), with the
//                                           other side's -D[NULLs+other] first as above
//   retract (-U/-D):                        -D (input side outer) or the input's kind for
//                                           [row+other]s, or -D[row+NULLs] without a
//                                           match; then +I[NULLs+other] for other rows
//                                           left without matches (other side outer)
// A key with a NULL in a `=` column never matches (the row is still kept). The residual
// condition is evaluated over all candidate pairs of a batch in one vectorised pass (the
// other side's state does not change while one side's batch is processed, except for
// the match counts, which are cached and written back at the end of the batch).
// Output rows carry no event time (a regular join does not keep time attributes).
#include <cstdint>

#include <absl/container/flat_hash_map.h>

#include "clink/core/error.hpp"
#include "clink/state/keyed_state_backend.hpp"
#include "clink/state/state_codec.hpp"
#include "clink/state/state_ttl.hpp"
#include "sql_join_common.hpp"
#include "sql_op_registration.hpp"

namespace clink::sql {
namespace {

// Candidate pairs evaluated at once (bounds the joined rows materialised per chunk).
constexpr std::size_t kMaxPairs = 16 * 1024;

struct JoinConfig {
  JoinSpec spec;
  std::int64_t state_ttl_ms = 0;
};

// A state entry's value: [TTL timestamp] varint(count) varint(matches): two bytes for
// the common row that is present once (the value is stored with every row).
struct RecordValue {
  std::int32_t count = 0;
  std::int32_t matches = 0;
};

class SqlJoinOperator final : public StreamOperator {
 public:
  explicit SqlJoinOperator(std::shared_ptr<const JoinConfig> cfg)
      : cfg_(std::move(cfg)),
        spec_(cfg_->spec),
        codec_{SideRowCodec(*spec_.side[0]), SideRowCodec(*spec_.side[1])},
        key_encoder_{RowKeyEncoder(*spec_.side[0], spec_.keys[0]), RowKeyEncoder(*spec_.side[1], spec_.keys[1])},
        other_rows_{ColumnBatch(spec_.side[0]), ColumnBatch(spec_.side[1])},
        joined_(spec_) {}

  int num_inputs() const override { return 2; }

  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    if (spec_.keys[0].empty() && ctx.parallelism() > 1)
      throw ClinkError(spec_.where + ": a join without equi-join keys runs at parallelism 1, got " +
                       std::to_string(ctx.parallelism()));
    backend_ = ctx.keyed_state_backend_or_private();
    backend_->set_current_namespace({});
    state_[0] = backend_->register_state("join-left", StateKind::kMap, cfg_->state_ttl_ms);
    state_[1] = backend_->register_state("join-right", StateKind::kMap, cfg_->state_ttl_ms);
  }

  void process_batch(int input, BatchPtr batch) override {
    const auto& in = column_batch_cast(*batch);
    const int own = input, other = 1 - input;
    const std::size_t n = in.size();
    now_ = cfg_->state_ttl_ms > 0 ? backend_->clock().now_ms() : 0;
    // 1. Every row's key, then the other side's rows of each distinct key (decoded once).
    keys_.clear();
    key_end_.resize(n);
    for (std::size_t r = 0; r < n; ++r) {
      key_encoder_[own].encode(in, r, keys_);
      key_end_[r] = keys_.size();
    }
    touched_.clear();
    entries_.clear();
    entry_bytes_.clear();
    other_rows_[other].clear();
    row_entries_.resize(n);
    row_range_.resize(n);
    for (std::size_t r = 0; r < n; ++r) {
      std::string_view key = key_of(r);
      auto [it, created] = touched_.try_emplace(key);
      if (created) it->second = load_other(key, other);
      const bool null_key = has_null_key(in, r, spec_.keys[own], spec_.filter_nulls);
      row_entries_[r] = null_key ? Range{0, 0} : it->second;
    }
    // 2. In chunks of rows whose candidate pairs stay under kMaxPairs (so a hot key does
    // not materialise rows x matches joined rows at once), the residual over the chunk's
    // pairs in one pass, then 3. per row, in order: Flink's transitions and emissions.
    for (std::size_t r = 0; r < n;) {
      joined_.reset_pairs();
      std::size_t end = r;
      while (end < n && (end == r || joined_.num_pairs() + (row_entries_[end].second - row_entries_[end].first) <=
                                         kMaxPairs)) {
        row_range_[end].first = static_cast<std::uint32_t>(joined_.num_pairs());
        for (std::uint32_t e = row_entries_[end].first; e < row_entries_[end].second; ++e)
          joined_.add_pair(static_cast<std::uint32_t>(end), e);
        row_range_[end].second = static_cast<std::uint32_t>(joined_.num_pairs());
        ++end;
      }
      joined_.evaluate(own, in, other_rows_[other]);
      for (; r < end; ++r) process_row(in, r, own, other);
    }
    // 4. Match counts of the other side's rows changed by this batch.
    for (auto& e : entries_) {
      if (!e.dirty) continue;
      backend_->set_current_key(e.key);
      put_value(other, std::string_view(entry_bytes_).substr(e.bytes_at, e.bytes_len), {e.count, e.matches});
    }
    joined_.flush(output());
  }

 private:
  struct OtherEntry {
    std::string_view key;  // into keys_ (stable for the batch)
    std::size_t bytes_at = 0, bytes_len = 0;  // the row bytes in entry_bytes_
    std::int32_t count = 0;
    std::int32_t matches = 0;
    bool dirty = false;
  };
  using Range = std::pair<std::uint32_t, std::uint32_t>;

  std::string_view key_of(std::size_t r) const {
    std::size_t from = r == 0 ? 0 : key_end_[r - 1];
    return std::string_view(keys_).substr(from, key_end_[r] - from);
  }

  // Reads the other side's rows under `key` into entries_ / other_rows_.
  Range load_other(std::string_view key, int other) {
    backend_->set_current_key(key);
    auto first = static_cast<std::uint32_t>(entries_.size());
    expired_.clear();
    backend_->map_for_each(state_[other], [&](std::string_view row, std::string_view value) {
      RecordValue v;
      if (!read_value(value, v)) {
        expired_.emplace_back(row);
        return true;
      }
      OtherEntry e;
      e.key = key;
      e.bytes_at = entry_bytes_.size();
      e.bytes_len = row.size();
      e.count = v.count;
      e.matches = v.matches;
      entry_bytes_.append(row);
      entries_.push_back(e);
      codec_[other].decode(row, other_rows_[other]);
      return true;
    });
    for (const auto& row : expired_) backend_->map_remove(state_[other], row);
    return {first, static_cast<std::uint32_t>(entries_.size())};
  }

  void process_row(const ColumnBatch& in, std::size_t r, int own, int other) {
    const RowKind kind = in.row_kind(r);
    const bool input_outer = spec_.outer[own], other_outer = spec_.outer[other];
    // The matched pairs (each other row once; it counts `count` times).
    matched_.clear();
    std::int32_t occurrences = 0;
    for (std::size_t p = row_range_[r].first; p < row_range_[r].second; ++p)
      if (joined_.matches(p)) {
        matched_.push_back(p);
        occurrences += entries_[pair_entry(p)].count;
      }
    const ColumnBatch& others = other_rows_[other];
    row_bytes_.clear();
    codec_[own].encode(in, r, row_bytes_);
    backend_->set_current_key(key_of(r));
    if (is_accumulate(kind)) {
      if (occurrences == 0) {
        if (input_outer) joined_.emit_padded(own, in, r, RowKind::kInsert);
        add_record(own, 0);
        return;
      }
      RowKind out_kind = kind;
      if (other_outer) {
        for (std::size_t p : matched_) {
          auto& e = entries_[pair_entry(p)];
          if (e.matches == 0)
            for (std::int32_t i = 0; i < e.count; ++i) joined_.emit_padded(other, others, pair_entry(p), RowKind::kDelete);
          e.matches += 1;
          e.dirty = true;
        }
        out_kind = RowKind::kInsert;
      }
      if (input_outer) out_kind = RowKind::kInsert;
      emit_matches(out_kind);
      add_record(own, occurrences);
      return;
    }
    retract_record(own);
    if (occurrences == 0) {
      if (input_outer) joined_.emit_padded(own, in, r, RowKind::kDelete);
      return;
    }
    emit_matches(input_outer ? RowKind::kDelete : kind);
    if (other_outer)
      for (std::size_t p : matched_) {
        auto& e = entries_[pair_entry(p)];
        if (e.matches == 1)
          for (std::int32_t i = 0; i < e.count; ++i) joined_.emit_padded(other, others, pair_entry(p), RowKind::kInsert);
        e.matches -= 1;
        e.dirty = true;
      }
  }

  std::uint32_t pair_entry(std::size_t p) const { return joined_.other_row(p); }

  void emit_matches(RowKind kind) {
    for (std::size_t p : matched_)
      for (std::int32_t i = 0; i < entries_[pair_entry(p)].count; ++i) joined_.emit_pair(p, kind);
    if (joined_.pending() >= kDefaultBatchSize) joined_.flush(output());
  }

  // The current key's entry for row_bytes_ on side `side`, changed with one lookup (an
  // expired entry counts as absent).
  void add_record(int side, std::int32_t matches) {
    backend_->map_update(state_[side], row_bytes_, [&](bool present, std::string_view current, std::string& next) {
      RecordValue v;
      if (present && read_value(current, v)) v.count += 1;
      else v.count = 1;
      v.matches = matches;  // Flink's addRecord(record, numOfAssociations) overwrites it
      encode_value(v, next);
      return true;
    });
  }
  void retract_record(int side) {
    backend_->map_update(state_[side], row_bytes_, [&](bool present, std::string_view current, std::string& next) {
      RecordValue v;
      if (!present || !read_value(current, v) || v.count <= 1) return false;
      v.count -= 1;
      encode_value(v, next);
      return true;
    });
  }

  bool read_value(std::string_view value, RecordValue& v) const {
    if (cfg_->state_ttl_ms > 0) {
      std::int64_t ts = get_ttl_timestamp(value);
      if (ttl_expired(ts, cfg_->state_ttl_ms, now_)) return false;
    }
    const std::uint64_t count = get_varint(value);
    const std::uint64_t matches = get_varint(value);
    if (!value.empty() || count > INT32_MAX || matches > INT32_MAX)
      throw ClinkError(spec_.where + ": corrupt join state value");
    v.count = static_cast<std::int32_t>(count);
    v.matches = static_cast<std::int32_t>(matches);
    return true;
  }
  void encode_value(RecordValue v, std::string& out) const {
    if (cfg_->state_ttl_ms > 0) put_ttl_timestamp(now_, out);
    put_varint(static_cast<std::uint64_t>(v.count), out);
    put_varint(static_cast<std::uint64_t>(v.matches), out);
  }
  void put_value(int side, std::string_view row, RecordValue v) {
    value_.clear();
    encode_value(v, value_);
    backend_->map_put(state_[side], row, value_);
  }

  std::shared_ptr<const JoinConfig> cfg_;
  const JoinSpec& spec_;
  SideRowCodec codec_[2];
  RowKeyEncoder key_encoder_[2];
  ColumnBatch other_rows_[2];
  JoinedRows joined_;
  KeyedStateBackend* backend_ = nullptr;
  StateId state_[2];
  std::int64_t now_ = 0;
  // Per batch (buffers reused across batches).
  std::string keys_;
  std::vector<std::size_t> key_end_;
  absl::flat_hash_map<std::string_view, Range> touched_;
  std::vector<OtherEntry> entries_;
  std::string entry_bytes_;
  std::vector<Range> row_entries_;  // per row: its candidates in entries_ (none for a NULL key)
  std::vector<Range> row_range_;    // per row: its pairs in the current chunk
  std::vector<std::size_t> matched_;
  std::vector<std::string> expired_;
  std::string row_bytes_, value_;
};

}  // namespace

void register_sql_join(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "sql_join",
      .description = "sql_row x sql_row -> sql_row: regular streaming equi-join (inner, left, right, full) with a "
                     "residual condition and Flink's changelog, retracting inputs accepted",
      .num_inputs = 2,
      .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        auto names = JoinSpec::param_names();
        names.push_back("state_ttl_ms");
        SqlOpParams p(ctx, "sql_join", names);
        auto cfg = std::make_shared<JoinConfig>();
        cfg->spec = JoinSpec::parse(p);
        cfg->state_ttl_ms = p.get_int("state_ttl_ms", 0, 0);
        return [cfg] { return std::make_unique<SqlJoinOperator>(cfg); };
      }});
}

}  // namespace clink::sql
