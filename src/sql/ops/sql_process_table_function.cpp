// sql_process_table_function: runs a user process table function (Flink 2.x PTF,
// process_table_function.hpp) over its table arguments (input i: table argument i). Set
// semantics: each edge is hashed by its table's PARTITION BY columns (co-partitioned: the
// same number and types of columns, so one key space) and the function's state entries
// and timers are keyed state of the current partition, shared by all tables; row
// semantics: one table, rows on a forward edge, no state, no timers.
//
// Keyed layout (all in the operator's keyed backend, so checkpoints hold them):
//   "ptf.<name>"   the function's state entries (value / list / map)
//   "ptf$timers"   map: the partition's registered timers, so that a named timer can be
//                  replaced or cleared and clear_all_timers() finds every one:
//                  domain ('e' event / 'p' processing) + 'n' + name, or + 'u' + time
//                  (unnamed) -> the time (8 bytes)
//   "ptf$order"    map (ORDER BY only): rows waiting for the watermark, keyed
//                  (time, sequence) in byte order -> the row (with several table
//                  arguments: its table's index, one byte, then the row); "ptf$seq" the
//                  sequence. The rows of every ordered table wait together and reach the
//                  function in time order (at one time: table by table in argument
//                  order, each by its other ORDER BY columns, then arrival)
// Timers live in the runtime's timer service (also checkpointed) with namespace
// 'n' + name, 'u' (unnamed) or 'o' (ORDER BY's buffer). Output rows: each table's
// PARTITION BY columns (all with the partition's key: from the input row, or decoded from
// the timer's key), the function's columns, then `rowtime` (the row's on_time, or the
// timer's time).
#include <algorithm>
#include <cstring>

#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "clink/runtime/lateness.hpp"
#include "clink/sql/common/column_key.hpp"
#include "clink/sql/common/row_kind.hpp"
#include "clink/sql/expression/expr_compiler.hpp"
#include "clink/sql/function/process_table_function.hpp"
#include "clink/sql/spec/expr_json.hpp"
#include "clink/sql/spec/plan_structs.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"
#include "clink/state/keyed_state_backend.hpp"
#include "join_row_codec.hpp"
#include "sql_op_registration.hpp"

namespace clink::sql {

namespace {

// One table argument: the operator's input of the same index.
struct PtfInput {
  SchemaPtr schema;
  std::vector<std::size_t> partition_keys;
  // The input columns each output row starts with: the PARTITION BY columns once per
  // table argument (every block holds the partition's key), or every column
  // (PASS_COLUMNS_THROUGH, one table).
  std::vector<std::size_t> prefix;
  std::optional<std::size_t> on_time;
  std::vector<SortKey> order_keys;  // ORDER BY: first an event-time column
};

struct PtfConfig {
  std::string where;
  SchemaPtr out_schema, fn_schema;
  const ProcessTableFunctionDef* def = nullptr;
  std::string uid;
  bool set_semantics = true;
  std::vector<PtfInput> inputs;
  bool ordered = false;             // a table argument has ORDER BY
  bool has_rowtime = false;         // on_time: the output ends with `rowtime`
  PtfArgs args;
  std::int64_t state_ttl_ms = 0;  // table.exec.state.ttl: the TTL of state entries that set none
};

void put_be64(std::string& out, std::int64_t v) {
  const auto u = static_cast<std::uint64_t>(v) ^ (1ULL << 63);  // byte order = numeric order
  for (int s = 56; s >= 0; s -= 8) out.push_back(static_cast<char>((u >> s) & 0xff));
}
std::int64_t get_le64(std::string_view b) {
  std::int64_t v = 0;
  if (b.size() == 8) std::memcpy(&v, b.data(), 8);
  return v;
}
std::string le64(std::int64_t v) {
  std::string s(8, '\0');
  std::memcpy(s.data(), &v, 8);
  return s;
}
std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

class ProcessTableFunctionOperator final : public StreamOperator, private PtfContext {
 public:
  explicit ProcessTableFunctionOperator(std::shared_ptr<const PtfConfig> cfg)
      : cfg_(std::move(cfg)),
        fn_(cfg_->def->make()),
        staging_(cfg_->fn_schema) {
    for (const auto& in : cfg_->inputs) {
      key_encoders_.emplace_back(*in.schema, in.partition_keys);
      row_codecs_.emplace_back(*in.schema);
      scratch_.emplace_back(in.schema);
    }
    fn_out_ = std::make_unique<TableFunctionOutput>(column_ptrs());
  }

