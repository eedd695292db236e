// sql_group_aggregate: unbounded GROUP BY with Flink's changelog (GroupAggFunction):
// per input row, in order, the group's accumulator is updated and
//   a new group               -> +I[keys, values]
//   a changed group           -> -U[keys, old values], +U[keys, new values]
//   values unchanged          -> nothing without a state TTL; -U/+U with one (Flink emits
//                                them so downstream state is refreshed too)
//   the group's row count 0   -> -D[keys, old values], state cleared
//   a retraction (-U / -D) for a group without state -> ignored, as Flink does.
// Without mini-batch, no folding: a batch updating one group several times emits every
// intermediate change, exactly what Flink emits per record. With mini-batch
// (table.exec.mini-batch.*, Flink's MiniBatchGroupAggFunction) the rows of up to `size`
// input rows, or of `allow-latency` of processing time, are folded per group: each
// group touched is read and written once and emits at most one change (+I, -U/+U or
// -D) per mini-batch. A mini-batch also ends at a watermark, a checkpoint barrier (its
// changes go out before the barrier, so nothing buffered needs checkpointing) and the
// end of input.
// DISTINCT is this operator without aggregates. Accumulators (AggregateSet: the registry's
// aggregate functions, built-in or user-defined) live in keyed state (state "group-agg",
// the row count then each call's serialized accumulator), read once per group per batch
// and written back at the end of the batch.
// A DISTINCT call keeps its distinct values apart, as Flink's DistinctAggregate keeps a
// MapView: map state "group-agg-distinct", per group (slot, argument tuple) -> counts,
// so a batch touches only the values it sees instead of re-serialising all of them; the
// group block holds the inner aggregate's accumulator, fed a value when its count goes
// 0 -> 1 and retracted when it goes 1 -> 0. DISTINCT calls over the same arguments share
// one slot (as Flink's distinct calls on one field share a MapView): one entry holds a
// count per call (each call counts the rows its FILTER passes), so COUNT(DISTINCT x) under
// four filters costs one state lookup per row, not four. Counts are read once per
// (group, value) per batch and written back with the blocks. The map is only point-read
// and cleared, so it is an unordered map state (unordered_map_state.hpp: the memory
// backend hashes it, at a cost per row that does not grow with the group's values). An
// entry's map key is the value's key bytes, then the slot (values first: an ordered
// backend's B-trees tell keys apart by the bytes after those all keys share, and a
// leading slot number shared by half the keys would leave none). On insert-only input a
// count stops at 1 (Flink's append-only distinct keeps a seen-flag too): nothing ever
// retracts the value, so a value seen before is only read, never rewritten.
// The global phase of a two-phase aggregation (`merge_accumulators`, Flink's
// GlobalGroupAggregate): each input row is [keys..., accumulator bytes] from
// sql_local_group_aggregate, one per group per upstream mini-batch, merged into the group
// instead of accumulated; the emissions are as above, by the merged row count (a group
// whose first merged rows leave its count at 0 or below emits nothing, as Flink's
// GlobalGroupAggFunction). No DISTINCT calls (the planner keeps those in one phase).
// `state_ttl_ms` (table.exec.state.ttl): as Flink's StateTtlConfig on the accumulator and
// the distinct map (OnCreateAndWrite, NeverReturnExpired), a group expires that long
// after its last row; the next row starts a fresh group (+I, no retraction of the
// expired result) and a retraction finds nothing. Every row rewrites its group, and the
// distinct entries it touches, with the batch's processing time; an expired group drops
// its distinct values with it (they are never newer than the group).
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "clink/runtime/operator.hpp"
#include "clink/sql/common/column_key.hpp"
#include "clink/sql/function/function_registry.hpp"
#include "clink/sql/ops/sql_aggregates.hpp"
#include "clink/sql/ops/sql_grouping.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"
#include "clink/state/keyed_state_backend.hpp"
#include "clink/state/state_ttl.hpp"
#include "clink/state/unordered_map_state.hpp"
#include "sql_op_registration.hpp"

