#pragma once
// Process table functions (Flink 2.x PTFs): user C++ functions called in FROM with a table
// argument, per-partition keyed state, timers and any number of output rows:
//
//   SELECT * FROM f(input => TABLE t PARTITION BY k, on_time => DESCRIPTOR(ts), uid => 'f1', n => 3)
//   SELECT * FROM f(TABLE t PARTITION BY k, 3)                     -- positional
//
// A function derives from ProcessTableFunction and declares a PtfSignature (Flink's
// @ArgumentHint / @StateHint / @DataTypeHint in one struct):
//
//   class Counter : public ProcessTableFunction {
//    public:
//     void eval(PtfContext& ctx, const PtfRow& in, const PtfArgs&) override {
//       auto count = ctx.value_state("count");
//       const std::int64_t n = count.get_int64().value_or(0) + 1;
//       count.set_int64(n);
//       ctx.out().add_row();
//       ctx.out().set_bigint(0, n);
//     }
//   };
//   PtfSignature sig;
//   sig.semantics = PtfTableSemantics::kSet;       // TABLE t PARTITION BY ... (keyed)
//   sig.output = {{"cnt", LogicalType::bigint()}};
//   sig.state = {{"count", PtfStateKind::kValue}};
//   ProcessTableFunctionRegistry::process().add("Counter", sig, [] { return std::make_unique<Counter>(); });
//
// The output rows are, as Flink's: the PARTITION BY columns, then the function's columns,
// then `rowtime` (the on_time column's type) when the call passes on_time. A function may
// take several co-partitioned tables (PtfSignature::more_table_args, Flink's multi-input
// PTFs): f(TABLE a PARTITION BY k, TABLE b PARTITION BY j); a table argument may also be
// a query in parentheses: f((SELECT ...) PARTITION BY k). A row emitted
// by eval() carries the input row's time, one emitted by on_timer() the timer's time.
//
// State lives in the operator's keyed state backend (memory or RocksDB), scoped to the
// current partition key, and is checkpointed and restored like every operator's; so are
// the timers. Register functions at startup, before jobs that call them are planned (a
// worker looks them up by name when it builds the operator). A dotted name
// ('com.example.MyPtf') is reachable through `CREATE FUNCTION f AS 'com.example.MyPtf'`.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/common/types.hpp"
#include "clink/sql/function/table_function.hpp"

