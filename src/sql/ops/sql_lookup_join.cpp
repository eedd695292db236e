// sql_lookup_join: Flink's LookupJoin run asynchronously, as its AsyncWaitOperator runs an
// AsyncLookupJoinRunner (the params: lookup_join_spec.hpp).
//
// Per input row: the lookup key (NULL in any key column, or a LEFT join's pre-filter
// failing: no lookup, no match), then the partial cache ('lookup.cache' = 'PARTIAL',
// lookup_cache.hpp), then, for the keys it misses, the table: every key a chunk of rows
// misses goes to the lookup thread as one request (lookup_worker.hpp), so a database gets
// one query per chunk. Rows wait in a queue of at most
// 'table.exec.async-lookup.buffer-capacity' rows (input blocks while it is full) and come
// out joined: each match as a row (after the filter on fetched rows and the remaining
// condition), or, LEFT, the row padded with NULLs when nothing matched; each with its
// input row's kind and event time.
//
// Order ('table.exec.async-lookup.output-mode'): ORDERED emits rows in input order;
// ALLOW_UNORDERED emits rows as their lookups complete. Either way a watermark is an
// element of the queue: it goes out after every row that arrived before it, and no row
// that arrived after it overtakes it (Flink's AsyncWaitOperator).
//
// Checkpoints: the rows and watermarks still queued (looked up or not) are operator state
// `lookup-join-in-flight` (even-split lists, as Flink's "_async_wait_operator_state_");
// a restore queues them again, before new input, and looks their rows up again. A lookup
// request older than 'table.exec.async-lookup.timeout' fails the job, as Flink's default
// timeout(). Results come back through the task's mailbox (RuntimeContext::post_to_task).
#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <optional>

#include <absl/container/flat_hash_map.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "clink/connectors/sql/lookup_source.hpp"
#include "clink/core/error.hpp"
#include "clink/runtime/operator.hpp"
#include "clink/sql/common/column_key.hpp"
#include "clink/sql/common/column_serde.hpp"
#include "clink/sql/expression/expr_compiler.hpp"
#include "clink/sql/spec/expr_json.hpp"
#include "clink/sql/spec/lookup_join_spec.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"
#include "lookup_cache.hpp"
#include "lookup_worker.hpp"
#include "sql_op_registration.hpp"

