// sql_over_nontime: an OVER aggregate ordered by a column that is not a time attribute,
// UNBOUNDED PRECEDING to CURRENT ROW: Flink 2.1+'s NonTimeRangeUnboundedPrecedingFunction
// (RANGE) and NonTimeRowsUnboundedPrecedingFunction (ROWS), an updating aggregate. Per
// partition key, every row is kept in keyed map state "over-nontime-rows" under
// (sort key, arrival sequence): the map's byte order is the window's order, ties in arrival
// order. Each entry holds the accumulators after it (RANGE: after its whole peer group, so
// peers share them) and the row. A row that arrives (+I / +U) or leaves (-U / -D) changes
// the values of the rows after it, so per input row, in Flink's order:
//   insert  the new row with its value (its own row kind); RANGE with peers: first -U / +U
//           for each peer, then the new row; then -U / +U for every later row whose value
//           changed, row by row (ROWS) or peer group by peer group (RANGE), stopping at the
//           first whose accumulators come out unchanged, since the rest follow from them
//           (Flink compares accumulators: SUM's count changes with a 0, MAX's does not);
//   retract the first stored row with the same column values (none: ignored, as Flink):
//           -D with its old value (RANGE: among its peers' -U / +U, in their order), then
//           the later rows as for an insert.
// Re-folding from the stored accumulators of the row or group before the change means no
// aggregate has to retract. Rows before the change are read as bytes only (a map scan
// starts at the partition's first entry) unless the row sorts after all of them: then only
// the partition's last entry, kept in "over-nontime-meta", is read. Rows of other
// partitions are not touched.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "clink/core/error.hpp"
#include "clink/runtime/key_group.hpp"
#include "clink/sql/common/row_kind.hpp"
#include "clink/sql/function/function_registry.hpp"
#include "clink/sql/ops/sql_aggregates.hpp"
#include "clink/sql/ops/sql_grouping.hpp"
#include "clink/state/keyed_state_backend.hpp"
#include "rank_support.hpp"
#include "sql_op_registration.hpp"
#include "sql_over_aggregate.hpp"

namespace clink::sql {

namespace {

struct NonTimeOverConfig {
  std::string where;
  SchemaPtr in_schema, out_schema;
  std::vector<std::size_t> partition_keys;
  std::size_t order_column = 0;
  bool rows = false;
  std::shared_ptr<const AggregateSet> aggs;
};

constexpr std::size_t kSeqBytes = 8;

std::uint32_t get_u32(const char* p) {
  std::uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n |= static_cast<std::uint32_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return n;
}
void put_u32(std::uint32_t n, std::string& out) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
}

class NonTimeOverOperator final : public StreamOperator {
 public:
  explicit NonTimeOverOperator(std::shared_ptr<const NonTimeOverConfig> cfg)
      : cfg_(std::move(cfg)),
        keys_(*cfg_->in_schema, cfg_->partition_keys),
        sort_(*cfg_->in_schema, {SortKey{cfg_->order_column, false, true}}),
        codec_(*cfg_->in_schema),
        scratch_(cfg_->in_schema) {}

  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    check_over_parallelism(cfg_->where, !cfg_->partition_keys.empty(), ctx);
    backend_ = ctx.keyed_state_backend_or_private();
    backend_->set_current_namespace({});
    rows_state_ = backend_->register_state("over-nontime-rows", StateKind::kMap);
    meta_state_ = backend_->register_state("over-nontime-meta", StateKind::kValue);
    cfg_->aggs->bind(scratch_, scratch_input_);
  }

  void process_batch(int, BatchPtr batch) override {
    const auto& in = column_batch_cast(*batch);
    for (std::size_t r = 0; r < in.size(); ++r) {
      key_.clear();
      keys_.encode(in, r, key_);
      backend_->set_current_key(key_);
      sort_key_.clear();
      sort_.encode(in, r, sort_key_);
      row_.clear();
      codec_.encode(in, r, row_);
      const RowKind kind = in.row_kind(r);
      const bool accumulate = kind == RowKind::kInsert || kind == RowKind::kUpdateAfter;
      read_meta();
      if (accumulate && after_tail()) {
        append(kind);
      } else {
        load_partition(cfg_->rows && accumulate);
        if (accumulate)
          insert(kind);
        else
          retract();
        find_tail();
      }
      write_meta();
      if (out_ && out_->size() >= kDefaultBatchSize) flush();
    }
    flush();
  }

  void finish() override { flush(); }

