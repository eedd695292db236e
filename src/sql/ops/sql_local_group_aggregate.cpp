// sql_local_group_aggregate: the first phase of Flink's two-phase group aggregation
// (LocalGroupAggregate, MiniBatchLocalGroupAggFunction; the planner uses it with mini-batch
// and 'table.optimizer.agg-phase-strategy' AUTO or TWO_PHASE). It runs before the exchange,
// chained to its input: the rows of a mini-batch fold into one accumulator per group, and
// each group goes on as one row [keys..., accumulator bytes], so the exchange and the
// global phase (sql_group_aggregate with `merge_accumulators`) see one row per group per
// mini-batch instead of every input row: a hot key's rows no longer land on one subtask.
// The accumulator holds the group's row count (accumulated minus retracted, possibly
// negative) and each call's accumulator as AggregateSet::serialize writes them; merging
// it is what the global phase does with it.
// No state: a mini-batch ends at `size` rows, after `allow-latency` of processing time, at
// a watermark, at a checkpoint barrier (so a checkpoint holds nothing buffered here) and
// at the end of input, and its groups go out in first-touch order.
#include <absl/container/flat_hash_map.h>
#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "clink/runtime/operator.hpp"
#include "clink/sql/function/function_registry.hpp"
#include "clink/sql/ops/sql_aggregates.hpp"
#include "clink/sql/ops/sql_grouping.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"
#include "sql_op_registration.hpp"

namespace clink::sql {
namespace {

struct LocalAggConfig {
  SchemaPtr out_schema;
  SqlGrouping grouping;
  std::shared_ptr<const AggregateSet> aggs;
  std::int64_t mini_batch_size = 0;
  std::int64_t mini_batch_latency_ms = 0;
};

class SqlLocalGroupAggregateOperator final : public StreamOperator {
 public:
  explicit SqlLocalGroupAggregateOperator(std::shared_ptr<const LocalAggConfig> cfg) : cfg_(std::move(cfg)) {}

  void process_batch(int, BatchPtr batch) override {
    const auto& in = column_batch_cast(*batch);
    const AggregateSet& aggs = *cfg_->aggs;
    aggs.bind(in, input_);
    for (std::size_t r = 0; r < in.size(); ++r) {
      const RowKind kind = in.row_kind(r);
      const int sign = kind == RowKind::kUpdateBefore || kind == RowKind::kDelete ? -1 : 1;
      key_.clear();
      cfg_->grouping.encode(in, r, 0, key_);
      auto [it, created] = index_.try_emplace(key_, static_cast<std::uint32_t>(num_groups_));
      if (created) {  // the slots of earlier mini-batches are reused: no allocation once warm
        if (num_groups_ == accs_.size()) {
          keys_.push_back(key_);
          accs_.push_back(aggs.create());
        } else {
          keys_[num_groups_].assign(key_);
          aggs.recreate(accs_[num_groups_]);
        }
        ++num_groups_;
      }
      aggs.add(accs_[it->second], input_, static_cast<std::uint32_t>(r), sign);
      // Flink's count trigger: exactly `size` rows. The rows after it start the next
      // mini-batch (their batch stays bound: end_mini_batch reads no input).
      if (++buffered_ >= cfg_->mini_batch_size) end_mini_batch();
    }
    if (!latency_timer_ && buffered_ > 0) {
      TimerService& timers = ctx().timer_service();
      timers.register_processing_time_timer(timers.current_processing_time() + cfg_->mini_batch_latency_ms, {}, {});
      latency_timer_ = true;
    }
  }

  void process_watermark(Watermark wm) override {
    end_mini_batch();
    StreamOperator::process_watermark(wm);
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
    if (num_groups_ == 0) return;
    const std::size_t nk = cfg_->grouping.keys.size();
    for (std::size_t g = 0; g < num_groups_; ++g) {
      if (!out_) out_ = std::make_unique<ColumnBatch>(cfg_->out_schema, kDefaultBatchSize);
      cfg_->grouping.decode(keys_[g], *out_);
      bytes_.clear();
      cfg_->aggs->serialize(accs_[g], bytes_);
      out_->column(nk).append_string(bytes_);
      out_->row_kinds().push_back(RowKind::kInsert);
      out_->event_times().push_back(kNoEventTime);
      if (out_->size() >= kDefaultBatchSize) flush();
    }
    flush();
    index_.clear();
    num_groups_ = 0;
    buffered_ = 0;
  }
  void flush() {
    if (out_ && out_->size() > 0) output().emit(std::move(out_));
    out_.reset();
  }

  std::shared_ptr<const LocalAggConfig> cfg_;
  AggregateInput input_;
  // The mini-batch's groups in first-touch order (the order they go out in): the first
  // num_groups_ of keys_ / accs_ (kept across mini-batches for reuse), and their index.
  std::vector<std::string> keys_;
  std::vector<AggState> accs_;
  std::size_t num_groups_ = 0;
  absl::flat_hash_map<std::string, std::uint32_t> index_;
  std::string key_, bytes_;
  std::int64_t buffered_ = 0;
  bool latency_timer_ = false;
  std::unique_ptr<ColumnBatch> out_;
};

}  // namespace

void register_sql_local_group_aggregate(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "sql_local_group_aggregate",
      .description = "sql_row -> sql_row: the local phase of a two-phase GROUP BY: one row [keys, accumulator] per "
                     "group per mini-batch, for sql_group_aggregate with merge_accumulators",
      .num_inputs = 1,
      .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        SqlOpParams p(ctx, "sql_local_group_aggregate",
                      {"keys", "aggregates", "input_retracts", "mini_batch_size", "mini_batch_latency_ms"});
        SchemaPtr in = p.input_schema(0);
        auto cfg = std::make_shared<LocalAggConfig>();
        cfg->out_schema = p.output_schema();
        cfg->grouping = SqlGrouping::parse(p, *in);
        if (cfg->grouping.num_sets() != 1) p.fail("the local phase takes one grouping set");
        cfg->mini_batch_size = p.get_int("mini_batch_size", 0, 1);
        cfg->mini_batch_latency_ms = p.get_int("mini_batch_latency_ms", 0, 1);
        const bool input_retracts = p.get_bool("input_retracts", true);
        auto calls = AggregateSet::parse(p.params().at("aggregates"), *in, p, input_retracts,
                                         FunctionRegistry::process());
        for (const auto& c : calls)
          if (c.distinct) p.fail("the local phase takes no DISTINCT aggregate");
        cfg->aggs = std::make_shared<const AggregateSet>(std::move(calls), true);
        if (!cfg->aggs->mergeable()) p.fail("the local phase needs aggregates that merge accumulators");
        std::vector<RowField> fields;
        cfg->grouping.key_fields(*in, fields);
        fields.push_back({"", LogicalType::bytes()});
        check_output_types(*cfg->out_schema, fields, p);
        return [cfg] { return std::make_unique<SqlLocalGroupAggregateOperator>(cfg); };
      }});
}

}  // namespace clink::sql