  int num_inputs() const override { return static_cast<int>(cfg_->inputs.size()); }

  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    if (!cfg_->set_semantics) return;
    backend_ = ctx.keyed_state_backend_or_private();
    backend_->set_current_namespace({});
    for (const auto& s : cfg_->def->signature.state) {
      const StateKind kind = s.kind == PtfStateKind::kValue  ? StateKind::kValue
                             : s.kind == PtfStateKind::kList ? StateKind::kList
                                                              : StateKind::kMap;
      const std::int64_t ttl = s.ttl_ms.value_or(cfg_->state_ttl_ms);  // the entry's own TTL goes first, as Flink's
      states_.push_back(backend_->register_state("ptf." + s.name, kind, ttl > 0 ? ttl : 0));
      ttls_.push_back(ttl > 0 ? ttl : 0);
    }
    timers_state_ = backend_->register_state("ptf$timers", StateKind::kMap);
    if (cfg_->ordered) {
      order_state_ = backend_->register_state("ptf$order", StateKind::kMap);
      seq_state_ = backend_->register_state("ptf$seq", StateKind::kValue);
    }
  }

  void process_batch(int input, BatchPtr batch) override {
    const auto table = static_cast<std::size_t>(input);
    const PtfInput& arg = cfg_->inputs[table];
    const auto& in = column_batch_cast(*batch);
    for (std::size_t r = 0; r < in.size(); ++r) {
      if (in.row_kind(r) != RowKind::kInsert && !cfg_->def->signature.supports_updates)
        throw ClinkError(cfg_->where + ": a process table function takes an insert-only table, got " +
                         std::string(row_kind_short_string(in.row_kind(r))));
      if (cfg_->set_semantics) {
        key_.clear();
        key_encoders_[table].encode(in, r, key_);
        backend_->set_current_key(key_);
        ctx().timer_service().set_current_key(key_);
      }
      if (!arg.order_keys.empty()) {
        buffer(table, in, r, time_at(in, arg.order_keys[0].column, r));
        continue;
      }
      std::optional<std::int64_t> t;
      if (arg.on_time) t = time_at(in, *arg.on_time, r);
      call_eval(in, r, t, in.event_times()[r], table);
    }
    flush();
  }

  void process_watermark(Watermark wm) override {
    if (!wm.idle) {
      ctx().timer_service().advance_watermark(wm.timestamp, [this](const Timer& t) { fire(t, false); });
      flush();
    }
    output().emit_watermark(wm);
  }

  void process_processing_time(std::int64_t now) override {
    ctx().timer_service().advance_processing_time(now, [this](const Timer& t) { fire(t, true); });
    flush();
  }

  void finish() override { flush(); }

 private:
  // ---------------------------------------------------------------- calls

  void call_eval(const ColumnBatch& in, std::size_t r, std::optional<std::int64_t> t, EventTime event_time,
                 std::size_t table) {
    in_timer_ = false;
    time_ = t;
    fn_->eval(*this, PtfRow(in, r, table), cfg_->args);
    const std::size_t n = take_rows();
    if (n == 0) return;
    ColumnBatch& o = out_batch();
    const auto& prefix = cfg_->inputs[table].prefix;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < prefix.size(); ++k) o.column(k).append_range(in.column(prefix[k]), r, r + 1);
    finish_rows(n, t, t ? *t : event_time);
  }