 private:
  // One stored row of the current partition: [u32 acc length][accumulators][row].
  struct Entry {
    std::string user_key, value;
    std::string_view sort_key() const { return std::string_view(user_key).substr(0, user_key.size() - kSeqBytes); }
    std::string_view acc() const { return std::string_view(value).substr(4, acc_len()); }
    std::string_view row() const { return std::string_view(value).substr(4 + acc_len()); }
    std::uint32_t acc_len() const { return get_u32(value.data()); }
  };

  // Reads the partition's entries from the change on: prev_acc_ gets the accumulators of
  // the last entry before it (RANGE: before the row's peer group; ROWS: before the rows
  // after it, so a new row's peers stay in front), suffix_ the entries from there on.
  void load_partition(bool peers_before) {
    prev_acc_.clear();
    has_prev_ = false;
    suffix_n_ = 0;
    backend_->map_for_each(rows_state_, [&](std::string_view uk, std::string_view v) {
      const std::string_view sk = uk.substr(0, uk.size() - kSeqBytes);
      const bool before = peers_before ? sk <= std::string_view(sort_key_) : sk < std::string_view(sort_key_);
      if (before && suffix_n_ == 0) {
        prev_acc_.assign(v.substr(4, get_u32(v.data())));
        has_prev_ = true;
        return true;
      }
      if (suffix_.size() <= suffix_n_) suffix_.emplace_back();
      suffix_[suffix_n_].user_key.assign(uk);
      suffix_[suffix_n_].value.assign(v);
      ++suffix_n_;
      return true;
    });
  }

  AggState start_acc() {
    if (!has_prev_) return cfg_->aggs->create();
    std::string_view in(prev_acc_);
    return cfg_->aggs->deserialize(in);
  }
  AggState stored_acc(const Entry& e) {
    std::string_view in = e.acc();
    return cfg_->aggs->deserialize(in);
  }
  // Folds a stored row (or the arriving one) into `acc`.
  void fold(AggState& acc, std::string_view row) {
    scratch_.clear();
    codec_.decode(row, scratch_);
    scratch_.row_kinds().push_back(RowKind::kInsert);
    scratch_.event_times().push_back(0);
    cfg_->aggs->add(acc, scratch_input_, 0, 1);
  }
  void put(std::string_view user_key, const std::string& acc_bytes, std::string_view row) {
    value_.clear();
    put_u32(static_cast<std::uint32_t>(acc_bytes.size()), value_);
    value_.append(acc_bytes);
    value_.append(row);
    backend_->map_put(rows_state_, user_key, value_);
  }
  void emit(std::string_view row, RowKind kind, const AggState& acc) {
    if (!out_) out_ = std::make_unique<ColumnBatch>(cfg_->out_schema, 64);
    const EventTime t = codec_.decode(row, *out_);
    cfg_->aggs->append_results(acc, *out_, cfg_->in_schema->size());
    out_->row_kinds().push_back(kind);
    out_->event_times().push_back(t);
  }
  void flush() {
    if (out_ && out_->size() > 0) output().emit(std::move(out_));
    out_.reset();
  }
  // The partition's "over-nontime-meta": [u64 next sequence][u32 n][the last entry's map
  // key: n bytes][its accumulators] (n = 0: no rows). The last entry lets a row that sorts
  // after every stored one (the common, mostly ordered input) skip the map scan.
  void read_meta() {
    seq_ = 0;
    tail_key_.clear();
    tail_acc_.clear();
    if (!backend_->get(meta_state_, bytes_)) return;
    std::string_view in(bytes_);
    if (in.size() < 12) throw ClinkError(cfg_->where + ": corrupt OVER aggregate state");
    seq_ = KeyCodec<std::uint64_t>::decode(in);
    const std::uint32_t n = get_u32(in.data());
    in.remove_prefix(4);
    if (in.size() < n) throw ClinkError(cfg_->where + ": corrupt OVER aggregate state");
    tail_key_.assign(in.substr(0, n));
    tail_acc_.assign(in.substr(n));
  }
  void write_meta() {
    bytes_.clear();
    KeyCodec<std::uint64_t>::encode(seq_, bytes_);
    put_u32(static_cast<std::uint32_t>(tail_key_.size()), bytes_);
    bytes_.append(tail_key_);
    bytes_.append(tail_acc_);
    backend_->put(meta_state_, bytes_);
  }
  // Whether the arriving row goes after every stored row with none of them its peer
  // (ROWS: peers come before it anyway).
  bool after_tail() const {
    if (tail_key_.empty()) return false;  // an empty partition takes the general path too
    const std::string_view tail_sk = std::string_view(tail_key_).substr(0, tail_key_.size() - kSeqBytes);
    return cfg_->rows ? tail_sk <= std::string_view(sort_key_) : tail_sk < std::string_view(sort_key_);
  }
  // The arriving row after every stored one: its value from the last row's accumulators.
  void append(RowKind kind) {
    std::string_view in(tail_acc_);
    AggState acc = cfg_->aggs->deserialize(in);
    fold(acc, row_);
    acc_bytes_.clear();
    cfg_->aggs->serialize(acc, acc_bytes_);
    emit(row_, kind, acc);
    const std::string& uk = new_user_key();
    put(uk, acc_bytes_, row_);
    tail_key_.assign(uk);
    tail_acc_.assign(acc_bytes_);
  }
  // After a change anywhere in the partition: its last entry, read again.
  void find_tail() {
    tail_key_.clear();
    tail_acc_.clear();
    backend_->map_for_each(rows_state_, [&](std::string_view uk, std::string_view v) {
      tail_key_.assign(uk);
      tail_acc_.assign(v.substr(4, get_u32(v.data())));
      return true;
    });
  }
  // The arriving row's map key: its sort key, then the partition's next sequence.
  const std::string& new_user_key() {
    user_key_.assign(sort_key_);
    KeyCodec<std::uint64_t>::encode(seq_++, user_key_);
    return user_key_;
  }
  // The end of the peer group starting at suffix_[i].
  std::size_t group_end(std::size_t i) const {
    std::size_t j = i + 1;
    while (j < suffix_n_ && suffix_[j].sort_key() == suffix_[i].sort_key()) ++j;
    return j;
  }