namespace clink::sql {
namespace {

constexpr std::uint32_t kNone = UINT32_MAX;
constexpr const char* kInFlightState = "lookup-join-in-flight";

struct LookupJoinConfig {
  std::string where;
  std::string table;
  SchemaPtr in_schema;
  SchemaPtr out_schema;
  SchemaPtr row_schema;  // the fetched row
  bool left_outer = false;
  std::vector<std::size_t> key_columns;  // into the fetched row, in key order
  std::vector<ExprPtr> key_values;       // over the input row
  ExprPtr pre_filter, dim_filter, condition;
  LookupOptions lookup;
  AsyncLookupOptions async;
  std::string source_factory;
  LookupSourceContext source;
  SessionContext session;
};

// Queued input rows and, per row, its table rows (count 0: none).
struct RowsEntry {
  explicit RowsEntry(ColumnBatch r) : rows(std::move(r)), results(rows.size()) {}
  ColumnBatch rows;
  std::vector<LookupRows> results;
  std::size_t pending = 0;  // rows still waiting for a lookup
};

struct QueueItem {
  std::shared_ptr<RowsEntry> rows;  // null: a watermark
  Watermark watermark;
};

// The lookup thread's results reach the task thread through its mailbox; the op may be
// gone (closed) by the time a posted action runs.
struct Wakeup {
  std::atomic<bool> posted{false};
  class SqlLookupJoinOperator* op = nullptr;
  RuntimeContext* ctx = nullptr;
};

// Appends src[idx[k]] for each k, NULL where idx[k] is kNone.
void gather_or_null(Column& dst, const Column& src, const std::uint32_t* idx, std::size_t n) {
  std::size_t k = 0;
  while (k < n) {
    if (idx[k] == kNone) {
      dst.append_null();
      ++k;
      continue;
    }
    std::size_t end = k;
    while (end < n && idx[end] != kNone) ++end;
    dst.append_gather(src, idx + k, end - k);
    k = end;
  }
}

// Rows [start, start + n) of `in` (contiguous copies, no index vector).
ColumnBatch slice(const ColumnBatch& in, std::size_t start, std::size_t n) {
  ColumnBatch out(in.schema(), n);
  for (std::size_t c = 0; c < in.num_columns(); ++c) out.column(c).append_range(in.column(c), start, start + n);
  auto first = static_cast<std::ptrdiff_t>(start), last = static_cast<std::ptrdiff_t>(start + n);
  out.row_kinds().assign(in.row_kinds().begin() + first, in.row_kinds().begin() + last);
  out.event_times().assign(in.event_times().begin() + first, in.event_times().begin() + last);
  return out;
}

bool is_true(const Column& c, std::size_t r) { return !c.is_null(r) && c.values<std::uint8_t>()[r] != 0; }

class SqlLookupJoinOperator final : public StreamOperator {
 public:
  explicit SqlLookupJoinOperator(std::shared_ptr<const LookupJoinConfig> cfg) : cfg_(std::move(cfg)) {
    for (const auto& v : cfg_->key_values) key_values_.emplace_back(v, cfg_->session);
    if (cfg_->pre_filter) pre_filter_.emplace(cfg_->pre_filter, cfg_->session);
    if (cfg_->dim_filter) dim_filter_.emplace(cfg_->dim_filter, cfg_->session);
    if (cfg_->condition) condition_.emplace(cfg_->condition, cfg_->session);
    if (cfg_->lookup.partial_cache) cache_.emplace(cfg_->lookup);
  }

  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    const LookupSourceFactory* factory = LookupSourceRegistry::process().find(cfg_->source_factory);
    if (!factory)
      throw ClinkError(cfg_->where + ": no lookup source '" + cfg_->source_factory + "' is registered in this process");
    std::unique_ptr<LookupSource> source = (*factory)(cfg_->source);
    wakeup_ = std::make_shared<Wakeup>();
    wakeup_->op = this;
    wakeup_->ctx = &ctx;
    worker_ = std::make_unique<LookupWorker>(std::move(source), cfg_->row_schema, cfg_->lookup.max_retries,
                                             cfg_->where + " (table `" + cfg_->table + "`)",
                                             [w = wakeup_] { notify(w); });
    // Rows and watermarks a checkpoint held in flight go first, looked up again.
    auto& list = ctx.operator_state().list(kInFlightState);
    std::vector<std::string> items = std::move(list);
    list.clear();
    for (const auto& item : items) {
      if (item.empty()) continue;
      if (item[0] == 'W' && item.size() == 10) {
        Watermark wm;
        std::memcpy(&wm.timestamp, item.data() + 1, 8);
        wm.idle = item[9] != 0;
        queue_.push_back({nullptr, wm});
      } else if (item[0] == 'R') {
        enqueue(deserialize_batch(cfg_->in_schema, std::string_view(item).substr(1)));
      } else {
        throw ClinkError(cfg_->where + ": unreadable in-flight state item");
      }
    }
  }

  void process_batch(int, BatchPtr batch) override {
    auto& in = column_batch_cast(*batch);
    poll();
    const std::size_t cap = static_cast<std::size_t>(cfg_->async.capacity);
    if (in.size() <= cap) {
      wait_for_room(in.size());
      enqueue(std::move(in));
    } else {
      for (std::size_t start = 0; start < in.size(); start += cap) {
        const std::size_t n = std::min(cap, in.size() - start);
        wait_for_room(n);
        enqueue(slice(in, start, n));
      }
    }
    drain();
  }

