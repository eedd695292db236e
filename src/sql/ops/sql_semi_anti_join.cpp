// sql_semi_anti_join: the streaming semi and anti join, Flink's
// StreamingSemiAntiJoinOperator (what IN / EXISTS subqueries, INTERSECT and EXCEPT run
// as). State and batch processing are the regular join's (streaming_join_base.hpp): the
// left rows keep how many right rows match them (their numOfAssociations), the right
// rows only their count. Only left rows are emitted. Per input row, in order:
//   left row (any kind):   forwarded with its own kind when it has a match (semi) / has
//                          none (anti); then kept (+I/+U, with its match count) or
//                          retracted (-U/-D) in the left state
//   right accumulate:      every matching left row without matches so far is emitted:
//                          semi with the input's kind (+I/+U), anti as -D; then every
//                          matching left row counts one more match
//   right retract:         every matching left row whose last match this was is emitted:
//                          semi with the input's kind (-U/-D), anti as +I; one match less
// (A left row present n times is emitted n times.) A key with a NULL in a `=` column never
// matches: such a left row is never emitted by a semi join and always by an anti join.
#include "sql_op_registration.hpp"
#include "streaming_join_base.hpp"

namespace clink::sql {
namespace {

class SqlSemiAntiJoinOperator final : public StreamingJoinBase {
 public:
  using StreamingJoinBase::StreamingJoinBase;

 private:
  void process_row(const ColumnBatch& in, std::size_t r, int own, int other) override {
    const RowKind kind = in.row_kind(r);
    const bool anti = spec_.anti;
    if (own == 0) {
      if ((occurrences_ == 0) == anti) joined_.emit_padded(0, in, r, kind);
      if (is_accumulate(kind)) add_record(0, occurrences_);
      else retract_record(0);
      flush_if_full();
      return;
    }
    const ColumnBatch& lefts = other_rows_[other];
    if (is_accumulate(kind)) {
      add_record(1, 0);
      for (std::size_t p : matched_) {
        auto& e = entry_of_pair(p);
        if (e.matches == 0)
          for (std::int32_t i = 0; i < e.count; ++i)
            joined_.emit_padded(0, lefts, pair_entry(p), anti ? RowKind::kDelete : kind);
        e.matches += 1;
        e.dirty = true;
      }
    } else {
      retract_record(1);
      for (std::size_t p : matched_) {
        auto& e = entry_of_pair(p);
        if (e.matches == 1)
          for (std::int32_t i = 0; i < e.count; ++i)
            joined_.emit_padded(0, lefts, pair_entry(p), anti ? RowKind::kInsert : kind);
        // A right retraction without a matching accumulate (a retracted row the state no
        // longer holds, e.g. after TTL) leaves the count at 0, as Flink's does not go below.
        if (e.matches > 0) e.matches -= 1;
        e.dirty = true;
      }
    }
    flush_if_full();
  }
};

}  // namespace

void register_sql_semi_anti_join(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "sql_semi_anti_join",
      .description = "sql_row x sql_row -> sql_row: streaming semi / anti join (IN, EXISTS, INTERSECT, EXCEPT): the "
                     "left rows with / without a matching right row, keyed by the equi-join keys, with a residual "
                     "condition, retracting inputs accepted",
      .num_inputs = 2,
      .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        SqlOpParams p(ctx, "sql_semi_anti_join", JoinSpec::param_names({"state_ttl_ms"}));
        auto cfg = std::make_shared<JoinConfig>();
        cfg->spec = JoinSpec::parse(p, JoinSpec::SemiAnti::kOnly);
        cfg->state_ttl_ms = p.get_int("state_ttl_ms", 0, 0);
        return [cfg] { return std::make_unique<SqlSemiAntiJoinOperator>(cfg); };
      }});
}

}  // namespace clink::sql