  void insert(RowKind kind) {
    AggState acc = start_acc();
    std::size_t next = 0;
    const std::string& uk = new_user_key();
    if (!cfg_->rows && suffix_n_ > 0 && suffix_[0].sort_key() == sort_key_) {
      // RANGE with peers: the group's accumulators take the new row too.
      const std::size_t end = group_end(0);
      for (std::size_t i = 0; i < end; ++i) fold(acc, suffix_[i].row());
      fold(acc, row_);
      acc_bytes_.clear();
      cfg_->aggs->serialize(acc, acc_bytes_);
      if (acc_bytes_ != suffix_[0].acc()) {
        const AggState old = stored_acc(suffix_[0]);
        for (std::size_t i = 0; i < end; ++i) {
          emit(suffix_[i].row(), RowKind::kUpdateBefore, old);
          emit(suffix_[i].row(), RowKind::kUpdateAfter, acc);
          put(suffix_[i].user_key, acc_bytes_, suffix_[i].row());
        }
        emit(row_, kind, acc);
        put(uk, acc_bytes_, row_);
        next = end;
      } else {
        emit(row_, kind, acc);
        put(uk, acc_bytes_, row_);
        return;  // nothing after the group changes
      }
    } else {
      fold(acc, row_);
      acc_bytes_.clear();
      cfg_->aggs->serialize(acc, acc_bytes_);
      emit(row_, kind, acc);
      put(uk, acc_bytes_, row_);
    }
    update_from(next, acc);
  }

  void retract() {
    // The first stored row of the sort key with the same column values.
    std::size_t group_begin = 0;
    while (group_begin < suffix_n_ && suffix_[group_begin].sort_key() != sort_key_) ++group_begin;
    if (group_begin == suffix_n_) return;  // not found: ignored, as Flink
    const std::size_t end = group_end(group_begin);
    std::size_t victim = end;
    for (std::size_t i = group_begin; i < end && victim == end; ++i)
      if (RankRowCodec::same_values(suffix_[i].row(), row_)) victim = i;
    if (victim == end) return;
    if (cfg_->rows) {
      // The rows before the victim keep their values: start from the one just before it.
      AggState acc = victim > group_begin ? stored_acc(suffix_[victim - 1]) : start_acc();
      emit(suffix_[victim].row(), RowKind::kDelete, stored_acc(suffix_[victim]));
      backend_->map_remove(rows_state_, suffix_[victim].user_key);
      update_from(victim + 1, acc);
      return;
    }
    AggState acc = start_acc();
    for (std::size_t i = group_begin; i < end; ++i)
      if (i != victim) fold(acc, suffix_[i].row());
    acc_bytes_.clear();
    cfg_->aggs->serialize(acc, acc_bytes_);
    const AggState old = stored_acc(suffix_[victim]);
    const bool changed = acc_bytes_ != suffix_[victim].acc();
    for (std::size_t i = group_begin; i < end; ++i) {
      if (i == victim) {
        emit(suffix_[i].row(), RowKind::kDelete, old);
      } else if (changed) {
        emit(suffix_[i].row(), RowKind::kUpdateBefore, old);
        emit(suffix_[i].row(), RowKind::kUpdateAfter, acc);
        put(suffix_[i].user_key, acc_bytes_, suffix_[i].row());
      }
    }
    backend_->map_remove(rows_state_, suffix_[victim].user_key);
    if (changed) update_from(end, acc);
  }

