// sql_rank: Flink's streaming Top-N (StreamExecRank), ROW_NUMBER over each partition,
// emitting exactly the changelog of Flink's functions, per input row in order:
//   strategy "append"  (AppendOnlyTopNFunction, insert-only input) keeps per partition the
//                      rows that can still rank, a small sorted buffer in keyed value state
//                      "rank-buffer" (kept decoded across batches in a bounded cache,
//                      written back at the end of each batch it changed in);
//   strategy "retract" (RetractableTopNFunction, updating input) keeps every row of the
//                      partition in keyed map state "rank-data": sort key -> [count, rows]
//                      (the map's byte order is the sort order), since a retraction can
//                      bring any row back into the range.
// With the rank number output (or a range not starting at 1) a change of ranks emits -U/+U
// for every shifted row; without it only the rows entering and leaving the range (+I/-D).
// Ties rank in arrival order. `state_ttl_ms` (table.exec.state.ttl): state expires that long
// (processing time) after its last write.
#include <algorithm>

#include <absl/container/node_hash_map.h>

#include "clink/core/error.hpp"
#include "clink/state/keyed_state_backend.hpp"
#include "clink/state/state_ttl.hpp"
#include "rank_support.hpp"
#include "sql_op_registration.hpp"
#include "sql_rank_retract.hpp"

namespace clink::sql {
namespace {

class SqlRankOperator final : public StreamOperator {
 public:
  explicit SqlRankOperator(std::shared_ptr<const RankConfig> cfg)
      : cfg_(std::move(cfg)),
        keys_(*cfg_->in_schema, cfg_->keys),
        sort_(*cfg_->in_schema, cfg_->order),
        codec_(*cfg_->in_schema),
        out_(cfg_->out_schema, codec_, cfg_->output_rank_number,
             cfg_->top1() ? std::optional<std::int64_t>(1) : std::nullopt),
        retract_(*cfg_, out_) {}

  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    if (cfg_->keys.empty() && ctx.parallelism() > 1)
      throw ClinkError(cfg_->where + ": a Top-N without PARTITION BY runs at parallelism 1, got " +
                       std::to_string(ctx.parallelism()));
    backend_ = ctx.keyed_state_backend_or_private();
    backend_->set_current_namespace({});
    max_cached_ = std::max<std::size_t>(64, kCachedRows / static_cast<std::size_t>(cfg_->rank_end));
    if (cfg_->retract)
      retract_.open(*backend_);
    else
      state_ = backend_->register_state("rank-buffer", StateKind::kValue, cfg_->state_ttl_ms);
  }

  void process_batch(int, BatchPtr batch) override {
    const auto& in = column_batch_cast(*batch);
    now_ = cfg_->state_ttl_ms > 0 ? backend_->clock().now_ms() : 0;
    for (std::size_t r = 0; r < in.size(); ++r) {
      partition_key(keys_, in, r, key_);
      sort_key_.clear();
      sort_.encode(in, r, sort_key_);
      if (cfg_->retract) {
        row_.clear();
        codec_.encode(in, r, row_);
        const RowKind kind = in.row_kind(r);
        retract_.process(key_, sort_key_, row_, kind == RowKind::kInsert || kind == RowKind::kUpdateAfter, now_);
      } else {
        if (in.row_kind(r) != RowKind::kInsert)
          throw ClinkError(cfg_->where + ": the append-only Top-N received a " + std::string(row_kind_short_string(in.row_kind(r))) + " row");
        append(buffer(key_), in, r);
      }
      if (out_.pending() >= kDefaultBatchSize) out_.flush(output());
    }
    write_back();
    out_.flush(output());
  }

 private:
  // A partition's buffer, whether a row went into it in this batch, and its key.
  struct Cached {
    TopNBuffer buf;
    bool dirty = false;
    const std::string* key = nullptr;
  };
  static constexpr std::size_t kCachedRows = 100000;