  void fire(const Timer& timer, bool processing) {
    backend_->set_current_key(timer.key);
    ctx().timer_service().set_current_key(timer.key);
    if (!processing && !timer.ns.empty() && timer.ns[0] == 'o') return release_ordered(timer.time);
    // Forget the timer in the partition's registry (unless a named one was moved since).
    std::string id(1, processing ? 'p' : 'e');
    if (!timer.ns.empty() && timer.ns[0] == 'n') {
      id += timer.ns;
      std::string v;
      if (backend_->map_get(timers_state_, id, v) && get_le64(v) == timer.time) backend_->map_remove(timers_state_, id);
      timer_name_ = timer.ns.substr(1);
    } else {
      id += 'u';
      put_be64(id, timer.time);
      backend_->map_remove(timers_state_, id);
      timer_name_.clear();
    }
    in_timer_ = true;
    processing_timer_ = processing;
    time_ = timer.time;
    fn_->on_timer(*this, cfg_->args);
    in_timer_ = false;
    const std::size_t n = take_rows();
    if (n == 0) return;
    ColumnBatch& o = out_batch();
    const std::size_t n_keys = cfg_->inputs[0].partition_keys.size();
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t block = 0; block < cfg_->inputs.size(); ++block) {  // each table's partition columns
        std::string_view key = timer.key;
        for (std::size_t k = 0; k < n_keys; ++k) append_decoded_key_value(key, o.column(block * n_keys + k));
      }
    std::int64_t rowtime = timer.time;
    if (processing) {
      const EventTime wm = ctx().timer_service().current_watermark();
      rowtime = wm == kMinEventTime ? timer.time : wm;
    }
    finish_rows(n, cfg_->has_rowtime ? std::optional<std::int64_t>(rowtime) : std::nullopt,
                processing ? kNoEventTime : timer.time);
  }

  // A TIMESTAMP column's value in milliseconds (none: NULL).
  static std::optional<std::int64_t> time_at(const ColumnBatch& in, std::size_t c, std::size_t r) {
    if (in.column(c).is_null(r)) return std::nullopt;
    return floor_div(in.column(c).values<std::int64_t>()[r], 1000);
  }

  // ORDER BY: the row waits in state until the watermark passes its time.
  void buffer(std::size_t table, const ColumnBatch& in, std::size_t r, std::optional<std::int64_t> t) {
    if (!t || *t <= lateness_watermark(ctx())) return;  // late (or no time): dropped, as Flink's sort
    std::string seq_bytes;
    const std::int64_t seq = backend_->get(seq_state_, seq_bytes) ? get_le64(seq_bytes) : 0;
    backend_->put(seq_state_, le64(seq + 1));
    std::string k;
    put_be64(k, *t);
    put_be64(k, seq);
    std::string row;
    if (cfg_->inputs.size() > 1) row.push_back(static_cast<char>(table));
    row_codecs_[table].encode(in, r, row);
    backend_->map_put(order_state_, k, row);
    ctx().timer_service().register_event_time_timer(*t, key_, "o");
  }

  // The waiting rows up to `until`, one time after the other: each ordered table's rows of
  // that time (in argument order), sorted by its other ORDER BY columns.
  void release_ordered(std::int64_t until) {
    std::vector<std::pair<std::string, std::string>> due;
    backend_->map_for_each(order_state_, [&](std::string_view k, std::string_view v) {
      if (time_of(k) > until) return false;
      due.emplace_back(std::string(k), std::string(v));
      return true;
    });
    for (const auto& [k, v] : due) backend_->map_remove(order_state_, k);
    const bool tagged = cfg_->inputs.size() > 1;
    for (std::size_t begin = 0, end = 0; begin < due.size(); begin = end) {
      const std::int64_t t = time_of(due[begin].first);
      for (end = begin; end < due.size() && time_of(due[end].first) == t; ++end) {
      }
      for (auto& s : scratch_) s.clear();
      for (std::size_t i = begin; i < end; ++i) {
        std::string_view row = due[i].second;
        const std::size_t table = tagged ? static_cast<unsigned char>(row[0]) : 0;
        if (tagged) row.remove_prefix(1);
        row_codecs_[table].decode(row, scratch_[table]);
      }
      for (std::size_t table = 0; table < cfg_->inputs.size(); ++table) deliver_sorted(table, t);
    }
  }

  static std::int64_t time_of(std::string_view key) {
    std::uint64_t u = 0;
    for (std::size_t i = 0; i < 8; ++i) u = (u << 8) | static_cast<unsigned char>(key[i]);
    return static_cast<std::int64_t>(u ^ (1ULL << 63));
  }

  // Calls eval on scratch_[table]'s rows (all of time t), by the other ORDER BY columns (a
  // stable sort keeps arrival order).
  void deliver_sorted(std::size_t table, std::int64_t t) {
    const ColumnBatch& rows = scratch_[table];
    const PtfInput& arg = cfg_->inputs[table];
    std::vector<std::uint32_t> idx(rows.size());
    for (std::uint32_t i = 0; i < idx.size(); ++i) idx[i] = i;
    if (arg.order_keys.size() > 1)
      std::stable_sort(idx.begin(), idx.end(), [&](std::uint32_t a, std::uint32_t b) { return less(arg, rows, a, b); });
    for (std::uint32_t i : idx)
      call_eval(rows, i, arg.on_time ? time_at(rows, *arg.on_time, i) : std::nullopt, t, table);
  }

  static bool less(const PtfInput& arg, const ColumnBatch& rows, std::uint32_t a, std::uint32_t b) {
    for (std::size_t i = 1; i < arg.order_keys.size(); ++i) {
      const SortKey& k = arg.order_keys[i];
      const Column& c = rows.column(k.column);
      const bool na = c.is_null(a), nb = c.is_null(b);
      if (na || nb) {
        if (na == nb) continue;
        return na == k.nulls_first;
      }
      std::string ka, kb;
      append_key_value(c, a, ka);
      append_key_value(c, b, kb);
      if (ka == kb) continue;
      return k.descending ? kb < ka : ka < kb;
    }
    return false;
  }

  // The rows the function added to staging_ in this call, copied into the output's
  // function columns. staging_ grows through a batch and is reset by flush() (so
  // TableFunctionOutput is made once per batch, not per call).
  std::size_t take_rows() {
    fn_out_->finish_row();
    const std::size_t n = fn_out_->rows() - taken_;
    if (n == 0) return 0;
    ColumnBatch& o = out_batch();
    const std::size_t base = cfg_->out_schema->size() - staging_.num_columns() - (cfg_->has_rowtime ? 1 : 0);
    for (std::size_t c = 0; c < staging_.num_columns(); ++c)
      o.column(base + c).append_range(staging_.column(c), taken_, taken_ + n);
    taken_ += n;
    return n;
  }

  std::vector<Column*> column_ptrs() {
    std::vector<Column*> cols;
    for (std::size_t i = 0; i < staging_.num_columns(); ++i) cols.push_back(&staging_.column(i));
    return cols;
  }

  void finish_rows(std::size_t n, std::optional<std::int64_t> rowtime, EventTime event_time) {
    ColumnBatch& o = out_batch();
    if (cfg_->has_rowtime) {
      Column& c = o.column(o.num_columns() - 1);
      for (std::size_t i = 0; i < n; ++i) c.append<std::int64_t>(rowtime.value_or(0) * 1000);
    }
    o.commit_rows(n, RowKind::kInsert, event_time);
  }

  ColumnBatch& out_batch() {
    if (!out_) out_ = std::make_unique<ColumnBatch>(cfg_->out_schema);
    return *out_;
  }
  void flush() {
    if (out_ && out_->size() > 0) output().emit(std::move(out_));
    out_.reset();
    if (taken_ > 0) {
      staging_.clear();
      fn_out_ = std::make_unique<TableFunctionOutput>(column_ptrs());
      taken_ = 0;
    }
  }

  // ---------------------------------------------------------------- PtfContext

  std::size_t state_index(std::string_view name, PtfStateKind kind, const char* what) {
    if (!cfg_->set_semantics)
      throw ClinkError(cfg_->where + ": " + cfg_->def->name + " has row semantics: it has no state");
    const auto& decl = cfg_->def->signature.state;
    for (std::size_t i = 0; i < decl.size(); ++i)
      if (decl[i].name == name) {
        if (decl[i].kind != kind)
          throw ClinkError(cfg_->where + ": state entry `" + std::string(name) + "` of " + cfg_->def->name +
                           " is not a " + what);
        return i;
      }
    throw ClinkError(cfg_->where + ": " + cfg_->def->name + " declares no state entry `" + std::string(name) + "`");
  }
  PtfValueState value_state(std::string_view name) override {
    const std::size_t i = state_index(name, PtfStateKind::kValue, "value");
    return PtfValueState(backend_, states_[i].index, ttls_[i]);
  }
  PtfListState list_state(std::string_view name) override {
    const std::size_t i = state_index(name, PtfStateKind::kList, "list");
    return PtfListState(backend_, states_[i].index, ttls_[i]);
  }
  PtfMapState map_state(std::string_view name) override {
    const std::size_t i = state_index(name, PtfStateKind::kMap, "map");
    return PtfMapState(backend_, states_[i].index, ttls_[i]);
  }
  void clear_all_state() override {
    if (!cfg_->set_semantics) return;
    const auto& decl = cfg_->def->signature.state;
    for (std::size_t i = 0; i < decl.size(); ++i) {
      if (decl[i].kind == PtfStateKind::kMap) backend_->map_clear(states_[i]);
      else backend_->remove(states_[i]);
    }
  }

  std::optional<std::int64_t> time() const override { return time_; }
  std::optional<std::int64_t> current_watermark() const override {
    const EventTime wm = const_cast<ProcessTableFunctionOperator*>(this)->ctx().timer_service().current_watermark();
    if (wm == kMinEventTime) return std::nullopt;
    return wm;
  }
  std::int64_t current_processing_time() const override {
    return const_cast<ProcessTableFunctionOperator*>(this)->ctx().timer_service().current_processing_time();
  }

  void check_timers() {
    if (!cfg_->set_semantics)
      throw ClinkError(cfg_->where + ": " + cfg_->def->name + " has row semantics: timers need a table with set "
                       "semantics");
    if (cfg_->def->signature.pass_columns_through)
      throw ClinkError(cfg_->where + ": " + cfg_->def->name + " passes its input's columns through "
                       "(PASS_COLUMNS_THROUGH), so it cannot use timers: a timer's row has no input row");
  }
  void register_named(char domain, std::string_view name, std::int64_t t) {
    check_timers();
    TimerService& ts = ctx().timer_service();
    const std::string ns = "n" + std::string(name);
    const std::string id = std::string(1, domain) + ns;
    std::string v;
    if (backend_->map_get(timers_state_, id, v)) {
      if (domain == 'e') ts.delete_event_time_timer(get_le64(v), backend_->current_key(), ns);
      else ts.delete_processing_time_timer(get_le64(v), backend_->current_key(), ns);
    }
    backend_->map_put(timers_state_, id, le64(t));
    if (domain == 'e') ts.register_event_time_timer(t, backend_->current_key(), ns);
    else ts.register_processing_time_timer(t, backend_->current_key(), ns);
  }
  void register_on_time(std::string_view name, std::int64_t t) override {
    if (!cfg_->has_rowtime)
      throw ClinkError(cfg_->where + ": " + cfg_->def->name + " registers an event-time timer, which needs the "
                       "call's on_time argument");
    register_named('e', name, t);
  }
  void register_on_time(std::int64_t t) override {
    check_timers();
    if (!cfg_->has_rowtime)
      throw ClinkError(cfg_->where + ": " + cfg_->def->name + " registers an event-time timer, which needs the "
                       "call's on_time argument");
    std::string id = "eu";
    put_be64(id, t);
    backend_->map_put(timers_state_, id, le64(t));
    ctx().timer_service().register_event_time_timer(t, backend_->current_key(), "u");
  }
  void register_on_processing_time(std::string_view name, std::int64_t t) override { register_named('p', name, t); }
  void clear_timer(std::string_view name) override {
    check_timers();
    for (char domain : {'e', 'p'}) {
      const std::string ns = "n" + std::string(name);
      const std::string id = std::string(1, domain) + ns;
      std::string v;
      if (!backend_->map_get(timers_state_, id, v)) continue;
      if (domain == 'e') ctx().timer_service().delete_event_time_timer(get_le64(v), backend_->current_key(), ns);
      else ctx().timer_service().delete_processing_time_timer(get_le64(v), backend_->current_key(), ns);
      backend_->map_remove(timers_state_, id);
    }
  }
  void clear_all_timers() override {
    check_timers();
    std::vector<std::pair<std::string, std::int64_t>> all;
    backend_->map_for_each(timers_state_, [&](std::string_view k, std::string_view v) {
      all.emplace_back(std::string(k), get_le64(v));
      return true;
    });
    TimerService& ts = ctx().timer_service();
    for (const auto& [id, t] : all) {
      const std::string ns = id[1] == 'n' ? id.substr(1) : std::string("u");
      if (id[0] == 'e') ts.delete_event_time_timer(t, backend_->current_key(), ns);
      else ts.delete_processing_time_timer(t, backend_->current_key(), ns);
      backend_->map_remove(timers_state_, id);  // the scan found them all: no second one (map_clear)
    }
  }
  const std::string& current_timer() const override { return timer_name_; }
  bool processing_time_timer() const override { return in_timer_ && processing_timer_; }
  TableFunctionOutput& out() override { return *fn_out_; }

  std::shared_ptr<const PtfConfig> cfg_;
  std::unique_ptr<ProcessTableFunction> fn_;
  std::vector<RowKeyEncoder> key_encoders_;  // per input
  std::vector<SideRowCodec> row_codecs_;  // per input (ORDER BY's buffered rows)
  ColumnBatch staging_;                   // the function's columns of the current call
  std::vector<ColumnBatch> scratch_;      // per input, ORDER BY: rows released by the watermark
  std::unique_ptr<TableFunctionOutput> fn_out_;
  std::size_t taken_ = 0;  // staging_'s rows already copied out
  std::unique_ptr<ColumnBatch> out_;
  KeyedStateBackend* backend_ = nullptr;
  std::vector<StateId> states_;
  std::vector<std::int64_t> ttls_;  // per state entry, 0: none
  StateId timers_state_, order_state_, seq_state_;
  std::string key_;
  std::optional<std::int64_t> time_;
  std::string timer_name_;
  bool in_timer_ = false;
  bool processing_timer_ = false;
};