  void process_watermark(Watermark wm) override {
    poll();
    if (queue_.empty()) {
      output().emit_watermark(wm);
      return;
    }
    queue_.push_back({nullptr, wm});
    drain();
  }

  void on_processing_time_timer(const Timer&) override {
    timer_at_.reset();
    poll();
    arm_timeout();
  }

  void finish() override {
    while (!queue_.empty()) {
      poll();
      if (queue_.empty()) break;
      await_response();
    }
  }

  void snapshot_state(std::int64_t) override {
    auto& list = ctx().operator_state().list(kInFlightState);
    list.clear();
    for (const auto& item : queue_) {
      if (item.rows) {
        std::string s = "R";
        serialize_batch(item.rows->rows, s);
        list.push_back(std::move(s));
      } else {
        std::string s(10, '\0');
        s[0] = 'W';
        std::memcpy(s.data() + 1, &item.watermark.timestamp, 8);
        s[9] = item.watermark.idle ? 1 : 0;
        list.push_back(std::move(s));
      }
    }
  }

  void close() override {
    if (wakeup_) wakeup_->op = nullptr;
    worker_.reset();  // joins the lookup thread
  }

  // The mailbox action: the lookup thread answered.
  void poll() {
    if (!worker_) return;
    responses_.clear();
    if (worker_->take(responses_))
      for (auto& r : responses_) on_response(r);
    check_timeout();
    drain();
  }

 private:
  static void notify(const std::shared_ptr<Wakeup>& w) {
    if (w->posted.exchange(true)) return;
    RuntimeContext* ctx = w->ctx;
    if (!ctx || !ctx->post_to_task([w] {
          w->posted = false;
          if (w->op) w->op->poll();
        }))
      w->posted = false;  // no task (an operator driven by hand): polled on its next call
  }

  std::int64_t now() { return ctx().timer_service().current_processing_time(); }

  // Blocks (the task's input waits, as Flink's full queue) until `n` more rows fit.
  void wait_for_room(std::size_t n) {
    drain();  // answered rows (cache hits) leave first
    while (in_flight_rows_ + n > static_cast<std::size_t>(cfg_->async.capacity) && !queue_.empty()) {
      await_response();
      poll();
    }
  }

  void await_response() {
    if (ctx().cancelled()) throw TaskCancelled();
    check_timeout();
    worker_->wait(std::chrono::steady_clock::now() + std::chrono::milliseconds(50));
  }

  void check_timeout() {
    if (requests_.empty()) return;
    const std::int64_t age = now() - requests_.begin()->second.sent_ms;
    if (age > cfg_->async.timeout_ms)
      throw ClinkError(fmt::format("{}: a lookup in table `{}` took longer than {} ms "
                                   "('table.exec.async-lookup.timeout'): Async function call has timed out.",
                                   cfg_->where, cfg_->table, cfg_->async.timeout_ms));
  }

  // A processing-time timer at the oldest request's deadline, so a stuck lookup fails the
  // job even when no input arrives.
  void arm_timeout() {
    if (requests_.empty()) return;
    const std::int64_t at = requests_.begin()->second.sent_ms + cfg_->async.timeout_ms + 1;
    if (timer_at_ && *timer_at_ <= at) return;
    ctx().timer_service().register_processing_time_timer(at, "", "lookup-timeout");
    timer_at_ = at;
  }