  // AppendOnlyTopNFunction.processElement for row r (its sort key in sort_key_). Most rows
  // of a long stream do not rank: they are rejected before the row is encoded.
  void append(Cached& cached, const ColumnBatch& in, std::size_t r) {
    TopNBuffer& buf = cached.buf;
    const std::int64_t end = cfg_->rank_end;
    // checkSortKeyInBufferRange: better than the worst kept key, or room left.
    if (!buf.empty() && !(std::string_view(sort_key_) < buf.key(buf.size() - 1)) &&
        static_cast<std::int64_t>(buf.size()) >= end)
      return;
    row_.clear();
    codec_.encode(in, r, row_);
    if (!cached.dirty) {
      cached.dirty = true;
      dirty_.push_back(&cached);
    }
    const std::size_t pos = buf.upper_bound(sort_key_);
    buf.insert(pos, sort_key_, row_);
    // FastTop1Function (top-1) replaces the top row as -U / +U, as the numbered path does.
    if (cfg_->output_rank_number || cfg_->rank_start > 1 || cfg_->top1()) {
      std::int64_t rank = 0;
      bool found = false;
      std::size_t current = 0;  // the row taking the next rank
      std::size_t i = 0;
      while (i < buf.size() && rank <= end) {
        const std::size_t j = buf.group_end(i);
        if (!found && buf.key(i) == std::string_view(sort_key_)) {
          rank += static_cast<std::int64_t>(j - i);
          current = pos;  // the new row is the last of its ties
          found = true;
        } else if (found) {
          for (std::size_t t = i; t < j && rank <= end; ++t) {
            update_before(buf.row(t), rank);
            update_after(buf.row(current), rank);
            current = t;
            rank += 1;
          }
        } else {
          rank += static_cast<std::int64_t>(j - i);
        }
        i = j;
      }
      if (rank <= end && in_range(rank)) out_.emit(buf.row(current), RowKind::kInsert, rank);
      buf.truncate(i);  // the keys past the range go
      return;
    }
    if (static_cast<std::int64_t>(buf.size()) > end) {
      const std::size_t last = buf.size() - 1;
      const std::string_view last_row = buf.row(last);
      buf.erase(last);
      if (RankRowCodec::same_values(last_row, row_)) return;
      out_.emit(last_row, RowKind::kDelete, 0);
    }
    out_.emit(row_, RowKind::kInsert, 0);
  }

  bool in_range(std::int64_t rank) const { return rank >= cfg_->rank_start && rank <= cfg_->rank_end; }
  void update_before(std::string_view row, std::int64_t rank) {
    if (in_range(rank)) out_.emit(row, RowKind::kUpdateBefore, rank);
  }
  void update_after(std::string_view row, std::int64_t rank) {
    if (in_range(rank)) out_.emit(row, RowKind::kUpdateAfter, rank);
  }

  // The partition's buffer: from the cache, else read from state.
  Cached& buffer(const std::string& key) {
    auto [it, created] = cache_.try_emplace(key);
    Cached& c = it->second;
    if (created) {
      c.key = &it->first;
      backend_->set_current_key(key);
      if (backend_->get(state_, bytes_)) {
        std::string_view v(bytes_);
        bool expired = false;
        if (cfg_->state_ttl_ms > 0) expired = ttl_expired(get_ttl_timestamp(v), cfg_->state_ttl_ms, now_);
        if (!expired) c.buf.load(v);
      }
    }
    return c;
  }

  // Writes the buffers rows went into (a rejected row leaves its buffer, and its TTL, as they
  // were), so state is complete at every batch boundary (where checkpoints happen). The
  // cache is dropped when it grew past its budget, and after every batch with a state TTL
  // (expiry is decided when state is read).
  void write_back() {
    for (Cached* c : dirty_) {
      c->dirty = false;
      backend_->set_current_key(*c->key);
      if (c->buf.empty()) {
        backend_->remove(state_);
        continue;
      }
      bytes_.clear();
      if (cfg_->state_ttl_ms > 0) put_ttl_timestamp(now_, bytes_);
      c->buf.save(bytes_);
      backend_->put(state_, bytes_);
      c->buf.compact_if_sparse();
    }
    dirty_.clear();
    if (cfg_->state_ttl_ms > 0 || cache_.size() > max_cached_) cache_.clear();
  }

  std::shared_ptr<const RankConfig> cfg_;
  RowKeyEncoder keys_;
  SortKeyEncoder sort_;
  RankRowCodec codec_;
  RankEmitter out_;
  RetractableTopN retract_;
  KeyedStateBackend* backend_ = nullptr;
  StateId state_;
  std::int64_t now_ = 0;
  // Decoded buffers kept across batches, as Flink's AppendOnlyTopNFunction keeps a heap cache
  // of TopNBuffers (table.exec.rank.topn-cache-size rows): a row that does not rank costs
  // two hash lookups and a compare. Node map: dirty_ points into it.
  absl::node_hash_map<std::string, Cached> cache_;
  std::vector<Cached*> dirty_;
  std::size_t max_cached_ = 0;
  std::string key_, sort_key_, row_, bytes_;
};

}  // namespace

void register_sql_rank(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "sql_rank",
      .description = "sql_row -> sql_row: streaming Top-N (ROW_NUMBER per partition) with Flink's changelog; "
                     "append-only input (AppendFast) or retracting input (Retract)",
      .num_inputs = 1,
      .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        SqlOpParams p(ctx, "sql_rank",
                      {"keys", "order", "rank_start", "rank_end", "output_rank_number", "strategy", "state_ttl_ms"});
        auto cfg = std::make_shared<RankConfig>(RankConfig::parse(p));
        const std::string strategy = p.get_string("strategy", "append");
        if (strategy != "append" && strategy != "retract") p.fail("param 'strategy' must be 'append' or 'retract'");
        cfg->retract = strategy == "retract";
        cfg->state_ttl_ms = p.get_int("state_ttl_ms", 0, 0);
        return [cfg] { return std::make_unique<SqlRankOperator>(cfg); };
      }});
}

}  // namespace clink::sql