// The scalar arguments: constant expressions, evaluated once when the operator is built.
PtfArgs evaluate_args(const nlohmann::json& j, const SqlOpParams& p) {
  std::vector<PtfArgs::Value> values;
  const Schema none{std::vector<RowField>{}};
  ColumnBatch one(std::make_shared<const Schema>(none));
  one.commit_rows(1);
  for (const auto& e : j) {
    CompiledExpr c(expr_from_json(e, none, FunctionRegistry::process()), session_from_params(p));
    const Column& v = c.evaluate(one);
    if (v.is_null(0)) {
      values.emplace_back(std::monostate{});
      continue;
    }
    switch (c.type().kind()) {
      case TypeKind::kBoolean: values.emplace_back(v.values<std::uint8_t>()[0] != 0); break;
      case TypeKind::kInt: values.emplace_back(static_cast<std::int64_t>(v.values<std::int32_t>()[0])); break;
      case TypeKind::kBigInt:
      case TypeKind::kIntervalDayTime: values.emplace_back(v.values<std::int64_t>()[0]); break;
      case TypeKind::kDouble: values.emplace_back(v.values<double>()[0]); break;
      case TypeKind::kVarChar: values.emplace_back(std::string(v.string_at(0))); break;
      default: p.fail("argument type " + c.type().to_string() + " is not supported");
    }
  }
  return PtfArgs(std::move(values));
}

}  // namespace