  void enqueue(ColumnBatch rows) {
    const std::size_t n = rows.size();
    if (n == 0) return;
    const Column* pre = pre_filter_ ? &pre_filter_->evaluate(rows) : nullptr;
    key_columns_.clear();
    for (auto& v : key_values_) key_columns_.push_back(&v.evaluate(rows));
    std::vector<LookupRows> results(n);
    miss_rows_.clear();
    miss_keys_.clear();
    const std::int64_t t = now();
    for (std::size_t r = 0; r < n; ++r) {
      if (pre && !is_true(*pre, r)) continue;  // not looked up: no match
      bool null_key = false;
      for (const Column* c : key_columns_) null_key = null_key || c->is_null(r);
      if (null_key) continue;  // `=` never matches NULL
      key_.clear();
      for (const Column* c : key_columns_) append_key_value(*c, r, key_);
      if (cache_)
        if (const LookupRows* hit = cache_->get(key_, t)) {
          results[r] = *hit;
          continue;
        }
      miss_rows_.push_back(static_cast<std::uint32_t>(r));
      miss_keys_.push_back(key_);
    }
    in_flight_rows_ += n;
    if (miss_rows_.empty()) {
      push_entry(std::move(rows), std::move(results), {}, {});
      return;
    }
    if (cfg_->async.ordered || miss_rows_.size() == n) {
      push_entry(std::move(rows), std::move(results), miss_rows_, miss_keys_);
      return;
    }
    // Unordered: the rows already answered form an entry of their own, free to go out now.
    std::vector<std::uint32_t> done;
    std::size_t m = 0;
    for (std::uint32_t r = 0; r < n; ++r) {
      if (m < miss_rows_.size() && miss_rows_[m] == r) {
        ++m;
        continue;
      }
      done.push_back(r);
    }
    std::vector<LookupRows> done_results;
    for (auto r : done) done_results.push_back(std::move(results[r]));
    push_entry(rows.gather(done.data(), done.size()), std::move(done_results), {}, {});
    std::vector<std::uint32_t> local(miss_rows_.size());
    for (std::size_t i = 0; i < local.size(); ++i) local[i] = static_cast<std::uint32_t>(i);
    ColumnBatch missed = rows.gather(miss_rows_.data(), miss_rows_.size());
    push_entry(std::move(missed), std::vector<LookupRows>(miss_rows_.size()), local, miss_keys_);
  }

  // Queues `rows` (their `results` filled where known); the rows at `waiting` wait for
  // the lookup of their key (`keys`, pairwise; waiting row i is the chunk's miss_rows_[i]),
  // sent for the keys no request asks yet.
  void push_entry(ColumnBatch rows, std::vector<LookupRows> results, const std::vector<std::uint32_t>& waiting,
                  const std::vector<std::string>& keys) {
    auto entry = std::make_shared<RowsEntry>(std::move(rows));
    entry->results = std::move(results);
    std::unique_ptr<ColumnBatch> request;
    std::vector<std::string> request_keys;
    for (std::size_t i = 0; i < waiting.size(); ++i) {
      auto [it, fresh] = waiters_.try_emplace(keys[i]);
      it->second.push_back({entry.get(), waiting[i]});
      ++entry->pending;
      if (!fresh) continue;
      if (!request) request = std::make_unique<ColumnBatch>(cfg_->source.key_schema, waiting.size());
      const std::size_t src = miss_rows_[i];  // the chunk's row the key columns were evaluated on
      for (std::size_t k = 0; k < key_columns_.size(); ++k) request->column(k).append_range(*key_columns_[k], src, src + 1);
      request_keys.push_back(keys[i]);
    }
    if (request) {
      request->commit_rows(request_keys.size());
      const std::uint64_t id = next_request_++;
      requests_.emplace(id, PendingRequest{now(), std::move(request_keys)});
      worker_->submit(LookupRequest{id, std::move(request)});
      arm_timeout();
    }
    queue_.push_back({std::move(entry), {}});
  }

