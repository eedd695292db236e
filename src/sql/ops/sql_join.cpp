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
#include "clink/core/error.hpp"
#include "sql_op_registration.hpp"
#include "streaming_join_base.hpp"

namespace clink::sql {
namespace {

class SqlJoinOperator final : public StreamingJoinBase {
 public:
  using StreamingJoinBase::StreamingJoinBase;

 private:
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
        SqlOpParams p(ctx, "sql_join", JoinSpec::param_names({"state_ttl_ms", "left_insert_only", "right_insert_only"}));
        auto cfg = std::make_shared<JoinConfig>();
        cfg->spec = JoinSpec::parse(p);
        cfg->state_ttl_ms = p.get_int("state_ttl_ms", 0, 0);
        // left/right_insert_only: the input only inserts (the planner's changelog mode).
        // Such an inner side keeps its rows as a list: no count, no match count to update.
        const bool insert_only[2] = {p.get_bool("left_insert_only", false), p.get_bool("right_insert_only", false)};
        for (int side = 0; side < 2; ++side)
          cfg->list_state[side] = insert_only[side] && !cfg->spec.outer[side] && cfg->state_ttl_ms == 0;
        return [cfg] { return std::make_unique<SqlJoinOperator>(cfg); };
      }});
}

}  // namespace clink::sql