void register_sql_process_table_function(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "sql_process_table_function",
      .description = "sql_row... -> sql_row: a user process table function (Flink 2.x PTF) with keyed state and "
                     "timers, keyed on the PARTITION BY columns (set semantics; one input per table argument, "
                     "co-partitioned) or row by row; insert-only",
      .num_inputs = -1,  // one per table argument
      .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        SqlOpParams p(ctx, "sql_process_table_function",
                      {"function", "uid", "set_semantics", "partition_keys", "order_keys", "on_time", "args",
                       "state_ttl_ms", "more_tables"});
        auto cfg = std::make_shared<PtfConfig>();
        cfg->where = p.where();
        cfg->out_schema = p.output_schema();
        const std::string fn = p.get_string("function", "");
        cfg->def = ProcessTableFunctionRegistry::process().find(fn);
        if (!cfg->def) p.fail("process table function '" + fn + "' is not registered in this process");
        cfg->uid = p.get_string("uid", fn);
        cfg->set_semantics = p.get_bool("set_semantics", true);
        const auto& sig = cfg->def->signature;
        // Table argument 0's clauses are at the top level, the further ones in more_tables.
        const nlohmann::json none = nlohmann::json::array();
        const nlohmann::json& more = p.has("more_tables") ? p.require("more_tables") : none;
        if (more.size() != sig.more_table_args.size())
          p.fail("the call has " + std::to_string(1 + more.size()) + " table arguments, " + fn + " takes " +
                 std::to_string(1 + sig.more_table_args.size()));
        for (std::size_t t = 0; t <= more.size(); ++t) {
          PtfInput in;
          in.schema = p.input_schema(t);
          if (t == 0) {
            in.partition_keys = p.columns("partition_keys", *in.schema);
            if (p.has("on_time") && !p.require("on_time").is_null())
              in.on_time = p.column(p.require("on_time"), *in.schema, "param 'on_time'");
          } else {
            const nlohmann::json& m = more[t - 1];
            const std::string what = "param 'more_tables'[" + std::to_string(t - 1) + "]";
            for (const auto& k : m.at("partition_keys")) in.partition_keys.push_back(p.column(k, *in.schema, what));
            if (m.contains("on_time") && !m.at("on_time").is_null()) in.on_time = p.column(m.at("on_time"), *in.schema, what);
            for (const auto& k : m.value("order_keys", nlohmann::json::array()))
              in.order_keys.push_back(SortKey{p.column(k.at("column"), *in.schema, what),
                                              k.at("descending").get<bool>(), !k.at("descending").get<bool>()});
            if (in.partition_keys.size() != cfg->inputs[0].partition_keys.size() ||
                in.on_time.has_value() != cfg->inputs[0].on_time.has_value())
              p.fail(what + ": every table argument has as many partition columns as the first, and on_time as it");
            for (std::size_t k = 0; k < in.partition_keys.size(); ++k)  // co-partitioned: one key encoding
              if (in.schema->field(in.partition_keys[k]).type.with_nullable(true) !=
                  cfg->inputs[0].schema->field(cfg->inputs[0].partition_keys[k]).type.with_nullable(true))
                p.fail(what + ": partition column " + std::to_string(k) + " has another type than the first table's");
          }
          cfg->inputs.push_back(std::move(in));
        }
        PtfInput& first = cfg->inputs[0];
        if (p.has("order_keys"))
          for (const auto& k : p.require("order_keys"))
            first.order_keys.push_back(SortKey{p.column(k.at("column"), *first.schema, "param 'order_keys'"),
                                               k.at("descending").get<bool>(), !k.at("descending").get<bool>()});
        for (const auto& in : cfg->inputs) cfg->ordered = cfg->ordered || !in.order_keys.empty();
        if (cfg->ordered && !cfg->set_semantics) p.fail("ORDER BY needs set semantics");
        cfg->has_rowtime = first.on_time.has_value();
        if (p.has("state_ttl_ms")) cfg->state_ttl_ms = p.require("state_ttl_ms").get<std::int64_t>();
        cfg->args = evaluate_args(p.has("args") ? p.require("args") : nlohmann::json::array(), p);
        if (cfg->args.size() != sig.params.size())
          p.fail("param 'args' has " + std::to_string(cfg->args.size()) + " values for " +
                 std::to_string(sig.params.size()) + " parameters of " + fn);
        for (auto& in : cfg->inputs) {
          if (sig.pass_columns_through)
            for (std::size_t c = 0; c < in.schema->size(); ++c) in.prefix.push_back(c);
          else
            for (std::size_t b = 0; b < cfg->inputs.size(); ++b)
              in.prefix.insert(in.prefix.end(), in.partition_keys.begin(), in.partition_keys.end());
        }
        const std::size_t prefix = first.prefix.size();
        const std::size_t expected = prefix + sig.output.size() + (cfg->has_rowtime ? 1 : 0);
        if (cfg->out_schema->size() != expected)
          p.fail("the output schema has " + std::to_string(cfg->out_schema->size()) + " columns, " + fn + " makes " +
                 std::to_string(expected));
        std::vector<RowField> fn_fields;
        for (std::size_t i = 0; i < sig.output.size(); ++i) fn_fields.push_back(cfg->out_schema->field(prefix + i));
        cfg->fn_schema = std::make_shared<const Schema>(std::move(fn_fields));
        return [cfg] { return std::make_unique<ProcessTableFunctionOperator>(cfg); };
      }});
}

}  // namespace clink::sql