  // The entries from suffix_[i] on, folded onto `acc` (the accumulators before them):
  // -U / +U for each, up to the first row (ROWS) or peer group (RANGE) whose accumulators
  // come out unchanged: the rest follow from them (Flink's early out).
  void update_from(std::size_t i, AggState& acc) {
    while (i < suffix_n_) {
      const std::size_t end = cfg_->rows ? i + 1 : group_end(i);
      for (std::size_t j = i; j < end; ++j) fold(acc, suffix_[j].row());
      acc_bytes_.clear();
      cfg_->aggs->serialize(acc, acc_bytes_);
      if (acc_bytes_ == suffix_[i].acc()) return;
      const AggState old = stored_acc(suffix_[i]);
      for (std::size_t j = i; j < end; ++j) {
        emit(suffix_[j].row(), RowKind::kUpdateBefore, old);
        emit(suffix_[j].row(), RowKind::kUpdateAfter, acc);
        put(suffix_[j].user_key, acc_bytes_, suffix_[j].row());
      }
      i = end;
    }
  }

  std::shared_ptr<const NonTimeOverConfig> cfg_;
  RowKeyEncoder keys_;
  SortKeyEncoder sort_;
  RankRowCodec codec_;
  KeyedStateBackend* backend_ = nullptr;
  StateId rows_state_, meta_state_;
  std::uint64_t seq_ = 0;  // the partition's meta, read per row
  std::string tail_key_, tail_acc_;
  ColumnBatch scratch_;  // one decoded row at a time, bound to scratch_input_
  AggregateInput scratch_input_;
  std::vector<Entry> suffix_;  // reused across rows: suffix_n_ of them are live
  std::size_t suffix_n_ = 0;
  std::string prev_acc_;
  bool has_prev_ = false;
  std::unique_ptr<ColumnBatch> out_;
  std::string key_, sort_key_, row_, user_key_, value_, acc_bytes_, bytes_;
};

}  // namespace

void register_sql_over_nontime(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "sql_over_nontime",
      .description = "sql_row -> sql_row: OVER aggregates ordered by a column that is not a time attribute, "
                     "UNBOUNDED PRECEDING to CURRENT ROW (ROWS or RANGE): an updating aggregate (+I, -U / +U for "
                     "the rows after a change, -D for a retracted row), any input changelog",
      .num_inputs = 1,
      .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        SqlOpParams p(ctx, "sql_over_nontime", {"partition_keys", "order_column", "rows", "aggregates"});
        auto cfg = std::make_shared<NonTimeOverConfig>();
        cfg->where = p.where();
        cfg->in_schema = p.input_schema(0);
        cfg->out_schema = p.output_schema();
        cfg->partition_keys = p.columns("partition_keys", *cfg->in_schema);
        cfg->order_column = p.column(p.require("order_column"), *cfg->in_schema, "param 'order_column'");
        SortKeyEncoder::check_sortable(cfg->in_schema->type(cfg->order_column), p);
        cfg->rows = p.get_bool("rows", false);
        // Every change re-folds from stored accumulators: no call has to retract.
        cfg->aggs = std::make_shared<const AggregateSet>(
            AggregateSet::parse(p.require("aggregates"), *cfg->in_schema, p, false, FunctionRegistry::process()), false);
        std::vector<RowField> fields = cfg->in_schema->fields();
        for (const auto& c : cfg->aggs->calls()) fields.push_back({"", c.result_type});
        check_output_types(*cfg->out_schema, fields, p);
        RankRowCodec::check_storable(*cfg->in_schema, p);
        return [cfg] { return std::make_unique<NonTimeOverOperator>(cfg); };
      }});
}

}  // namespace clink::sql