  void on_response(LookupResponse& r) {
    if (!r.error.empty()) throw ClinkError(r.error);
    auto found = requests_.find(r.id);
    if (found == requests_.end()) return;
    PendingRequest req = std::move(found->second);
    requests_.erase(found);
    ColumnBatch& rows = *r.rows;
    if (dim_filter_ && rows.size() > 0) {
      dim_filter_->select_mask(rows, mask_);
      rows = rows.filter(mask_.data());
    }
    // Each returned row to its key's position; the rows regrouped so each key's are adjacent.
    position_.clear();
    for (std::size_t i = 0; i < req.keys.size(); ++i) position_.emplace(std::string_view(req.keys[i]), i);
    counts_.assign(req.keys.size() + 1, 0);
    row_pos_.resize(rows.size());
    for (std::size_t j = 0; j < rows.size(); ++j) {
      key_.clear();
      for (auto kc : cfg_->key_columns) append_key_value(rows.column(kc), j, key_);
      auto it = position_.find(std::string_view(key_));
      row_pos_[j] = it == position_.end() ? kNone : static_cast<std::uint32_t>(it->second);
      if (row_pos_[j] != kNone) ++counts_[row_pos_[j] + 1];
    }
    for (std::size_t i = 1; i < counts_.size(); ++i) counts_[i] += counts_[i - 1];
    order_.assign(counts_.back(), 0);
    std::vector<std::uint32_t> fill(counts_.begin(), counts_.end() - 1);
    for (std::size_t j = 0; j < rows.size(); ++j)
      if (row_pos_[j] != kNone) order_[fill[row_pos_[j]]++] = static_cast<std::uint32_t>(j);
    auto grouped = std::make_shared<const ColumnBatch>(rows.gather(order_.data(), order_.size()));
    const std::int64_t t = now();
    for (std::size_t i = 0; i < req.keys.size(); ++i) {
      LookupRows lr{grouped, counts_[i], counts_[i + 1] - counts_[i]};
      if (cache_) cache_->put(req.keys[i], lr, t);
      auto w = waiters_.find(req.keys[i]);
      if (w == waiters_.end()) continue;
      for (const auto& [entry, row] : w->second) {
        entry->results[row] = lr;
        --entry->pending;
      }
      waiters_.erase(w);
    }
  }

  // Emits what may go out: ORDERED the complete entries at the front; ALLOW_UNORDERED
  // every complete entry before the first watermark; then a watermark at the front.
  void drain() {
    for (;;) {
      if (cfg_->async.ordered) {
        while (!queue_.empty() && queue_.front().rows && queue_.front().rows->pending == 0) {
          emit_entry(*queue_.front().rows);
          queue_.pop_front();
        }
      } else {
        for (auto it = queue_.begin(); it != queue_.end() && it->rows;) {
          if (it->rows->pending == 0) {
            emit_entry(*it->rows);
            it = queue_.erase(it);
          } else {
            ++it;
          }
        }
      }
      if (queue_.empty() || queue_.front().rows) return;
      output().emit_watermark(queue_.front().watermark);
      queue_.pop_front();
    }
  }

  void emit_entry(const RowsEntry& e) {
    const ColumnBatch& in = e.rows;
    in_flight_rows_ -= in.size();
    if (!condition_) {
      emit_matches(e);
      return;
    }
    // The candidates: each input row with each of its table rows.
    cand_in_.clear();
    ColumnBatch dim(cfg_->row_schema, in.size());
    for (std::size_t r = 0; r < in.size(); ++r) {
      const LookupRows& m = e.results[r];
      if (m.count == 0) continue;
      for (std::size_t c = 0; c < dim.num_columns(); ++c)
        dim.column(c).append_range(m.batch->column(c), m.begin, m.begin + m.count);
      cand_in_.insert(cand_in_.end(), m.count, static_cast<std::uint32_t>(r));
    }
    dim.commit_rows(cand_in_.size());
    // The output rows: candidates passing the condition; LEFT, a row none passed, padded.
    out_in_.clear();
    out_cand_.clear();
    const Column* pass = nullptr;
    std::optional<ColumnBatch> joined;
    if (condition_ && !cand_in_.empty()) {
      joined.emplace(join_rows(in, cand_in_, dim, nullptr));
      pass = &condition_->evaluate(*joined);
    }
    std::size_t c = 0;
    for (std::size_t r = 0; r < in.size(); ++r) {
      bool any = false;
      for (; c < cand_in_.size() && cand_in_[c] == r; ++c) {
        if (pass && !is_true(*pass, c)) continue;
        out_in_.push_back(static_cast<std::uint32_t>(r));
        out_cand_.push_back(static_cast<std::uint32_t>(c));
        any = true;
      }
      if (!any && cfg_->left_outer) {
        out_in_.push_back(static_cast<std::uint32_t>(r));
        out_cand_.push_back(kNone);
      }
    }
    if (out_in_.empty()) return;
    output().emit(std::make_unique<ColumnBatch>(join_rows(in, out_in_, dim, &out_cand_)));
  }

