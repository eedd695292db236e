// sql_join: the regular streaming join, Flink's StreamingJoinOperator (state and batch
// processing in streaming_join_base.hpp; a preserved (outer) side's rows keep how many
// other-side rows they joined with). Per input row, in order:
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
// With mini-batch (mini_batch_size; Flink's MiniBatchStreamingJoinOperator) the rows of both
// inputs are buffered and folded (join_mini_batch.hpp) and go through the above when the
// mini-batch ends: at `size` rows of both inputs together, after `allow-latency` of
// processing time, at a watermark, at a checkpoint barrier (so a checkpoint holds nothing
// buffered) and at the end of input. Then the right input's rows go first and the left's
// after them, except in a RIGHT JOIN (left first), as Flink orders them. An inner join of
// two insert-only inputs takes no mini-batch (see the factory).
#include "clink/core/error.hpp"
#include "join_mini_batch.hpp"
#include "sql_op_registration.hpp"
#include "streaming_join_base.hpp"

namespace clink::sql {
namespace {

struct MiniBatchConfig {
  std::int64_t size = 0;  // 0: no mini-batch
  std::int64_t latency_ms = 0;
  bool insert_only[2] = {false, false};
};

class SqlJoinOperator final : public StreamingJoinBase {
 public:
  SqlJoinOperator(std::shared_ptr<const JoinConfig> cfg, const MiniBatchConfig& mb)
      : StreamingJoinBase(std::move(cfg)), mini_batch_latency_ms_(mb.latency_ms) {
    if (mb.size > 0) mini_batch_ = std::make_unique<JoinMiniBatch>(spec_, mb.size, mb.insert_only);
  }

  void process_batch(int input, BatchPtr batch) override {
    if (!mini_batch_) return StreamingJoinBase::process_batch(input, std::move(batch));
    const auto& in = column_batch_cast(*batch);
    // Flink's count trigger: exactly `size` rows; the rest start the next mini-batch.
    for (std::size_t from = 0; from < in.size();) {
      const std::size_t to = std::min(in.size(), from + mini_batch_->room());
      mini_batch_->add(input, in, from, to);
      from = to;
      if (mini_batch_->full()) end_mini_batch();
    }
    if (!latency_timer_ && !mini_batch_->empty()) {
      TimerService& timers = ctx().timer_service();
      timers.register_processing_time_timer(timers.current_processing_time() + mini_batch_latency_ms_, {}, {});
      latency_timer_ = true;
    }
  }
  void process_watermark(Watermark wm) override {
    end_mini_batch();
    StreamingJoinBase::process_watermark(wm);
  }
  void snapshot_state(std::int64_t) override { end_mini_batch(); }
  void finish() override { end_mini_batch(); }
  void process_processing_time(std::int64_t now) override {
    ctx().timer_service().advance_processing_time(now, [this](const Timer&) {
      latency_timer_ = false;
      end_mini_batch();
    });
  }

 private:
  void end_mini_batch() {
    if (!mini_batch_ || mini_batch_->empty()) return;
    const int first = spec_.outer[1] && !spec_.outer[0] ? 0 : 1;
    auto first_rows = mini_batch_->take(first);
    auto second_rows = mini_batch_->take(1 - first);
    if (first_rows) StreamingJoinBase::process_batch(first, std::move(first_rows));
    if (second_rows) StreamingJoinBase::process_batch(1 - first, std::move(second_rows));
  }

  void process_row(const ColumnBatch& in, std::size_t r, int own, int other) override {
    const RowKind kind = in.row_kind(r);
    const bool input_outer = spec_.outer[own], other_outer = spec_.outer[other];
    const ColumnBatch& others = other_rows_[other];
    if (is_accumulate(kind)) {
      if (occurrences_ == 0) {
        if (input_outer) joined_.emit_padded(own, in, r, RowKind::kInsert);
        add_record(own, 0);
        return;
      }
      RowKind out_kind = kind;
      if (other_outer) {
        for (std::size_t p : matched_) {
          auto& e = entry_of_pair(p);
          if (e.matches == 0)
            for (std::int32_t i = 0; i < e.count; ++i) joined_.emit_padded(other, others, pair_entry(p), RowKind::kDelete);
          e.matches += 1;
          e.dirty = true;
        }
        out_kind = RowKind::kInsert;
      }
      if (input_outer) out_kind = RowKind::kInsert;
      emit_matches(out_kind);
      add_record(own, occurrences_);
      return;
    }
    retract_record(own);
    if (occurrences_ == 0) {
      if (input_outer) joined_.emit_padded(own, in, r, RowKind::kDelete);
      return;
    }
    emit_matches(input_outer ? RowKind::kDelete : kind);
    if (other_outer)
      for (std::size_t p : matched_) {
        auto& e = entry_of_pair(p);
        if (e.matches == 1)
          for (std::int32_t i = 0; i < e.count; ++i) joined_.emit_padded(other, others, pair_entry(p), RowKind::kInsert);
        e.matches -= 1;
        e.dirty = true;
      }
  }

  void emit_matches(RowKind kind) {
    for (std::size_t p : matched_)
      for (std::int32_t i = 0; i < entry_of_pair(p).count; ++i) joined_.emit_pair(p, kind);
    flush_if_full();
  }

  std::unique_ptr<JoinMiniBatch> mini_batch_;
  std::int64_t mini_batch_latency_ms_ = 0;
  bool latency_timer_ = false;
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
        SqlOpParams p(ctx, "sql_join", JoinSpec::param_names({"state_ttl_ms", "left_insert_only", "right_insert_only",
                                                              "mini_batch_size", "mini_batch_latency_ms"}));
        auto cfg = std::make_shared<JoinConfig>();
        cfg->spec = JoinSpec::parse(p);
        cfg->state_ttl_ms = p.get_int("state_ttl_ms", 0, 0);
        // left/right_insert_only: the input only inserts (the planner's changelog mode).
        // Such an inner side keeps its rows as a list: no count, no match count to update.
        const bool insert_only[2] = {p.get_bool("left_insert_only", false), p.get_bool("right_insert_only", false)};
        for (int side = 0; side < 2; ++side)
          cfg->list_state[side] = insert_only[side] && !cfg->spec.outer[side] && cfg->state_ttl_ms == 0;
        MiniBatchConfig mb;
        mb.size = p.get_int("mini_batch_size", 0, 0);
        if (mb.size > 0) mb.latency_ms = p.get_int("mini_batch_latency_ms", 0, 1);
        for (int side = 0; side < 2; ++side) mb.insert_only[side] = insert_only[side];
        // An inner join of two insert-only inputs has nothing to fold, and the order in
        // which a mini-batch's rows are joined changes no output row (each pair goes out
        // once, as +I; Flink's go out in hash order): buffering them would only delay them.
        if (insert_only[0] && insert_only[1] && !cfg->spec.outer[0] && !cfg->spec.outer[1]) mb.size = 0;
        return [cfg, mb] { return std::make_unique<SqlJoinOperator>(cfg, mb); };
      }});
}

}  // namespace clink::sql
