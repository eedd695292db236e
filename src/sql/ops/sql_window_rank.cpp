// sql_window_rank: Flink's WindowRank and WindowDeduplicate over rows that carry their
// window (a window TVF's or a window aggregate's window_start / window_end). The partition
// keys include the window bounds, so each state key holds one window of one partition: a
// small sorted buffer in keyed value state "window-rank" keeping only the rows that can rank
// (ties in arrival order), updated once per key per batch. When the watermark reaches
// window_end - 1 the buffer's rows in [rank_start, rank_end] are emitted (+I, with the rank
// number when output) and the state cleared. Insert-only in and out; output rows carry
// window_end - 1 as event time. With `deduplicate` ({time_column, keep_last}) the buffer holds
// one row: keep-first replaces it by a strictly earlier rowtime, keep-last by a later or
// equal one (RowTimeDeduplicateRecordsCombiner). A row whose window already fired is late:
// dropped and counted in late_records_dropped.
#include <absl/container/flat_hash_map.h>
#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "clink/runtime/lateness.hpp"
#include "clink/sql/ops/sql_grouping.hpp"
#include "clink/state/keyed_state_backend.hpp"
#include "rank_support.hpp"
#include "sql_op_registration.hpp"

namespace clink::sql {
namespace {

struct WindowRankConfig {
  std::string where;
  SchemaPtr in_schema, out_schema;
  std::vector<std::size_t> keys;
  std::vector<SortKey> order;
  std::int64_t rank_start = 1, rank_end = 1;
  bool output_rank_number = false;
  std::size_t window_end = 0;
  bool deduplicate = false;
  bool keep_last = false;
};

class SqlWindowRankOperator final : public StreamOperator {
 public:
  explicit SqlWindowRankOperator(std::shared_ptr<const WindowRankConfig> cfg)
      : cfg_(std::move(cfg)),
        keys_(*cfg_->in_schema, cfg_->keys),
        sort_(*cfg_->in_schema, cfg_->order),
        codec_(*cfg_->in_schema),
        out_(cfg_->out_schema, codec_, cfg_->output_rank_number) {}

  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    backend_ = ctx.keyed_state_backend_or_private();
    backend_->set_current_namespace({});
    state_ = backend_->register_state("window-rank", StateKind::kValue);
  }

  void process_batch(int, BatchPtr batch) override {
    const auto& in = column_batch_cast(*batch);
    const Column& end_col = in.column(cfg_->window_end);
    const EventTime wm = lateness_watermark(ctx());  // a row whose window its channel passed is late
    std::int64_t late = 0;
    for (std::size_t r = 0; r < in.size(); ++r) {
      if (in.row_kind(r) != RowKind::kInsert) throw ClinkError(cfg_->where + ": a window Top-N takes insert-only input");
      if (end_col.is_null(r)) throw ClinkError(cfg_->where + ": window_end is NULL");
      const std::int64_t fire_at = floor_ms(end_col.values<std::int64_t>()[r]) - 1;
      if (fire_at <= wm) {
        ++late;
        continue;
      }
      partition_key(keys_, in, r, key_);
      sort_key_.clear();
      sort_.encode(in, r, sort_key_);
      Touched& touched = buffer(key_);
      TopNBuffer& buf = *touched.buf;
      if (cfg_->deduplicate) {
        // One row: keep-first takes a strictly smaller rowtime, keep-last a larger or equal
        // one (the order key is the rowtime, ascending for keep-first, descending for keep-last).
        const bool replace = buf.empty() || (cfg_->keep_last ? std::string_view(sort_key_) <= buf.key(0)
                                                              : std::string_view(sort_key_) < buf.key(0));
        if (!replace) continue;
        row_.clear();
        codec_.encode(in, r, row_);
        buf.clear();
        buf.insert(0, sort_key_, row_);
        touched.dirty = true;
      } else {
        if (static_cast<std::int64_t>(buf.size()) >= cfg_->rank_end && !(std::string_view(sort_key_) < buf.key(buf.size() - 1)))
          continue;
        row_.clear();
        codec_.encode(in, r, row_);
        buf.insert(buf.upper_bound(sort_key_), sort_key_, row_);
        buf.truncate(static_cast<std::size_t>(cfg_->rank_end));
        touched.dirty = true;
      }
      ctx().timer_service().register_event_time_timer(fire_at, key_, {});
    }
    write_back();
    if (late > 0) ctx().metrics().late_records_dropped.fetch_add(late, std::memory_order_relaxed);
  }

  void process_watermark(Watermark wm) override {
    if (!wm.idle) {
      ctx().timer_service().advance_watermark(wm.timestamp, [this](const Timer& t) { on_event_time_timer(t); });
      out_.flush(output());
    }
    output().emit_watermark(wm);
  }