namespace clink::sql {
namespace {

struct GroupAggConfig {
  std::string where;
  SchemaPtr out_schema;
  SqlGrouping grouping;
  // The calls as the group block holds them: a DISTINCT call with its values in map
  // state runs its inner aggregate here (marked distinct); the others as given.
  std::shared_ptr<const AggregateSet> aggs;
  // The calls whose values live in map state, by argument columns: one slot per
  // distinct argument list, its calls in call order.
  std::vector<std::vector<std::size_t>> distinct_slots;
  bool input_retracts = true;
  // Global phase: the input's column holding each row's accumulator bytes (none: rows).
  std::optional<std::size_t> accumulator_column;
  std::int64_t state_ttl_ms = 0;             // 0: state never expires
  std::int64_t mini_batch_size = 0;          // 0: no mini-batch (emit per row)
  std::int64_t mini_batch_latency_ms = 0;
};

// The block's calls: DISTINCT over an aggregate becomes the inner aggregate (sharing
// ownership with the DISTINCT function), marked distinct; every other call keeps
// distinct = false so that AggregateSet::add_except_distinct runs it.
std::vector<RuntimeAggregate> block_calls(const std::vector<RuntimeAggregate>& calls,
                                          std::vector<std::vector<std::size_t>>& distinct_slots) {
  std::vector<RuntimeAggregate> out = calls;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const AggregateFunction* inner = out[i].fn->distinct_inner();
    out[i].distinct = inner != nullptr;
    if (!inner) continue;
    out[i].fn = std::shared_ptr<const AggregateFunction>(out[i].fn, inner);
    auto slot = std::find_if(distinct_slots.begin(), distinct_slots.end(),
                             [&](const auto& s) { return out[s[0]].args == out[i].args; });
    if (slot == distinct_slots.end()) distinct_slots.push_back({i});
    else slot->push_back(i);
  }
  return out;
}

class SqlGroupAggregateOperator final : public StreamOperator {
 public:
  explicit SqlGroupAggregateOperator(GroupAggConfig cfg) : cfg_(std::move(cfg)) {}

  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    if (!cfg_.grouping.routed() && ctx.parallelism() > 1)
      throw ClinkError(cfg_.where + ": " +
                       (cfg_.grouping.keys.empty() ? std::string("an aggregation without keys")
                                                   : std::string("several grouping sets")) +
                       " runs at parallelism 1, got " + std::to_string(ctx.parallelism()));
    backend_ = ctx.keyed_state_backend_or_private();
    backend_->set_current_namespace({});
    state_ = backend_->register_state("group-agg", StateKind::kValue, cfg_.state_ttl_ms);
    if (!cfg_.distinct_slots.empty())
      // Only point-read and cleared: unordered, at a cost that does not grow with the map.
      distinct_state_ = register_unordered_map_state(*backend_, "group-agg-distinct", cfg_.state_ttl_ms);
    if (mini_batch())  // a mini-batch's groups' first values, and one of them to compare
      for (const auto& c : cfg_.aggs->calls()) {
        first_values_.emplace_back(c.result_type);
        before_.emplace_back(c.result_type);
      }
  }

