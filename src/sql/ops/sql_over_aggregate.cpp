// sql_over_aggregate: the factory, and the keyed state and output plumbing the event-time
// and processing-time OVER operators share (sql_over_aggregate.hpp).
#include "sql_over_aggregate.hpp"

#include <limits>

#include <absl/strings/string_view.h>

#include "clink/core/error.hpp"
#include "clink/sql/common/row_kind.hpp"
#include "clink/sql/function/function_registry.hpp"
#include "clink/sql/ops/row_key.hpp"
#include "clink/sql/ops/sql_grouping.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"
#include "clink/state/state_ttl.hpp"
#include "sql_op_registration.hpp"

namespace clink::sql {

namespace {

// The header of "over-acc": flags, then four fixed-width numbers.
constexpr unsigned char kHasLast = 1, kHasCleanup = 2, kHasAcc = 4;

}  // namespace

OverAggregateBase::OverAggregateBase(std::shared_ptr<const OverConfig> cfg)
    : cfg_(std::move(cfg)),
      key_encoder_(*cfg_->in_schema, cfg_->partition_keys),
      row_codec_(*cfg_->in_schema),
      pending_(cfg_->in_schema),
      frame_(cfg_->in_schema) {}

void check_over_parallelism(const std::string& where, bool partitioned, const RuntimeContext& ctx) {
  if (!partitioned && ctx.parallelism() > 1)
    throw ClinkError(where + ": an OVER window without PARTITION BY runs at parallelism 1, got " +
                     std::to_string(ctx.parallelism()));
}

void OverAggregateBase::open(RuntimeContext& ctx) {
  StreamOperator::open(ctx);
  check_over_parallelism(cfg_->where, !cfg_->partition_keys.empty(), ctx);
  backend_ = ctx.keyed_state_backend_or_private();
  backend_->set_current_namespace({});
  // Processing-time unbounded frames expire their accumulators by state TTL (Flink's
  // ProcTimeUnboundedPrecedingFunction); the others run cleanup timers.
  ttl_state_ = cfg_->proctime && !cfg_->bounded() && cfg_->state_ttl_ms > 0;
  acc_state_ = backend_->register_state("over-acc", StateKind::kValue, ttl_state_ ? cfg_->state_ttl_ms : 0);
  pending_.state = backend_->register_state("over-pending", StateKind::kMap);
  frame_.state = backend_->register_state("over-frame", StateKind::kMap);
  cfg_->aggs->bind(pending_.rows, pending_.input);
  cfg_->aggs->bind(frame_.rows, frame_.input);
}

OverAggregateBase::KeyState& OverAggregateBase::touch(std::string_view key) {
  // Debian's Abseil has its own string_view: look up with it (no std::string per lookup).
  if (auto found = touched_.find(absl::string_view(key.data(), key.size())); found != touched_.end())
    return found->second;
  KeyState& k = touched_.try_emplace(std::string(key)).first->second;
  backend_->set_current_key(key);
  if (!backend_->get(acc_state_, bytes_)) return k;
  std::string_view in(bytes_);
  if (ttl_state_) {
    // Flink's StateTtlConfig (OnCreateAndWrite, NeverReturnExpired): gone once expired.
    if (ttl_expired(get_ttl_timestamp(in), cfg_->state_ttl_ms, backend_->clock().now_ms())) {
      k.dirty = true;  // removes the expired value
      return k;
    }
  }
  if (in.size() < 33) throw ClinkError(cfg_->where + ": corrupt OVER aggregate state");
  const auto flags = static_cast<unsigned char>(in[0]);
  in.remove_prefix(1);
  const std::int64_t last = KeyCodec<std::int64_t>::decode(in);
  k.header.count = KeyCodec<std::int64_t>::decode(in);
  const std::int64_t cleanup = KeyCodec<std::int64_t>::decode(in);
  k.header.next_seq = KeyCodec<std::uint64_t>::decode(in);
  if (flags & kHasLast) k.header.last_triggering = last;
  if (flags & kHasCleanup) k.header.cleanup = cleanup;
  if (flags & kHasAcc) {
    k.acc = cfg_->aggs->deserialize(in);
    k.has_acc = true;
  }
  k.exists = true;
  return k;
}

AggState& OverAggregateBase::acc(KeyState& k) {
  if (!k.has_acc) {
    k.acc = cfg_->aggs->create();
    k.has_acc = true;
  }
  k.exists = k.dirty = true;
  return k.acc;
}

void OverAggregateBase::clear_key(std::string_view key, KeyState& k) {
  backend_->set_current_key(key);
  backend_->map_clear(pending_.state);
  backend_->map_clear(frame_.state);
  k = KeyState{};
  k.dirty = true;
}

namespace {
constexpr std::size_t kMaxCachedKeys = 64 * 1024;
}  // namespace

void OverAggregateBase::finish() {
  write_back();
  flush();
}

void OverAggregateBase::snapshot_state(std::int64_t) { write_back(); }

void OverAggregateBase::end_pass() {
  if (ttl_state_ || touched_.size() > kMaxCachedKeys) write_back();
}

void OverAggregateBase::write_back() {
  for (auto& [key, k] : touched_) {
    if (!k.dirty) continue;
    backend_->set_current_key(key);
    if (!k.exists) {
      backend_->remove(acc_state_);
      continue;
    }
    bytes_.clear();
    if (ttl_state_) put_ttl_timestamp(backend_->clock().now_ms(), bytes_);
    const Header& h = k.header;
    bytes_.push_back(static_cast<char>((h.last_triggering ? kHasLast : 0) | (h.cleanup ? kHasCleanup : 0) |
                                       (k.has_acc ? kHasAcc : 0)));
    KeyCodec<std::int64_t>::encode(h.last_triggering.value_or(0), bytes_);
    KeyCodec<std::int64_t>::encode(h.count, bytes_);
    KeyCodec<std::int64_t>::encode(h.cleanup.value_or(0), bytes_);
    KeyCodec<std::uint64_t>::encode(h.next_seq, bytes_);
    if (k.has_acc) cfg_->aggs->serialize(k.acc, bytes_);
    backend_->put(acc_state_, bytes_);
  }
  touched_.clear();
}

void OverAggregateBase::store_row(StateId state, std::string_view key, KeyState& k, std::int64_t time,
                                  const ColumnBatch& in, std::size_t r) {
  user_key_.clear();
  KeyCodec<std::int64_t>::encode(time, user_key_);
  KeyCodec<std::uint64_t>::encode(k.header.next_seq++, user_key_);
  bytes_.clear();
  KeyCodec<std::int64_t>::encode(in.event_times()[r], bytes_);
  row_codec_.encode(in, r, bytes_);
  backend_->set_current_key(key);
  backend_->map_put(state, user_key_, bytes_);
  k.exists = k.dirty = true;
}

void OverAggregateBase::scan(Scan& s, std::string_view key, std::int64_t until, std::size_t max_rows) {
  s.entries.clear();
  s.bytes.clear();
  s.rows.clear();
  s.more = false;
  backend_->set_current_key(key);
  backend_->map_for_each(s.state, [&](std::string_view uk, std::string_view v) {
    std::string_view t = uk;
    const std::int64_t time = KeyCodec<std::int64_t>::decode(t);
    if (time > until) {
      s.more = true;
      return false;
    }
    StoredRow e;
    e.time = time;
    e.key_at = s.bytes.size();
    s.bytes.append(uk);
    e.bytes_at = s.bytes.size();
    e.bytes_len = v.size();
    s.bytes.append(v);
    s.entries.push_back(e);
    return s.entries.size() < max_rows;
  });
}

std::uint32_t OverAggregateBase::decoded(Scan& s, std::size_t i) {
  StoredRow& e = s.entries[i];
  if (e.row < 0) {
    std::string_view v(s.bytes.data() + e.bytes_at, e.bytes_len);
    const std::int64_t event_time = KeyCodec<std::int64_t>::decode(v);
    row_codec_.decode(v, s.rows);
    s.rows.event_times().back() = event_time;
    e.row = static_cast<std::int64_t>(s.rows.size() - 1);
  }
  return static_cast<std::uint32_t>(e.row);
}

void OverAggregateBase::make_room_in_rows_frame(std::string_view key, KeyState& k, AggState& acc) {
  if (k.header.count < cfg_->row_limit()) {
    ++k.header.count;
    return;
  }
  scan(frame_, key, std::numeric_limits<std::int64_t>::max(), 1);
  if (frame_.entries.empty()) return;
  fold(acc, frame_.input, decoded(frame_, 0), -1);
  remove(frame_, key, 0);
}

void OverAggregateBase::remove(Scan& s, std::string_view key, std::size_t i) {
  backend_->set_current_key(key);
  backend_->map_remove(s.state, std::string_view(s.bytes.data() + s.entries[i].key_at, 16));
}

void OverAggregateBase::move_to_frame(std::string_view key, std::size_t i) {
  const StoredRow& e = pending_.entries[i];
  const std::string_view user_key(pending_.bytes.data() + e.key_at, 16);
  backend_->set_current_key(key);
  backend_->map_put(frame_.state, user_key, std::string_view(pending_.bytes.data() + e.bytes_at, e.bytes_len));
  backend_->map_remove(pending_.state, user_key);
}

std::size_t OverAggregateBase::first_pending_at(std::int64_t t) const {
  std::size_t i = pending_.entries.size();
  while (i > 0 && pending_.entries[i - 1].time == t) --i;
  return i;
}

void OverAggregateBase::fire_range(std::string_view key, KeyState& k, std::int64_t t) {
  scan(pending_, key, t);
  const std::size_t first = first_pending_at(t), n = pending_.entries.size();
  if (first == n) return;  // an expired cleanup timer: no row at t
  AggState& a = acc(k);
  const std::int64_t oldest_kept = t - *cfg_->preceding;
  scan(frame_, key, oldest_kept - 1);
  for (std::size_t i = 0; i < frame_.entries.size(); ++i) {
    fold(a, frame_.input, decoded(frame_, i), -1);
    remove(frame_, key, i);
  }
  for (std::size_t i = first; i < n; ++i) fold(a, pending_.input, decoded(pending_, i), 1);
  for (std::size_t i = first; i < n; ++i) emit_decoded(decoded(pending_, i), a);
  flush_decoded();
  for (std::size_t i = first; i < n; ++i) move_to_frame(key, i);
}

void OverAggregateBase::fold(AggState& acc, const AggregateInput& in, std::uint32_t r, int sign) {
  cfg_->aggs->add(acc, in, r, sign);
}

ColumnBatch& OverAggregateBase::out() {
  if (!out_) out_ = std::make_unique<ColumnBatch>(cfg_->out_schema, kDefaultBatchSize);
  return *out_;
}

void OverAggregateBase::emit_decoded(std::uint32_t row, const AggState& acc) {
  cfg_->aggs->append_results(acc, out(), cfg_->in_schema->size());
  emit_rows_.push_back(row);
}

void OverAggregateBase::flush_decoded() {
  if (emit_rows_.empty()) return;
  ColumnBatch& o = out();
  for (std::size_t c = 0; c < cfg_->in_schema->size(); ++c)
    o.column(c).append_gather(pending_.rows.column(c), emit_rows_.data(), emit_rows_.size());
  for (std::uint32_t r : emit_rows_) {
    o.row_kinds().push_back(RowKind::kInsert);
    o.event_times().push_back(pending_.rows.event_times()[r]);
  }
  emit_rows_.clear();
  if (o.size() >= kDefaultBatchSize) flush();
}

void OverAggregateBase::flush() {
  if (out_ && out_->size() > 0) output().emit(std::move(out_));
  out_.reset();
}

void OverAggregateBase::register_ttl_cleanup(std::string_view key, KeyState& k, std::int64_t now) {
  if (!ttl_cleanup_enabled()) return;
  const std::int64_t min = cfg_->state_ttl_ms, max = cfg_->state_ttl_ms * 3 / 2;
  if (k.header.cleanup && now + min <= *k.header.cleanup) return;
  TimerService& timers = ctx().timer_service();
  timers.register_processing_time_timer(now + max, key, {});
  if (k.header.cleanup) timers.delete_processing_time_timer(*k.header.cleanup, key, {});
  k.header.cleanup = now + max;
  k.exists = k.dirty = true;
}

std::int64_t OverAggregateBase::row_time(const ColumnBatch& in, std::size_t r) const {
  const Column& c = in.column(cfg_->order_column);
  if (c.is_null(r))
    throw ClinkError(cfg_->where + ": the time attribute '" + cfg_->in_schema->name(cfg_->order_column) +
                     "' is NULL");
  const std::int64_t us = c.values<std::int64_t>()[r];
  return us >= 0 ? us / 1000 : -((-us + 999) / 1000);
}

std::string_view OverAggregateBase::key_of(const ColumnBatch& in, std::size_t r) {
  key_.clear();
  key_encoder_.encode(in, r, key_);
  return key_;
}

void OverAggregateBase::check_insert_only(const ColumnBatch& in) const {
  for (std::size_t r = 0; r < in.size(); ++r)
    if (in.row_kind(r) != RowKind::kInsert)
      throw ClinkError(cfg_->where + ": an OVER aggregate takes insert-only input, got a " +
                       std::string(row_kind_short_string(in.row_kind(r))) + " row (row " + std::to_string(r) + " of a batch)");
}

void OverAggregateBase::count_late(std::size_t n) {
  if (n > 0) ctx().metrics().late_records_dropped.fetch_add(static_cast<std::int64_t>(n), std::memory_order_relaxed);
}

void register_sql_over_aggregate(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "sql_over_aggregate",
      .description = "sql_row -> sql_row: OVER aggregates (ROWS / RANGE frames from UNBOUNDED or n PRECEDING to the "
                     "current row, ordered by an event- or processing-time attribute), insert-only",
      .num_inputs = 1,
      .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        SqlOpParams p(ctx, "sql_over_aggregate",
                      {"partition_keys", "order_column", "proctime", "rows", "preceding", "aggregates", "state_ttl_ms"});
        auto cfg = std::make_shared<OverConfig>();
        cfg->where = p.where();
        cfg->in_schema = p.input_schema(0);
        cfg->out_schema = p.output_schema();
        cfg->partition_keys = p.columns("partition_keys", *cfg->in_schema);
        cfg->order_column = p.column(p.require("order_column"), *cfg->in_schema, "param 'order_column'");
        const LogicalType& t = cfg->in_schema->type(cfg->order_column);
        if (!t.is(TypeKind::kTimestamp) && !t.is(TypeKind::kTimestampLtz))
          p.fail("param 'order_column' must be a TIMESTAMP or TIMESTAMP_LTZ time attribute, got " + t.to_string());
        cfg->proctime = p.get_bool("proctime", false);
        cfg->rows = p.get_bool("rows", false);
        if (p.has("preceding")) cfg->preceding = p.require_int("preceding", 0);
        cfg->state_ttl_ms = p.get_int("state_ttl_ms", 0, 0);
        // Bounded frames retract the rows leaving them: MIN / MAX keep a multiset.
        cfg->aggs = std::make_shared<const AggregateSet>(
            AggregateSet::parse(p.require("aggregates"), *cfg->in_schema, p, cfg->bounded(), FunctionRegistry::process()),
            false);
        std::vector<RowField> fields = cfg->in_schema->fields();
        for (const auto& c : cfg->aggs->calls()) fields.push_back({"", c.result_type});
        check_output_types(*cfg->out_schema, fields, p);
        if (cfg->bounded() || !cfg->proctime)
          for (const auto& f : cfg->in_schema->fields())
            if (!key_type_decodable(f.type))
              p.fail("column '" + f.name + "' of type " + f.type.to_string() +
                     " cannot be kept in the OVER aggregate's state (rows wait there for their frame)");
        if (cfg->proctime) return [cfg] { return make_proctime_over(cfg); };
        return [cfg] { return make_rowtime_over(cfg); };
      }});
}

}  // namespace clink::sql