  // Without a remaining condition every match is an output row: the table's columns are
  // copied once, straight from the looked-up rows.
  void emit_matches(const RowsEntry& e) {
    const ColumnBatch& in = e.rows;
    out_in_.clear();
    for (std::size_t r = 0; r < in.size(); ++r) {
      const std::uint32_t n = e.results[r].count;
      if (n > 0) out_in_.insert(out_in_.end(), n, static_cast<std::uint32_t>(r));
      else if (cfg_->left_outer) out_in_.push_back(static_cast<std::uint32_t>(r));
    }
    const std::size_t n = out_in_.size();
    if (n == 0) return;
    auto out = std::make_unique<ColumnBatch>(cfg_->out_schema, n);
    const std::size_t nl = in.num_columns();
    for (std::size_t c = 0; c < nl; ++c) out->column(c).append_gather(in.column(c), out_in_.data(), n);
    for (std::size_t c = 0; c < cfg_->row_schema->size(); ++c) {
      Column& dst = out->column(nl + c);
      for (std::size_t r = 0; r < in.size(); ++r) {
        const LookupRows& m = e.results[r];
        if (m.count > 0) dst.append_range(m.batch->column(c), m.begin, m.begin + m.count);
        else if (cfg_->left_outer) dst.append_null();
      }
    }
    auto& kinds = out->row_kinds();
    auto& times = out->event_times();
    kinds.resize(n);
    times.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
      kinds[k] = in.row_kind(out_in_[k]);
      times[k] = in.event_times()[out_in_[k]];
    }
    output().emit(std::move(out));
  }

  // Input rows `in_idx` next to table rows (`dim_idx`: dim's rows, kNone NULLs; null: in order).
  ColumnBatch join_rows(const ColumnBatch& in, const std::vector<std::uint32_t>& in_idx, const ColumnBatch& dim,
                        const std::vector<std::uint32_t>* dim_idx) const {
    const std::size_t n = in_idx.size();
    ColumnBatch out(cfg_->out_schema, n);
    const std::size_t nl = in.num_columns();
    for (std::size_t c = 0; c < nl; ++c) out.column(c).append_gather(in.column(c), in_idx.data(), n);
    for (std::size_t c = 0; c < dim.num_columns(); ++c) {
      if (dim_idx) gather_or_null(out.column(nl + c), dim.column(c), dim_idx->data(), n);
      else out.column(nl + c).append_range(dim.column(c), 0, n);
    }
    auto& kinds = out.row_kinds();
    auto& times = out.event_times();
    kinds.resize(n);
    times.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
      kinds[k] = in.row_kind(in_idx[k]);
      times[k] = in.event_times()[in_idx[k]];
    }
    return out;
  }

  struct PendingRequest {
    std::int64_t sent_ms = 0;
    std::vector<std::string> keys;  // key bytes, in the request's row order
  };
  struct Waiter {
    RowsEntry* entry;  // alive: a waiting entry stays queued
    std::uint32_t row;
  };

  std::shared_ptr<const LookupJoinConfig> cfg_;
  std::vector<CompiledExpr> key_values_;
  std::optional<CompiledExpr> pre_filter_;
  std::optional<CompiledPredicate> dim_filter_;
  std::optional<CompiledExpr> condition_;
  std::optional<LookupCache> cache_;
  std::shared_ptr<Wakeup> wakeup_;
  std::unique_ptr<LookupWorker> worker_;

  std::deque<QueueItem> queue_;
  std::size_t in_flight_rows_ = 0;
  absl::flat_hash_map<std::string, std::vector<Waiter>> waiters_;  // key bytes -> rows waiting for it
  std::map<std::uint64_t, PendingRequest> requests_;              // by id: the first is the oldest
  std::uint64_t next_request_ = 1;
  std::optional<std::int64_t> timer_at_;

  // Scratch, reused across batches.
  std::vector<const Column*> key_columns_;
  std::string key_;
  std::vector<std::uint32_t> miss_rows_;
  std::vector<std::string> miss_keys_;
  std::vector<LookupResponse> responses_;
  std::vector<std::uint64_t> mask_;
  absl::flat_hash_map<std::string_view, std::size_t> position_;
  std::vector<std::uint32_t> counts_, row_pos_, order_;
  std::vector<std::uint32_t> cand_in_, out_in_, out_cand_;
};