  void process_batch(int, BatchPtr batch) override {
    const auto& in = column_batch_cast(*batch);
    const AggregateSet& aggs = *cfg_.aggs;
    if (cfg_.accumulator_column) input_.batch = &in;  // the arguments are the local phase's
    else aggs.bind(in, input_);
    const std::size_t n = in.size(), sets = cfg_.grouping.num_sets();
    now_ms_ = ttl() ? backend_->clock().now_ms() : 0;
    if (mini_batch()) return fold(in, n, sets);
    for (std::size_t r = 0; r < n; ++r) {
      const RowKind kind = in.row_kind(r);
      const bool retract = kind == RowKind::kUpdateBefore || kind == RowKind::kDelete;
      const auto row = static_cast<std::uint32_t>(r);
      for (std::size_t s = 0; s < sets; ++s) {
        key_.clear();
        cfg_.grouping.encode(in, r, s, key_);
        Group* g = group(key_);
        if (!g->exists) {
          if (retract) continue;
          aggs.recreate(g->acc);
          g->exists = true;
          g->dirty = true;
          add(*g, row, 1);
          if (aggs.row_count(g->acc) <= 0) {  // merged accumulators that only retract
            g->exists = false;
            continue;
          }
          results(g->acc, now_);
          emit(RowKind::kInsert, key_, now_);
          continue;
        }
        results(g->acc, before_);
        add(*g, row, retract ? -1 : 1);
        g->dirty = true;
        if (aggs.row_count(g->acc) <= 0) {
          emit(RowKind::kDelete, key_, before_);
          g->exists = false;
          clear_distinct(*g, key_);
          continue;
        }
        results(g->acc, now_);
        if (!ttl() && same_results()) continue;
        emit(RowKind::kUpdateBefore, key_, before_);
        emit(RowKind::kUpdateAfter, key_, now_);
      }
    }
    write_back();
    flush();
  }

  void finish() override {
    end_mini_batch();
    flush();
  }
  void process_watermark(Watermark wm) override {
    end_mini_batch();
    StreamOperator::process_watermark(wm);
  }
  void snapshot_state(std::int64_t) override { end_mini_batch(); }
  void process_processing_time(std::int64_t now) override {
    ctx().timer_service().advance_processing_time(now, [this](const Timer&) {
      latency_timer_ = false;
      end_mini_batch();
    });
  }

 private:
  bool ttl() const { return cfg_.state_ttl_ms > 0; }
  bool mini_batch() const { return cfg_.mini_batch_size > 0; }

  // Mini-batch: the rows into their groups' accumulators, the changes kept for
  // end_mini_batch(). A group remembers whether it existed, and its values, when the
  // mini-batch first touched it.
  void fold(const ColumnBatch& in, std::size_t n, std::size_t sets) {
    const AggregateSet& aggs = *cfg_.aggs;
    for (std::size_t r = 0; r < n; ++r) {
      const RowKind kind = in.row_kind(r);
      const bool retract = kind == RowKind::kUpdateBefore || kind == RowKind::kDelete;
      const auto row = static_cast<std::uint32_t>(r);
      for (std::size_t s = 0; s < sets; ++s) {
        key_.clear();
        cfg_.grouping.encode(in, r, s, key_);
        const std::size_t touched = num_groups_;
        Group* g = group(key_);
        if (num_groups_ != touched) {
          g->existed = g->exists;
          if (g->exists) {
            results(g->acc, now_);
            g->first_values = first_values_rows_++;
            for (std::size_t c = 0; c < now_.size(); ++c) first_values_[c].append_range(now_[c], 0, 1);
          }
        }
        if (!g->exists) {
          if (retract) continue;
          aggs.recreate(g->acc);
          g->exists = true;
        }
        g->dirty = true;
        add(*g, row, retract ? -1 : 1);
        if (aggs.row_count(g->acc) <= 0) {
          g->exists = false;
          clear_distinct(*g, key_);
        }
      }
      if (++buffered_ >= cfg_.mini_batch_size) end_mini_batch();  // Flink's count trigger: exactly `size` rows
    }
    if (!latency_timer_ && buffered_ > 0) {
      TimerService& timers = ctx().timer_service();
      timers.register_processing_time_timer(timers.current_processing_time() + cfg_.mini_batch_latency_ms, {}, {});
      latency_timer_ = true;
    }
  }