  void on_event_time_timer(const Timer& t) override {
    backend_->set_current_key(t.key);
    if (!backend_->get(state_, bytes_)) return;
    backend_->remove(state_);
    fired_.load(bytes_);
    for (std::size_t i = 0; i < fired_.size(); ++i) {
      const auto rank = static_cast<std::int64_t>(i) + 1;
      if (rank < cfg_->rank_start || rank > cfg_->rank_end) continue;
      out_.emit(fired_.row(i), RowKind::kInsert, rank, t.time);
    }
    if (out_.pending() >= kDefaultBatchSize) out_.flush(output());
  }

 private:
  static std::int64_t floor_ms(std::int64_t micros) { return micros >= 0 ? micros / 1000 : -((-micros + 999) / 1000); }

  // A (partition, window) buffer for the batch, read from state on first touch, and whether
  // a row went into it (only those are written back).
  struct Touched {
    TopNBuffer* buf = nullptr;
    bool dirty = false;
  };
  Touched& buffer(const std::string& key) {
    auto [it, created] = touched_.try_emplace(key);
    if (created) {
      if (used_ == pool_.size()) pool_.push_back(std::make_unique<TopNBuffer>());
      it->second.buf = pool_[used_++].get();
      it->second.buf->clear();
      backend_->set_current_key(key);
      if (backend_->get(state_, bytes_)) it->second.buf->load(bytes_);
    }
    return it->second;
  }

  void write_back() {
    for (auto& [key, t] : touched_) {
      TopNBuffer* buf = t.buf;
      if (!t.dirty || buf->empty()) continue;
      backend_->set_current_key(key);
      bytes_.clear();
      buf->save(bytes_);
      backend_->put(state_, bytes_);
    }
    touched_.clear();
    used_ = 0;
  }

  std::shared_ptr<const WindowRankConfig> cfg_;
  RowKeyEncoder keys_;
  SortKeyEncoder sort_;
  RankRowCodec codec_;
  RankEmitter out_;
  KeyedStateBackend* backend_ = nullptr;
  StateId state_;
  absl::flat_hash_map<std::string, Touched> touched_;
  std::vector<std::unique_ptr<TopNBuffer>> pool_;
  std::size_t used_ = 0;
  TopNBuffer fired_;
  std::string key_, sort_key_, row_, bytes_;
};

}  // namespace

void register_sql_window_rank(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "sql_window_rank",
      .description = "sql_row -> sql_row: window Top-N / window deduplication over rows carrying their window, "
                     "emitted when the watermark passes the window's end",
      .num_inputs = 1,
      .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        SqlOpParams p(ctx, "sql_window_rank",
                      {"keys", "order", "rank_start", "rank_end", "output_rank_number", "window_end", "deduplicate"});
        auto cfg = std::make_shared<WindowRankConfig>();
        cfg->where = p.where();
        cfg->in_schema = p.input_schema(0);
        cfg->out_schema = p.output_schema();
        cfg->keys = p.columns("keys", *cfg->in_schema);
        cfg->order = parse_order_keys(p, *cfg->in_schema);
        cfg->rank_start = p.get_int("rank_start", 1, 1);
        cfg->rank_end = p.require_int("rank_end", 1);
        cfg->output_rank_number = p.get_bool("output_rank_number", false);
        cfg->window_end = p.column(p.require("window_end"), *cfg->in_schema, "param 'window_end'");
        const auto& we = cfg->in_schema->type(cfg->window_end);
        if (!we.is(TypeKind::kTimestamp)) p.fail("param 'window_end' must be a TIMESTAMP column, got " + we.to_string());
        if (std::find(cfg->keys.begin(), cfg->keys.end(), cfg->window_end) == cfg->keys.end())
          p.fail("the window_end column must be a partition key");
        if (p.has("deduplicate")) {
          const auto& d = p.params().at("deduplicate");
          cfg->deduplicate = true;
          cfg->keep_last = d.value("keep_last", false);
          const std::size_t tc = p.column(d.at("time_column"), *cfg->in_schema, "param 'deduplicate.time_column'");
          // The rowtime, ascending for keep-first and descending for keep-last (a larger rowtime
          // then encodes smaller); the buffer compares these keys.
          cfg->order = {SortKey{tc, cfg->keep_last, !cfg->keep_last}};
          if (cfg->rank_start != 1 || cfg->rank_end != 1) p.fail("a window deduplication ranks 1 to 1");
        }
        RankRowCodec::check_storable(*cfg->in_schema, p);
        std::vector<RowField> fields = cfg->in_schema->fields();
        if (cfg->output_rank_number) fields.push_back({"", LogicalType::bigint().not_null()});
        check_output_types(*cfg->out_schema, fields, p);
        return [cfg] { return std::make_unique<SqlWindowRankOperator>(cfg); };
      }});
}

}  // namespace clink::sql