namespace clink::sql {

// Flink's ArgumentTrait.TABLE_AS_ROW (each row on its own, no state, no timers) and
// TABLE_AS_SET (rows co-located by PARTITION BY; state and timers per partition).
enum class PtfTableSemantics { kRow, kSet };
// Flink's state entries: a value (read whole), a ListView, a MapView.
enum class PtfStateKind { kValue, kList, kMap };

struct PtfStateDecl {
  std::string name;
  PtfStateKind kind = PtfStateKind::kValue;
  // Flink's @StateHint(ttl = ..): an entry (a list's or map's: each element) not written
  // for this long (processing time) expires: it is no longer returned and is cleaned up.
  // Unset: the pipeline's table.exec.state.ttl; 0: never expires.
  std::optional<std::int64_t> ttl_ms;
};

// A scalar argument after the table: BOOLEAN, INT, BIGINT, DOUBLE, STRING or
// INTERVAL DAY TO SECOND (read as milliseconds). Arguments are literals of the call.
struct PtfScalarParam {
  std::string name;
  LogicalType type;
  bool optional = false;  // may be omitted (or DEFAULT): NULL
};

struct PtfSignature {
  std::string table_arg = "input";  // the table argument's name (`input => TABLE t`)
  // Further table arguments (Flink's multi-input PTFs, up to 20 tables in all), by name,
  // after table_arg in the effective signature. All tables then have set semantics and
  // co-partitioned PARTITION BY clauses (the same number and types of columns); rows
  // of either reach eval() one at a time (PtfRow::table() tells which) and share the
  // function's state and timers per key. Not with pass_columns_through (Flink's rule).
  std::vector<std::string> more_table_args;
  PtfTableSemantics semantics = PtfTableSemantics::kSet;
  bool optional_partition_by = false;  // ArgumentTrait.OPTIONAL_PARTITION_BY
  bool require_on_time = false;        // ArgumentTrait.REQUIRE_ON_TIME
  std::vector<PtfScalarParam> params;
  std::vector<RowField> output;  // the function's columns (BOOLEAN, INT, BIGINT, DOUBLE, STRING)
  std::vector<PtfStateDecl> state;
  // ArgumentTrait.PASS_COLUMNS_THROUGH: each output row starts with all of the input
  // row's columns (not only the PARTITION BY ones), taken from the row eval() was called
  // with. As in Flink, such a function uses no timers (an on_timer() row has no input row).
  bool pass_columns_through = false;
  // ArgumentTrait.SUPPORT_UPDATES: the table argument may be updating; each row reaches
  // eval() with its change flag (PtfRow::kind(): +I, -U, +U, -D, as the input's producer
  // encodes its changes). The function still emits inserts. Not with
  // pass_columns_through (Flink's rule).
  bool supports_updates = false;
};

// One input row of a table argument (all of its columns, as the table has them).
class PtfRow {
 public:
  PtfRow(const ColumnBatch& batch, std::size_t row, std::size_t table = 0) : batch_(&batch), row_(row), table_(table) {}
  // The table argument the row comes from: 0 for table_arg, i for more_table_args[i - 1]
  // (Flink passes the row as that argument and null for the others).
  std::size_t table() const { return table_; }
  std::size_t size() const { return batch_->num_columns(); }
  // The column's index by name (case-sensitive, as Flink's Row.getField(name)); throws
  // ClinkError naming the function's need when there is none.
  std::size_t index_of(std::string_view name) const;
  const std::string& name(std::size_t i) const;
  bool is_null(std::size_t i) const { return batch_->column(i).is_null(row_); }
  // The row's change flag: always kInsert unless the signature supports_updates.
  RowKind kind() const { return batch_->row_kind(row_); }
  bool bool_at(std::size_t i) const { return batch_->column(i).values<std::uint8_t>()[row_] != 0; }
  std::int32_t int_at(std::size_t i) const { return batch_->column(i).values<std::int32_t>()[row_]; }
  std::int64_t bigint_at(std::size_t i) const { return batch_->column(i).values<std::int64_t>()[row_]; }
  double double_at(std::size_t i) const { return batch_->column(i).values<double>()[row_]; }
  std::string_view string_at(std::size_t i) const { return batch_->column(i).string_at(row_); }
  // Any column as Flink's Row.toString prints the value ("null" for NULL).
  std::string text_at(std::size_t i) const;
  const ColumnBatch& batch() const { return *batch_; }
  std::size_t row() const { return row_; }

 private:
  const ColumnBatch* batch_;
  std::size_t row_;
  std::size_t table_;
};

// The call's scalar arguments, in PtfSignature::params order.
class PtfArgs {
 public:
  using Value = std::variant<std::monostate, bool, std::int64_t, double, std::string>;
  explicit PtfArgs(std::vector<Value> values = {}) : values_(std::move(values)) {}
  std::size_t size() const { return values_.size(); }
  bool is_null(std::size_t i) const { return std::holds_alternative<std::monostate>(values_.at(i)); }
  bool bool_at(std::size_t i) const { return std::get<bool>(values_.at(i)); }
  // INT, BIGINT and INTERVAL (milliseconds) arguments.
  std::int64_t bigint_at(std::size_t i) const { return std::get<std::int64_t>(values_.at(i)); }
  double double_at(std::size_t i) const { return std::get<double>(values_.at(i)); }
  const std::string& string_at(std::size_t i) const { return std::get<std::string>(values_.at(i)); }
  const std::vector<Value>& values() const { return values_; }

 private:
  std::vector<Value> values_;
};

}  // namespace clink::sql
namespace clink {
class KeyedStateBackend;
}
namespace clink::sql {
using PtfStateAccess = ::clink::KeyedStateBackend;

// Handles on the current partition's state entries (bytes; the *_int64 helpers store a
// little-endian int64). Valid during the eval() / on_timer() call that made them.
class PtfValueState {
 public:
  PtfValueState(PtfStateAccess* a, int id, std::int64_t ttl_ms = 0) : access_(a), id_(id), ttl_ms_(ttl_ms) {}
  std::optional<std::string> get() const;
  void set(std::string_view bytes);
  std::optional<std::int64_t> get_int64() const;
  void set_int64(std::int64_t v);
  void clear();