  // Emits one change per group the mini-batch touched, in first-touch order, and writes
  // the groups back.
  void end_mini_batch() {
    if (!mini_batch() || num_groups_ == 0) return;
    for (std::size_t i = 0; i < num_groups_; ++i) {  // in first-touch order
      const Group& g = groups_[i];
      const std::string_view key = group_key(g);
      if (g.existed) {
        for (std::size_t c = 0; c < before_.size(); ++c) {
          before_[c].clear();
          before_[c].append_range(first_values_[c], g.first_values, g.first_values + 1);
        }
      }
      if (g.exists) results(g.acc, now_);
      if (!g.existed && g.exists) {
        emit(RowKind::kInsert, key, now_);
      } else if (g.existed && !g.exists) {
        emit(RowKind::kDelete, key, before_);
      } else if (g.existed && g.exists && (ttl() || !same_results())) {
        emit(RowKind::kUpdateBefore, key, before_);
        emit(RowKind::kUpdateAfter, key, now_);
      }
    }
    for (auto& c : first_values_) c.clear();
    first_values_rows_ = 0;
    buffered_ = 0;
    write_back();
    flush();
  }
  // Strips the TTL timestamp in front of a stored value; true when the value expired.
  bool strip_expired(std::string_view& v) const {
    return ttl() && ttl_expired(get_ttl_timestamp(v), cfg_.state_ttl_ms, now_ms_);
  }