ExprPtr optional_expr(const SqlOpParams& p, const char* name, const Schema& over) {
  if (!p.has(name)) return nullptr;
  try {
    ExprPtr e = expr_from_json(p.require(name), over);
    if (!e->type.is(TypeKind::kBoolean)) p.fail(std::string("param '") + name + "' must be a BOOLEAN expression");
    return e;
  } catch (const ClinkError& e) {
    p.fail(std::string("param '") + name + "': " + e.what());
  }
}

OperatorBuilder make_lookup_join(const OperatorSpecContext& ctx) {
  SqlOpParams p(ctx, kSqlLookupJoin,
                {"join_type", "table", "lookup", "options", "dim_schema", "dim_columns", "keys", "pre_filter", "dim_filter",
                 "condition", "async"});
  auto cfg = std::make_shared<LookupJoinConfig>();
  cfg->where = p.where();
  cfg->session = session_from_params(p);
  cfg->in_schema = p.input_schema(0);
  cfg->out_schema = p.output_schema();
  cfg->left_outer = p.get_choice("join_type", "inner", {"inner", "left"}) == "left";
  cfg->table = p.get_string("table", ctx.id);
  cfg->source_factory = p.get_string("lookup", "");
  if (cfg->source_factory.empty()) p.fail("param 'lookup' (the lookup source's factory) is required");
  // The table's options: the source's, and the lookup.* ones the op reads.
  if (p.has("options")) {
    const auto& o = p.require("options");
    if (!o.is_object()) p.fail("param 'options' must be an object of strings");
    for (const auto& [k, v] : o.items()) cfg->source.options.emplace_back(k, v.is_string() ? v.get<std::string>() : v.dump());
  }
  try {
    cfg->lookup = parse_lookup_options(cfg->source.options);
  } catch (const ClinkError& e) {
    p.fail("table `" + cfg->table + "`: " + e.what());
  }
  SchemaPtr dim = schema_from_json(p.require("dim_schema"), p.where() + " param 'dim_schema'");
  std::vector<std::size_t> columns = p.columns("dim_columns", *dim);
  std::vector<RowField> fetched;
  for (auto c : columns) fetched.push_back({dim->name(c), dim->type(c).with_nullable(true)});
  cfg->row_schema = std::make_shared<Schema>(fetched);
  const Schema& out = *cfg->out_schema;
  const std::size_t nl = cfg->in_schema->size();
  if (out.size() != nl + columns.size())
    p.fail(fmt::format("param 'schema' has {} fields, the input's {} and the {} fetched columns make {}", out.size(), nl,
                       columns.size(), nl + columns.size()));
  for (std::size_t i = 0; i < out.size(); ++i) {
    const LogicalType& expected = i < nl ? cfg->in_schema->type(i) : fetched[i - nl].type;
    if (out.type(i).kind() != expected.kind())
      p.fail(fmt::format("param 'schema': field {} ('{}') is {}, expected {}", i, out.name(i), out.type(i).to_string(),
                         expected.to_string()));
  }
  const auto& keys = p.require("keys");
  if (!keys.is_array() || keys.empty()) p.fail("param 'keys' must be a non-empty array of {column, value}");
  std::vector<RowField> key_fields;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    std::size_t col = p.column(keys[i].value("column", nlohmann::json()), *cfg->row_schema, "keys[" + std::to_string(i) + "].column");
    ExprPtr value;
    try {
      value = expr_from_json(keys[i].at("value"), *cfg->in_schema);
    } catch (const std::exception& e) {
      p.fail("param 'keys'[" + std::to_string(i) + "].value: " + e.what());
    }
    if (value->type.kind() != cfg->row_schema->type(col).kind())
      p.fail(fmt::format("param 'keys'[{}]: the value is {}, the column `{}` is {}", i, value->type.to_string(),
                         cfg->row_schema->name(col), cfg->row_schema->type(col).to_string()));
    cfg->key_columns.push_back(col);
    cfg->key_values.push_back(value);
    key_fields.push_back(cfg->row_schema->field(col));
  }
  cfg->pre_filter = optional_expr(p, "pre_filter", *cfg->in_schema);
  cfg->dim_filter = optional_expr(p, "dim_filter", *cfg->row_schema);
  cfg->condition = optional_expr(p, "condition", out);
  if (cfg->pre_filter && !cfg->left_outer) p.fail("param 'pre_filter' applies to LEFT joins only");
  const nlohmann::json async = p.has("async") ? p.require("async") : nlohmann::json::object();
  cfg->async.capacity = async.value("capacity", std::int64_t{100});
  cfg->async.timeout_ms = async.value("timeout_ms", std::int64_t{180000});
  const std::string mode = async.value("output_mode", std::string("ORDERED"));
  if (mode != "ORDERED" && mode != "ALLOW_UNORDERED")
    p.fail("param 'async': output_mode must be ORDERED or ALLOW_UNORDERED, got '" + mode + "'");
  cfg->async.ordered = mode == "ORDERED";
  if (cfg->async.capacity < 1) p.fail("param 'async': capacity must be at least 1");
  if (cfg->async.timeout_ms < 1) p.fail("param 'async': timeout_ms must be positive");
  cfg->source.table = cfg->table;
  cfg->source.where = p.where();
  cfg->source.table_schema = dim;
  cfg->source.columns = columns;
  cfg->source.key_columns = cfg->key_columns;
  cfg->source.row_schema = cfg->row_schema;
  cfg->source.key_schema = std::make_shared<Schema>(key_fields);
  cfg->source.op_id = ctx.id;
  const LookupSourceFactory* factory = LookupSourceRegistry::process().find(cfg->source_factory);
  if (!factory) p.fail("no lookup source '" + cfg->source_factory + "' is registered in this process");
  (void)(*factory)(cfg->source);  // checks the table's options now, not when the job runs
  std::shared_ptr<const LookupJoinConfig> config = cfg;
  return [config] { return std::make_unique<SqlLookupJoinOperator>(config); };
}

}  // namespace

void register_sql_lookup_join(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = kSqlLookupJoin,
      .description = "sql_row -> sql_row: Flink's LookupJoin (JOIN t FOR SYSTEM_TIME AS OF o.proc_time): each row "
                     "joined to a lookup table's rows for its key, fetched asynchronously in batches (partial cache, "
                     "retries, ordered or unordered output, in-flight rows checkpointed)",
      .num_inputs = 1,
      .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
      .make = make_lookup_join});
}

}  // namespace clink::sql
