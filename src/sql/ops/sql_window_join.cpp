// sql_window_join: Flink's WindowJoinOperator, the join of two windowed inputs on their
// window bounds (left.window_start = right.window_start AND left.window_end =
// right.window_end, plus any other keys). The keys include the window bounds, so each
// state key holds one window: its rows are buffered per side (list states) until the
// watermark reaches window_end - 1, then joined, emitted and cleared, as Flink does:
//   inner / left / full  per left row in arrival order, its matches (right rows in arrival
//                        order), then the row NULL-padded if it matched nothing (LEFT, FULL);
//                        FULL then pads the right rows that matched nothing;
//   right                the same with the sides' roles swapped;
//   semi / anti          per left row in arrival order: the row when it has a match
//                        (semi) / none (anti) (SemiAntiJoinOperator).
// A row whose window already fired is late: dropped and counted (late_records_dropped).
// Append-only in and out; output rows carry window_end - 1 as event time (the window's
// time attribute), and the watermark passes through.
#include <algorithm>

#include "clink/core/error.hpp"
#include "clink/runtime/lateness.hpp"
#include "clink/state/keyed_state_backend.hpp"
#include "sql_join_common.hpp"
#include "sql_op_registration.hpp"

namespace clink::sql {
namespace {

struct WindowJoinConfig {
  JoinSpec spec;
  std::size_t window_end[2] = {0, 0};  // the window_end column of each side
};

class SqlWindowJoinOperator final : public StreamOperator {
 public:
  explicit SqlWindowJoinOperator(std::shared_ptr<const WindowJoinConfig> cfg)
      : cfg_(std::move(cfg)),
        spec_(cfg_->spec),
        codec_{SideRowCodec(*spec_.side[0]), SideRowCodec(*spec_.side[1])},
        key_encoder_{RowKeyEncoder(*spec_.side[0], spec_.keys[0]), RowKeyEncoder(*spec_.side[1], spec_.keys[1])},
        rows_{ColumnBatch(spec_.side[0]), ColumnBatch(spec_.side[1])},
        joined_(spec_) {}

  int num_inputs() const override { return 2; }

  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    backend_ = ctx.keyed_state_backend_or_private();
    backend_->set_current_namespace({});
    state_[0] = backend_->register_state("window-join-left", StateKind::kList);
    state_[1] = backend_->register_state("window-join-right", StateKind::kList);
  }

  void process_batch(int input, BatchPtr batch) override {
    const auto& in = column_batch_cast(*batch);
    const Column& end_col = in.column(cfg_->window_end[input]);
    const EventTime wm = lateness_watermark(ctx());  // a row whose window its channel passed is late
    std::int64_t late = 0;
    for (std::size_t r = 0; r < in.size(); ++r) {
      if (end_col.is_null(r)) throw ClinkError(spec_.where + ": window_end is NULL");
      const std::int64_t fire_at = floor_ms(end_col.values<std::int64_t>()[r]) - 1;
      if (fire_at <= wm) {
        ++late;
        continue;
      }
      key_.clear();
      key_encoder_[input].encode(in, r, key_);
      backend_->set_current_key(key_);
      row_.clear();
      codec_[input].encode(in, r, row_);
      bytes_.clear();
      KeyCodec<std::uint32_t>::encode(static_cast<std::uint32_t>(row_.size()), bytes_);
      bytes_.append(row_);
      backend_->append(state_[input], bytes_);
      ctx().timer_service().register_event_time_timer(fire_at, key_, {});
    }
    if (late > 0) ctx().metrics().late_records_dropped.fetch_add(late, std::memory_order_relaxed);
  }

  void process_watermark(Watermark wm) override {
    if (!wm.idle) {
      ctx().timer_service().advance_watermark(wm.timestamp, [this](const Timer& t) { on_event_time_timer(t); });
      joined_.flush(output());
    }
    output().emit_watermark(wm);
  }

  void on_event_time_timer(const Timer& t) override {
    backend_->set_current_key(t.key);
    for (int side = 0; side < 2; ++side) {
      rows_[side].clear();
      if (!backend_->get(state_[side], bytes_)) continue;
      std::string_view in(bytes_);
      while (!in.empty()) {
        const std::size_t len = KeyCodec<std::uint32_t>::decode(in);
        if (len > in.size()) throw ClinkError(spec_.where + ": corrupt window join state");
        codec_[side].decode(in.substr(0, len), rows_[side]);
        in.remove_prefix(len);
      }
      backend_->remove(state_[side]);
    }
    join_window(t.time);
    joined_.gather_emitted_pairs();  // the next timer reuses rows_
    if (joined_.pending() >= kDefaultBatchSize) joined_.flush(output());
  }

 private:
  static std::int64_t floor_ms(std::int64_t micros) { return micros >= 0 ? micros / 1000 : -((-micros + 999) / 1000); }