  // One DISTINCT value's counts in a group (one per call of its slot), as read from map
  // state and as updated. The batch's entries live in flat arrays (no allocation per
  // entry): the key bytes (group key, then the map key) in distinct_keys_, the counts in
  // distinct_now_ / distinct_stored_.
  struct DistinctCount {
    std::uint32_t key_begin = 0, key_size = 0, group_key_size = 0;
    std::uint32_t counts = 0;  // the first of its calls' counts
  };
  // The entries' (and groups') index, by key bytes: hash and equality read them from the
  // operator's arrays.
  struct DistinctKeys {
    const std::string* bytes;
    const std::vector<DistinctCount>* entries;
    std::string_view key(std::uint32_t i) const {
      const DistinctCount& d = (*entries)[i];
      return std::string_view(*bytes).substr(d.key_begin, d.key_size);
    }
  };
  template <class Keys>
  struct IndexHash {
    using is_transparent = void;
    Keys keys;
    std::size_t operator()(std::string_view k) const { return absl::Hash<std::string_view>{}(k); }
    std::size_t operator()(std::uint32_t i) const { return (*this)(keys.key(i)); }
  };
  template <class Keys>
  struct IndexEq {
    using is_transparent = void;
    Keys keys;
    std::string_view view(std::string_view k) const { return k; }
    std::string_view view(std::uint32_t i) const { return keys.key(i); }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return view(a) == view(b);
    }
  };
  struct Group {
    AggState acc;  // kept from batch to batch (recreate / deserialize reuse its block)
    std::uint32_t key_begin = 0, key_size = 0;  // in group_keys_
    bool exists = false;
    bool dirty = false;
    // The group was deleted in this batch: its map state goes, and values seen after
    // the deletion start from 0.
    bool distinct_cleared = false;
    // Mini-batch: whether the group existed when the mini-batch first touched it, and
    // then its values' row in first_values_.
    bool existed = false;
    std::size_t first_values = 0;

    // The group of another key, not in state yet.
    void reuse(std::uint32_t begin, std::uint32_t size) {
      key_begin = begin;
      key_size = size;
      exists = dirty = distinct_cleared = existed = false;
      first_values = 0;
    }
  };
  struct GroupKeys {
    const std::string* bytes;
    const std::vector<Group>* groups;
    std::string_view key(std::uint32_t i) const {
      const Group& g = (*groups)[i];
      return std::string_view(*bytes).substr(g.key_begin, g.key_size);
    }
  };
  std::string_view group_key(const Group& g) const {
    return std::string_view(group_keys_).substr(g.key_begin, g.key_size);
  }

  // One row into the group's accumulators: the DISTINCT calls through their value counts.
  void add(Group& g, std::uint32_t row, int sign) {
    const AggregateSet& aggs = *cfg_.aggs;
    if (cfg_.accumulator_column) {
      std::string_view bytes = input_.batch->column(*cfg_.accumulator_column).string_at(row);
      aggs.deserialize(bytes, merged_);  // one block reused for every row
      aggs.merge(g.acc, merged_);
      return;
    }
    if (cfg_.distinct_slots.empty()) return aggs.add(g.acc, input_, row, sign);
    aggs.add_except_distinct(g.acc, input_, row, sign);
    for (std::size_t slot = 0; slot < cfg_.distinct_slots.size(); ++slot) {
      const auto& calls = cfg_.distinct_slots[slot];
      const auto& args = input_.args[calls[0]];
      bool has_null = false;
      for (const Column* a : args) has_null = has_null || a->is_null(row);
      if (has_null) continue;  // DISTINCT skips a tuple holding NULL, as the function does
      bool any = false;
      for (std::size_t call : calls) any = any || AggregateSet::passes_filter(input_, call, row);
      if (!any) continue;
      distinct_key_.assign(key_);
      for (const Column* a : args) append_key_value(*a, row, distinct_key_);
      StateCodec<std::uint32_t>::encode(static_cast<std::uint32_t>(slot), distinct_key_);
      std::int64_t* count = &distinct_now_[distinct_count(g, calls.size())];
      for (std::size_t j = 0; j < calls.size(); ++j) {
        if (!AggregateSet::passes_filter(input_, calls[j], row)) continue;
        const std::int64_t before = count[j];
        const std::int64_t after = cfg_.input_retracts ? before + sign : 1;
        count[j] = after;
        if ((sign > 0 && before <= 0 && after > 0) || (sign < 0 && before > 0 && after <= 0))
          aggs.add_call(g.acc, input_, calls[j], row, sign);
      }
    }
  }

  // Where the counts of distinct_key_ (group key_ first) are in distinct_now_, read from
  // map state on first touch.
  std::size_t distinct_count(const Group& g, std::size_t calls) {
    if (auto it = distinct_index_.find(std::string_view(distinct_key_)); it != distinct_index_.end())
      return distinct_entries_[*it].counts;
    DistinctCount d;
    d.key_begin = static_cast<std::uint32_t>(distinct_keys_.size());
    d.key_size = static_cast<std::uint32_t>(distinct_key_.size());
    d.group_key_size = static_cast<std::uint32_t>(key_.size());
    d.counts = static_cast<std::uint32_t>(distinct_now_.size());
    distinct_keys_ += distinct_key_;
    distinct_entries_.push_back(d);
    distinct_index_.insert(static_cast<std::uint32_t>(distinct_entries_.size() - 1));
    distinct_now_.resize(distinct_now_.size() + calls, 0);
    distinct_stored_.resize(distinct_stored_.size() + calls, 0);
    if (!g.distinct_cleared) {
      backend_->set_current_key(key_);
      const std::string_view user_key = std::string_view(distinct_key_).substr(key_.size());
      if (backend_->map_get(distinct_state_, user_key, bytes_)) {
        std::string_view v(bytes_);
        const bool expired = strip_expired(v);
        for (std::size_t j = 0; j < calls; ++j) distinct_stored_[d.counts + j] = StateCodec<std::int64_t>::decode(v);
        if (!v.empty())
          throw ClinkError(cfg_.where + ": a DISTINCT entry in state holds more than its " + std::to_string(calls) +
                           " counts (state written by another plan of this query?)");
        if (!expired)  // stored != count: write_back removes the entry
          std::copy_n(&distinct_stored_[d.counts], calls, &distinct_now_[d.counts]);
      }
    }
    return d.counts;
  }
  // The number of counts of entry i (its slot's calls).
  std::size_t distinct_calls(std::size_t i) const {
    const std::size_t end = i + 1 < distinct_entries_.size() ? distinct_entries_[i + 1].counts : distinct_now_.size();
    return end - distinct_entries_[i].counts;
  }

  // A deleted (or expired) group: its values seen so far in the batch count 0 again (a
  // scan of the batch's entries: deletions are rare next to rows).
  void clear_distinct(Group& g, std::string_view group_key) {
    if (cfg_.distinct_slots.empty()) return;
    g.distinct_cleared = true;
    for (std::size_t i = 0; i < distinct_entries_.size(); ++i) {
      const DistinctCount& d = distinct_entries_[i];
      if (std::string_view(distinct_keys_).substr(d.key_begin, d.group_key_size) == group_key)
        std::fill_n(&distinct_now_[d.counts], distinct_calls(i), 0);
    }
  }

  // The group's accumulator for this batch, read from keyed state on first touch.
  Group* group(std::string_view key) {
    if (auto it = group_index_.find(key); it != group_index_.end()) return &groups_[*it];
    if (num_groups_ == groups_.size()) groups_.emplace_back();
    Group& g = groups_[num_groups_];
    g.reuse(static_cast<std::uint32_t>(group_keys_.size()), static_cast<std::uint32_t>(key.size()));
    group_keys_ += key;
    group_index_.insert(static_cast<std::uint32_t>(num_groups_++));
    backend_->set_current_key(key);
    if (backend_->get(state_, bytes_)) {
      std::string_view v(bytes_);
      if (!strip_expired(v)) {
        cfg_.aggs->deserialize(v, g.acc);
        g.exists = true;
      } else {
        // Expired: removed at the end of the batch, with the group's distinct values.
        g.dirty = true;
        clear_distinct(g, key);
      }
    }
    return &g;
  }

  void write_back() {
    for (std::size_t i = 0; i < num_groups_; ++i) {
      if (groups_[i].distinct_cleared) {
        backend_->set_current_key(group_key(groups_[i]));
        backend_->map_clear(distinct_state_);
      }
    }
    for (std::size_t i = 0; i < distinct_entries_.size(); ++i) {
      const DistinctCount& d = distinct_entries_[i];
      const std::string_view entry = std::string_view(distinct_keys_).substr(d.key_begin, d.key_size);
      const std::string_view group_key = entry.substr(0, d.group_key_size);
      const std::int64_t* now = &distinct_now_[d.counts];
      const std::int64_t* stored = &distinct_stored_[d.counts];
      const std::size_t calls = distinct_calls(i);
      const bool cleared = groups_[*group_index_.find(group_key)].distinct_cleared;
      const bool zero = std::all_of(now, now + calls, [](std::int64_t c) { return c == 0; });
      const bool unchanged = cleared ? zero : std::equal(now, now + calls, stored);
      // With a TTL every touched value is rewritten (Flink puts it per row): its time refreshes.
      if (unchanged && (zero || !ttl())) continue;
      backend_->set_current_key(group_key);
      const std::string_view user_key = entry.substr(d.group_key_size);
      if (zero) {
        backend_->map_remove(distinct_state_, user_key);
      } else {
        bytes_.clear();
        if (ttl()) put_ttl_timestamp(now_ms_, bytes_);
        for (std::size_t j = 0; j < calls; ++j) StateCodec<std::int64_t>::encode(now[j], bytes_);
        backend_->map_put(distinct_state_, user_key, bytes_);
      }
    }
    distinct_index_.clear();
    distinct_entries_.clear();
    distinct_keys_.clear();
    distinct_now_.clear();
    distinct_stored_.clear();
    for (std::size_t i = 0; i < num_groups_; ++i) {
      const Group& g = groups_[i];
      if (!g.dirty) continue;
      backend_->set_current_key(group_key(g));
      if (g.exists) {
        bytes_.clear();
        if (ttl()) put_ttl_timestamp(now_ms_, bytes_);
        cfg_.aggs->serialize(g.acc, bytes_);
        backend_->put(state_, bytes_);
      } else {
        backend_->remove(state_);
      }
    }
    group_index_.clear();
    group_keys_.clear();
    num_groups_ = 0;
  }

  // The group's aggregate values into `cells` (one column per call, one row).
  void results(const AggState& acc, std::vector<Column>& cells) {
    if (cells.empty())
      for (const auto& c : cfg_.aggs->calls()) cells.emplace_back(c.result_type);

    for (auto& c : cells) c.clear();
    cfg_.aggs->append_results(acc, cells, 0);
  }
  bool same_results() const {
    for (std::size_t i = 0; i < now_.size(); ++i) {
      const Column &a = before_[i], &b = now_[i];
      if (a.is_valid(0) != b.is_valid(0)) return false;
      if (a.is_null(0)) continue;
      switch (a.layout()) {
        case PhysicalLayout::kFixed:
          if (std::memcmp(a.values<unsigned char>(), b.values<unsigned char>(),
                          static_cast<std::size_t>(fixed_width(a.type().kind()))) != 0)
            return false;
          break;
        case PhysicalLayout::kVarLen:
          if (a.string_at(0) != b.string_at(0)) return false;
          break;
        default:
          if (!(a.value_at(0) == b.value_at(0))) return false;
      }
    }
    return true;
  }

  // Appends row 0 of `cell` to `out` (the per-row changelog path: no gather setup).
  static void append_cell(Column& out, const Column& cell) {
    if (cell.is_null(0)) return out.append_null();
    switch (cell.layout()) {
      case PhysicalLayout::kFixed:
        switch (fixed_width(cell.type().kind())) {
          case 1: return out.append(cell.values<std::uint8_t>()[0]);
          case 2: return out.append(cell.values<std::uint16_t>()[0]);
          case 4: return out.append(cell.values<std::uint32_t>()[0]);
          case 8: return out.append(cell.values<std::uint64_t>()[0]);
          default: return out.append(cell.values<Int128>()[0]);
        }
      case PhysicalLayout::kVarLen: return out.append_string(cell.string_at(0));
      default: {
        static constexpr std::uint32_t kFirst = 0;
        return out.append_gather(cell, &kFirst, 1);
      }
    }
  }

  void emit(RowKind kind, std::string_view key, const std::vector<Column>& cells) {
    if (!out_) out_ = std::make_unique<ColumnBatch>(cfg_.out_schema, 64);
    const std::size_t set = cfg_.grouping.decode(key, *out_);
    const std::size_t nk = cfg_.grouping.keys.size();
    for (std::size_t i = 0; i < cells.size(); ++i) append_cell(out_->column(nk + i), cells[i]);
    cfg_.grouping.append_set_column(set, *out_);
    out_->row_kinds().push_back(kind);
    out_->event_times().push_back(kNoEventTime);
    if (out_->size() >= kDefaultBatchSize) flush();
  }
  void flush() {
    if (out_ && out_->size() > 0) output().emit(std::move(out_));
    out_.reset();
  }

  GroupAggConfig cfg_;
  KeyedStateBackend* backend_ = nullptr;
  StateId state_, distinct_state_;
  // The batch's groups in first-touch order (a mini-batch emits in that order), the
  // first num_groups_ of groups_, with their keys in group_keys_. The storage outlives
  // the batch: a group allocated a key string and an accumulator block per batch, most
  // of the operator's mallocs, now it allocates nothing.
  std::vector<Group> groups_;
  std::size_t num_groups_ = 0;
  std::string group_keys_;
  absl::flat_hash_set<std::uint32_t, IndexHash<GroupKeys>, IndexEq<GroupKeys>> group_index_{
      0, IndexHash<GroupKeys>{{&group_keys_, &groups_}}, IndexEq<GroupKeys>{{&group_keys_, &groups_}}};
  // The batch's DISTINCT entries (see DistinctCount).
  std::string distinct_keys_;
  std::vector<DistinctCount> distinct_entries_;
  std::vector<std::int64_t> distinct_now_, distinct_stored_;
  absl::flat_hash_set<std::uint32_t, IndexHash<DistinctKeys>, IndexEq<DistinctKeys>> distinct_index_{
      0, IndexHash<DistinctKeys>{{&distinct_keys_, &distinct_entries_}},
      IndexEq<DistinctKeys>{{&distinct_keys_, &distinct_entries_}}};
  AggregateInput input_;
  AggState merged_;  // the global phase: a row's accumulators, read to be merged
  std::string key_, distinct_key_, bytes_;
  std::int64_t now_ms_ = 0;  // the batch's processing time, with a state TTL
  std::vector<Column> before_, now_;
  std::unique_ptr<ColumnBatch> out_;
  // Mini-batch: the values of the groups that existed when first touched (one row
  // each); the input rows folded; whether the latency timer is set.
  std::vector<Column> first_values_;
  std::size_t first_values_rows_ = 0;
  std::int64_t buffered_ = 0;
  bool latency_timer_ = false;
};

}  // namespace

