#pragma once
// Test support for the SQL operators: building ColumnBatches from values, running one
// operator directly (OpHarness: batches and watermarks in, formatted rows out), and a
// registry with test factories so specs run as real jobs: `sql_test_source` (a script of
// batches and watermarks that checkpoints its position and can pause),
// `sql_test_injector` (fails once when armed) and `sql_test_sink` (exactly-once collect of
// the formatted rows).
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "clink/connectors/exactly_once_collect_sink.hpp"
#include "clink/registry/builtin_registry.hpp"
#include "clink/runtime/operator.hpp"
#include "clink/runtime/operator_registry.hpp"
#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/common/time_zone.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"
#include "clink/state/keyed_state_backend.hpp"

#include "../support/manual_clock.hpp"
#include "../support/restore_harness.hpp"

namespace clink::test {

using nlohmann::json;
using sql::ColumnBatch;
using sql::LogicalType;
using sql::RowKind;
using sql::Schema;
using sql::SchemaPtr;
using sql::Value;

// Microseconds of a TIMESTAMP literal "YYYY-MM-DD HH:MM[:SS[.mmm]]" (UTC).
inline std::int64_t ts(const std::string& s) {
  int y = std::stoi(s.substr(0, 4)), m = std::stoi(s.substr(5, 2)), d = std::stoi(s.substr(8, 2));
  int hh = std::stoi(s.substr(11, 2)), mm = std::stoi(s.substr(14, 2));
  int ss = s.size() >= 19 ? std::stoi(s.substr(17, 2)) : 0;
  int ms = s.size() >= 23 ? std::stoi(s.substr(20, 3)) : 0;
  y -= m <= 2;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const std::int64_t days = static_cast<std::int64_t>(era) * 146097 + doe - 719468;
  return ((days * 86400 + hh * 3600 + mm * 60 + ss) * 1000 + ms) * 1000;
}
inline std::int64_t ms_of(const std::string& s) { return ts(s) / 1000; }

struct Row {
  std::vector<Value> values;
  RowKind kind = RowKind::kInsert;
  EventTime time = kNoEventTime;
};
inline ColumnBatch batch(const SchemaPtr& schema, const std::vector<Row>& rows) {
  ColumnBatch b(schema);
  for (const auto& r : rows) b.append_row(r.values, r.kind, r.time);
  return b;
}

inline json schema_json(const SchemaPtr& s) { return sql::schema_to_json(*s); }

// One operator run directly on a RuntimeContext; `lines` logs what it emitted in order:
// rows as format_row writes them, "WM <t>" for watermarks, "DL <payload...>" for dead
// letters.
class OpHarness final : public Output {
 public:
  // `backend` and `restore`: the keyed state backend, and the snapshots it restores
  // before the operator opens (as the executor does).
  OpHarness(const std::string& factory, json params, int parallelism = 1,
            const ProcessingTimeClock& clock = SystemClock::instance(), const StateBackendConfig& backend = {},
            const std::vector<KeyedStateHandle>& restore = {}) {
    OperatorSpecContext sc;
    sc.id = "op";
    sc.params = std::move(params);
    sc.input_types = {sql::kSqlRowType};
    op_ = builtin_registry().get(factory).make(sc)();
    ctx_ = std::make_unique<RuntimeContext>("op", "op", 0, parallelism, kDefaultMaxParallelism, this,
                                            std::make_shared<OperatorMetrics>(), clock);
    ctx_->set_keyed_state_backend(
        make_keyed_state_backend(backend, "op", 0, ctx_->key_groups(), kDefaultMaxParallelism, clock));
    if (!restore.empty()) ctx_->keyed_state_backend()->restore(restore);
    op_->open(*ctx_);
  }
  ~OpHarness() override { op_->close(); }

  void push(ColumnBatch b, int input = 0) { op_->process_batch(input, std::make_unique<ColumnBatch>(std::move(b))); }
  void watermark(EventTime t) { op_->process_watermark(Watermark{t, false}); }
  void finish() {
    op_->process_watermark(Watermark{kMaxEventTime, false});
    op_->finish();
  }
  // Fires the processing-time timers due by `now` (ms; timers at or before it).
  void processing_time(std::int64_t now) { op_->process_processing_time(now); }
  RuntimeContext& context() { return *ctx_; }
  // The operator's part of a checkpoint (it writes cached state back), before the keyed
  // state backend's snapshot.
  void snapshot_state(std::int64_t checkpoint_id) { op_->snapshot_state(checkpoint_id); }

  // Output
  void emit(BatchPtr b) override {
    const auto& cb = sql::column_batch_cast(*b);
    for (auto& l : sql::format_rows(cb)) lines.push_back(std::move(l));
    times.insert(times.end(), cb.event_times().begin(), cb.event_times().end());
  }
  void emit_watermark(Watermark wm) override { lines.push_back("WM " + std::to_string(wm.timestamp)); }
  void emit_side(const std::string& tag, BatchPtr b) override {
    const auto& cb = sql::column_batch_cast(*b);
    for (auto& l : sql::format_rows(cb)) lines.push_back("DL(" + tag + ") " + l);
  }

  std::vector<std::string> lines;
  std::vector<EventTime> times;

 private:
  std::unique_ptr<StreamOperator> op_;
  std::unique_ptr<RuntimeContext> ctx_;
};

// ---- jobs from specs ----

// One step of a SQL script: a batch, then optionally a watermark (tests/support's
// ScriptStep<T> is the typed-record counterpart).
struct BatchStep {
  std::optional<ColumnBatch> batch;
  std::optional<EventTime> watermark;
};
// What `sql_test_source` plays (tests/support's scripted source: pause_at / emitted hold
// and follow it), when `sql_test_injector` fails (armed / failures_left) and what
// `sql_test_sink` received.
struct Script : SourceControl, ArmedFailure {
  SchemaPtr schema;
  std::vector<BatchStep> steps;
  std::shared_ptr<ExactlyOnceCollectSink<std::string>> sink = std::make_shared<ExactlyOnceCollectSink<std::string>>();
};

// Scripts by name, for the test factories.
std::shared_ptr<Script> script(const std::string& name);
void put_script(const std::string& name, std::shared_ptr<Script> s);

// The builtin registry plus the test factories.
const OperatorRegistry& test_registry();

}  // namespace clink::test