  // Flink's join of one window (WindowJoinOperator's Inner/Left/Right/FullOuterJoinOperator):
  // the outer loop runs over the left rows (over the right rows for a RIGHT join), each
  // row's matches in the other side's arrival order, then the row padded if it matched
  // nothing and its side is preserved; a FULL join pads the unmatched right rows last.
  // A NULL in a `=` key never matches.
  void join_window(EventTime time) {
    if (spec_.semi_anti) return semi_anti_window(time);
    const int outer_side = spec_.outer[1] && !spec_.outer[0] ? 1 : 0;
    const int inner_side = 1 - outer_side;
    const ColumnBatch& outer_rows = rows_[outer_side];
    const ColumnBatch& inner_rows = rows_[inner_side];
    const std::size_t no = outer_rows.size(), ni = inner_rows.size();
    matched_.assign(ni, false);
    const std::size_t per_row = std::max<std::size_t>(ni, 1);
    for (std::size_t o0 = 0; o0 < no;) {
      // Chunks of outer-loop rows whose pairs fit the pair budget.
      const std::size_t o1 = std::min(no, o0 + std::max<std::size_t>(1, kMaxPairs / per_row));
      joined_.reset_pairs();
      row_pairs_.resize(o1 - o0 + 1);
      for (std::size_t o = o0; o < o1; ++o) {
        row_pairs_[o - o0] = joined_.num_pairs();
        if (has_null_key(outer_rows, o, spec_.keys[outer_side], spec_.filter_nulls)) continue;
        for (std::size_t i = 0; i < ni; ++i) joined_.add_pair(static_cast<std::uint32_t>(o), static_cast<std::uint32_t>(i));
      }
      row_pairs_[o1 - o0] = joined_.num_pairs();
      joined_.evaluate(outer_side, outer_rows, inner_rows);
      for (std::size_t o = o0; o < o1; ++o) {
        bool any = false;
        for (std::size_t p = row_pairs_[o - o0]; p < row_pairs_[o - o0 + 1]; ++p) {
          if (!joined_.matches(p)) continue;
          joined_.emit_pair(p, RowKind::kInsert, time);
          matched_[joined_.other_row(p)] = true;
          any = true;
        }
        if (!any && spec_.outer[outer_side]) joined_.emit_padded(outer_side, outer_rows, o, RowKind::kInsert, time);
      }
      o0 = o1;
    }
    if (spec_.outer[0] && spec_.outer[1])
      for (std::size_t i = 0; i < ni; ++i)
        if (!matched_[i]) joined_.emit_padded(inner_side, inner_rows, i, RowKind::kInsert, time);
  }

  // Flink's SemiAntiJoinOperator: each left row (arrival order) goes out as it is when
  // some right row matches it (semi) / none does (anti).
  void semi_anti_window(EventTime time) {
    const ColumnBatch& left = rows_[0];
    const ColumnBatch& right = rows_[1];
    const std::size_t nl = left.size(), nr = right.size();
    const std::size_t per_row = std::max<std::size_t>(nr, 1);
    for (std::size_t l0 = 0; l0 < nl;) {
      const std::size_t l1 = std::min(nl, l0 + std::max<std::size_t>(1, kMaxPairs / per_row));
      joined_.reset_pairs();
      row_pairs_.resize(l1 - l0 + 1);
      for (std::size_t l = l0; l < l1; ++l) {
        row_pairs_[l - l0] = joined_.num_pairs();
        if (has_null_key(left, l, spec_.keys[0], spec_.filter_nulls)) continue;
        for (std::size_t r = 0; r < nr; ++r) joined_.add_pair(static_cast<std::uint32_t>(l), static_cast<std::uint32_t>(r));
      }
      row_pairs_[l1 - l0] = joined_.num_pairs();
      joined_.evaluate(0, left, right);
      for (std::size_t l = l0; l < l1; ++l) {
        bool any = false;
        for (std::size_t q = row_pairs_[l - l0]; q < row_pairs_[l - l0 + 1] && !any; ++q) any = joined_.matches(q);
        if (any != spec_.anti) joined_.emit_padded(0, left, l, RowKind::kInsert, time);  // the left columns only
      }
      l0 = l1;
    }
  }

  static constexpr std::size_t kMaxPairs = 16 * 1024;

  std::shared_ptr<const WindowJoinConfig> cfg_;
  const JoinSpec& spec_;
  SideRowCodec codec_[2];
  RowKeyEncoder key_encoder_[2];
  ColumnBatch rows_[2];  // the fired window's rows per side
  JoinedRows joined_;
  KeyedStateBackend* backend_ = nullptr;
  StateId state_[2];
  std::vector<bool> matched_;  // inner-loop rows that matched
  std::vector<std::size_t> row_pairs_;  // per outer-loop row of a chunk: its first pair
  std::string key_, row_, bytes_;
};

}  // namespace

void register_sql_window_join(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "sql_window_join",
      .description = "sql_row x sql_row -> sql_row: window join on the window bounds (inner, left, right, full, semi, "
                     "anti), "
                     "emitted when the watermark passes the window's end",
      .num_inputs = 2,
      .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        SqlOpParams p(ctx, "sql_window_join", JoinSpec::param_names({"left_window_end", "right_window_end"}));
        auto cfg = std::make_shared<WindowJoinConfig>();
        cfg->spec = JoinSpec::parse(p, JoinSpec::SemiAnti::kAlso);
        cfg->window_end[0] = cfg->spec.time_column(p, 0, "left_window_end");
        cfg->window_end[1] = cfg->spec.time_column(p, 1, "right_window_end");
        for (int side = 0; side < 2; ++side) {
          if (std::find(cfg->spec.keys[side].begin(), cfg->spec.keys[side].end(), cfg->window_end[side]) ==
              cfg->spec.keys[side].end())
            p.fail(std::string("the ") + (side == 0 ? "left" : "right") + " window_end column must be a join key");
        }
        return [cfg] { return std::make_unique<SqlWindowJoinOperator>(cfg); };
      }});
}

}  // namespace clink::sql