void register_sql_group_aggregate(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "sql_group_aggregate",
      .description = "sql_row -> sql_row: unbounded GROUP BY with a changelog (+I, -U/+U, -D), retracting input "
                     "accepted; without aggregates it is DISTINCT",
      .num_inputs = 1,
      .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        SqlOpParams p(ctx, "sql_group_aggregate", {"keys", "grouping_sets", "grouping_set_column", "aggregates", "input_retracts", "state_ttl_ms",
                                                        "mini_batch_size", "mini_batch_latency_ms", "merge_accumulators"});
        SchemaPtr in = p.input_schema(0);
        // The global phase: the aggregates' arguments are columns of the local phase's
        // input (`merge_accumulators` is its schema); the accumulators follow the keys.
        SchemaPtr agg_in = in;
        if (p.has("merge_accumulators")) agg_in = schema_from_json(p.params().at("merge_accumulators"), p.where());
        auto cfg = std::make_shared<GroupAggConfig>();
        cfg->where = p.where();
        cfg->out_schema = p.output_schema();
        cfg->grouping = SqlGrouping::parse(p, *in);
        cfg->state_ttl_ms = p.get_int("state_ttl_ms", 0, 0);
        cfg->mini_batch_size = p.get_int("mini_batch_size", 0, 0);
        cfg->mini_batch_latency_ms = p.get_int("mini_batch_latency_ms", 0, 0);
        // Insert-only input (the planner says so) lets MIN / MAX keep one value instead of
        // a multiset, and admits aggregate functions that cannot retract.
        const bool input_retracts = p.get_bool("input_retracts", true);
        cfg->input_retracts = input_retracts;
        const std::vector<RuntimeAggregate> calls =
            AggregateSet::parse(p.has("aggregates") ? p.params().at("aggregates") : nlohmann::json::array(), *agg_in, p,
                                input_retracts, FunctionRegistry::process());
        cfg->aggs = std::make_shared<const AggregateSet>(block_calls(calls, cfg->distinct_slots), true);
        if (p.has("merge_accumulators")) {
          if (!cfg->distinct_slots.empty() || !cfg->aggs->mergeable() || cfg->grouping.num_sets() != 1)
            p.fail("'merge_accumulators' takes one grouping set and aggregates that merge, without DISTINCT");
          cfg->accumulator_column = cfg->grouping.keys.size();
          if (in->size() != cfg->grouping.keys.size() + 1 || !in->field(*cfg->accumulator_column).type.is(TypeKind::kVarBinary))
            p.fail("'merge_accumulators': the input must be the keys, then the accumulators (BYTES)");
        }
        std::vector<RowField> fields;
        cfg->grouping.key_fields(*in, fields);
        for (const auto& c : cfg->aggs->calls()) fields.push_back({"", c.result_type});
        cfg->grouping.set_column_field(fields);
        check_output_types(*cfg->out_schema, fields, p);
        return [cfg] { return std::make_unique<SqlGroupAggregateOperator>(*cfg); };
      }});
}

}  // namespace clink::sql