 private:
  PtfStateAccess* access_;
  int id_;
  std::int64_t ttl_ms_;  // 0: no TTL; else the entry's bytes start with its last write time
};
class PtfListState {
 public:
  PtfListState(PtfStateAccess* a, int id, std::int64_t ttl_ms = 0) : access_(a), id_(id), ttl_ms_(ttl_ms) {}
  void add(std::string_view element);
  std::vector<std::string> get() const;  // in insertion order
  void clear();

 private:
  PtfStateAccess* access_;
  int id_;
  std::int64_t ttl_ms_;  // 0: no TTL; else the entry's bytes start with its last write time
};
class PtfMapState {
 public:
  PtfMapState(PtfStateAccess* a, int id, std::int64_t ttl_ms = 0) : access_(a), id_(id), ttl_ms_(ttl_ms) {}
  std::optional<std::string> get(std::string_view key) const;
  void put(std::string_view key, std::string_view value);
  void remove(std::string_view key);
  // In key byte order; return false to stop.
  void for_each(const std::function<bool(std::string_view key, std::string_view value)>& fn) const;
  void clear();

 private:
  PtfStateAccess* access_;
  int id_;
  std::int64_t ttl_ms_;  // 0: no TTL; else the entry's bytes start with its last write time
};

// What eval() and on_timer() see (Flink's Context, TimeContext and OnTimerContext).
class PtfContext {
 public:
  virtual ~PtfContext() = default;

  // ---- state of the current partition (names as in PtfSignature::state)
  virtual PtfValueState value_state(std::string_view name) = 0;
  virtual PtfListState list_state(std::string_view name) = 0;
  virtual PtfMapState map_state(std::string_view name) = 0;
  virtual void clear_all_state() = 0;

  // ---- time (milliseconds since the epoch; a TIMESTAMP column's wall-clock value)
  // eval(): the row's on_time value (none without on_time); on_timer(): the timer's time.
  virtual std::optional<std::int64_t> time() const = 0;
  // The operator's event-time watermark (none before the first).
  virtual std::optional<std::int64_t> current_watermark() const = 0;
  virtual std::int64_t current_processing_time() const = 0;
  // Event-time timers (Flink's registerOnTime): a named timer replaces the partition's
  // timer of that name; unnamed ones are distinct per time. They fire when the watermark
  // reaches their time.
  virtual void register_on_time(std::string_view name, std::int64_t time) = 0;
  virtual void register_on_time(std::int64_t time) = 0;
  virtual void clear_timer(std::string_view name) = 0;
  // Processing-time timers (a clink extension; Flink's PTFs have event time only): fire
  // when the wall clock reaches their time; named ones replace as above.
  virtual void register_on_processing_time(std::string_view name, std::int64_t time) = 0;
  virtual void clear_all_timers() = 0;
  void clear_all() {
    clear_all_state();
    clear_all_timers();
  }

  // ---- on_timer(): the firing timer's name (empty: unnamed) and domain
  virtual const std::string& current_timer() const = 0;
  virtual bool processing_time_timer() const = 0;

  // ---- output: add_row() then the setters, in PtfSignature::output's columns
  virtual TableFunctionOutput& out() = 0;
};

class ProcessTableFunction {
 public:
  virtual ~ProcessTableFunction() = default;
  virtual void eval(PtfContext& ctx, const PtfRow& input, const PtfArgs& args) = 0;
  virtual void on_timer(PtfContext& /*ctx*/, const PtfArgs& /*args*/) {}
};

struct ProcessTableFunctionDef {
  std::string name;  // as registered
  PtfSignature signature;
  std::function<std::unique_ptr<ProcessTableFunction>()> make;
};

class ProcessTableFunctionRegistry {
 public:
  // The registry of this process, with clink's example functions (ptf_examples.cpp).
  static ProcessTableFunctionRegistry& process();
  // Names are case-insensitive. Throws ClinkError for an invalid signature.
  void add(std::string_view name, PtfSignature signature,
           std::function<std::unique_ptr<ProcessTableFunction>()> make);
  const ProcessTableFunctionDef* find(std::string_view name) const;  // null when unknown
  std::vector<std::string> names() const;

 private:
  std::map<std::string, ProcessTableFunctionDef> functions_;
};

// The example PTFs clink ships (Flink's documentation examples), under their class names.
void register_example_ptfs(ProcessTableFunctionRegistry& r);

}  // namespace clink::sql
