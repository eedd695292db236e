// sql_group_aggregate: unbounded GROUP BY with Flink's changelog (GroupAggFunction):
// per input row, in order, the group's accumulator is updated and
//   a new group               -> +I[keys, values]
//   a changed group           -> -U[keys, old values], +U[keys, new values]
//   values unchanged          -> nothing (Flink without state TTL)
//   the group's row count 0   -> -D[keys, old values], state cleared
//   a retraction (-U / -D) for a group without state -> ignored, as Flink does.
// No folding: a batch updating one group several times emits every intermediate change,
// exactly what Flink emits per record (mini-batch folding is a separate Flink option).
// DISTINCT is this operator without aggregates. Accumulators live in keyed state
// (state "group-agg", StateCodec<AggState>), read once per group per batch and written
// back at the end of the batch.
#include <memory>

#include <absl/container/flat_hash_map.h>

#include "clink/core/error.hpp"
#include "clink/runtime/operator.hpp"
#include "clink/sql/ops/sql_aggregates.hpp"
#include "clink/sql/ops/sql_grouping.hpp"
#include "clink/sql/ops/sql_op_spec.hpp"
#include "clink/state/keyed_state_backend.hpp"
#include "sql_op_registration.hpp"

namespace clink::sql {
namespace {

struct GroupAggConfig {
  std::string where;
  SchemaPtr out_schema;
  SqlGrouping grouping;
  std::shared_ptr<const AggregateSet> aggs;
};

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
    if (!ctx.keyed_state_backend()) {
      // Operator tests without an executor: a private memory backend (a job's keyed
      // operator always gets the executor's, configured and restored).
      ctx.set_keyed_state_backend(make_keyed_state_backend(StateBackendConfig{}, ctx.operator_id(),
                                                           ctx.subtask_index(), ctx.key_groups(),
                                                           ctx.max_parallelism(), SystemClock::instance()));
    }
    backend_ = ctx.keyed_state_backend();
    backend_->set_current_namespace({});
    state_ = backend_->register_state("group-agg", StateKind::kValue);
  }

  void process_batch(int, BatchPtr batch) override {
    const auto& in = column_batch_cast(*batch);
    const std::size_t n = in.size(), sets = cfg_.grouping.num_sets();
    for (std::size_t r = 0; r < n; ++r) {
      const RowKind kind = in.row_kind(r);
      const bool retract = kind == RowKind::kUpdateBefore || kind == RowKind::kDelete;
      for (std::size_t s = 0; s < sets; ++s) {
        key_.clear();
        cfg_.grouping.encode(in, r, s, key_);
        Group* g = group(key_);
        if (!g->exists) {
          if (retract) continue;
          g->acc = cfg_.aggs->create();
          g->exists = true;
          g->dirty = true;
          cfg_.aggs->add(g->acc, in, r, 1);
          cfg_.aggs->results(g->acc, now_);
          emit(RowKind::kInsert, key_, now_);
          continue;
        }
        cfg_.aggs->results(g->acc, before_);
        cfg_.aggs->add(g->acc, in, r, retract ? -1 : 1);
        g->dirty = true;
        if (cfg_.aggs->row_count(g->acc) <= 0) {
          emit(RowKind::kDelete, key_, before_);
          g->exists = false;
          continue;
        }
        cfg_.aggs->results(g->acc, now_);
        if (now_ == before_) continue;
        emit(RowKind::kUpdateBefore, key_, before_);
        emit(RowKind::kUpdateAfter, key_, now_);
      }
    }
    write_back();
    flush();
  }

  void finish() override { flush(); }

 private:
  struct Group {
    AggState acc;
    bool exists = false;
    bool dirty = false;
  };

  // The group's accumulator for this batch, read from keyed state on first touch.
  Group* group(const std::string& key) {
    auto [it, created] = touched_.try_emplace(key);
    if (created) {
      backend_->set_current_key(key);
      if (backend_->get(state_, bytes_)) {
        std::string_view v(bytes_);
        it->second.acc = StateCodec<AggState>::decode(v);
        it->second.exists = true;
      }
    }
    return &it->second;
  }

  void write_back() {
    for (auto& [key, g] : touched_) {
      if (!g.dirty) continue;
      backend_->set_current_key(key);
      if (g.exists) {
        bytes_.clear();
        StateCodec<AggState>::encode(g.acc, bytes_);
        backend_->put(state_, bytes_);
      } else {
        backend_->remove(state_);
      }
    }
    touched_.clear();
  }

  void emit(RowKind kind, const std::string& key, const std::vector<Value>& values) {
    if (!out_) out_ = std::make_unique<ColumnBatch>(cfg_.out_schema, 64);
    cfg_.grouping.decode(key, *out_);
    const std::size_t nk = cfg_.grouping.keys.size();
    for (std::size_t i = 0; i < values.size(); ++i) out_->column(nk + i).append_value(values[i]);
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
  StateId state_;
  absl::flat_hash_map<std::string, Group> touched_;
  std::string key_, bytes_;
  std::vector<Value> before_, now_;
  std::unique_ptr<ColumnBatch> out_;
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
        SqlOpParams p(ctx, "sql_group_aggregate", {"keys", "grouping_sets", "aggregates"});
        SchemaPtr in = p.input_schema(0);
        auto cfg = std::make_shared<GroupAggConfig>();
        cfg->where = p.where();
        cfg->out_schema = p.output_schema();
        cfg->grouping = SqlGrouping::parse(p, *in);
        cfg->aggs = std::make_shared<const AggregateSet>(
            AggregateSet::parse(p.has("aggregates") ? p.params().at("aggregates") : nlohmann::json::array(), *in, p),
            true);
        std::vector<RowField> fields;
        cfg->grouping.key_fields(*in, fields);
        for (const auto& c : cfg->aggs->calls()) fields.push_back({"", c.result_type});
        check_output_types(*cfg->out_schema, fields, p);
        return [cfg] { return std::make_unique<SqlGroupAggregateOperator>(*cfg); };
      }});
}

}  // namespace clink::sql
