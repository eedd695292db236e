// sql_process_table_function in real jobs: a process table function registered directly in
// C++ (no CREATE FUNCTION) keeps a running sum in value state and the values in list
// state per key, emits a row per input row, sets an unnamed event-time timer 5 ms after
// each row and a named one ("last") 3 ms after it, replaced by every row, and emits a row
// per firing timer. Run failure-free at parallelism 1 and 2, stopped with a savepoint and
// resumed (1 -> 1, 1 -> 2, 2 -> 1) while timers are pending (the watermark lags the rows by
// one step), and with an injected failure, on the memory and the RocksDB backends: the
// exactly-once output must equal the failure-free one row for row, so state and pending
// timers (named ones replaced, not duplicated) come back exactly.
#include <gtest/gtest.h>

#include "restore_harness.hpp"

#include "clink/sql/function/process_table_function.hpp"

#include "../support/print_form.hpp"

namespace clink::test {
namespace {

class SumWithTimers final : public sql::ProcessTableFunction {
 public:
  void eval(sql::PtfContext& ctx, const sql::PtfRow& in, const sql::PtfArgs&) override {
    auto sum = ctx.value_state("sum");
    const std::int64_t s = sum.get_int64().value_or(0) + in.bigint_at(in.index_of("v"));
    sum.set_int64(s);
    auto values = ctx.list_state("values");
    values.add(in.text_at(in.index_of("v")));
    emit(ctx, "row", s, static_cast<std::int64_t>(values.get().size()));
    ctx.register_on_time(*ctx.time() + 5);
    ctx.register_on_time("last", *ctx.time() + 3);
  }
  void on_timer(sql::PtfContext& ctx, const sql::PtfArgs&) override {
    const std::string label = ctx.current_timer().empty() ? "u" : ctx.current_timer();
    emit(ctx, label, ctx.value_state("sum").get_int64().value_or(-1),
         static_cast<std::int64_t>(ctx.list_state("values").get().size()));
  }

 private:
  static void emit(sql::PtfContext& ctx, const std::string& label, std::int64_t sum, std::int64_t n) {
    ctx.out().add_row();
    ctx.out().set_string(0, label);
    ctx.out().set_bigint(1, sum);
    ctx.out().set_bigint(2, n);
  }
};

void register_sum_with_timers() {
  sql::PtfSignature sig;
  sig.require_on_time = true;
  sig.output = {{"label", LogicalType::string()}, {"total", LogicalType::bigint()}, {"n", LogicalType::bigint()}};
  sig.state = {{"sum", sql::PtfStateKind::kValue}, {"values", sql::PtfStateKind::kList}};
  sql::ProcessTableFunctionRegistry::process().add("SumWithTimers", sig, [] { return std::make_unique<SumWithTimers>(); });
}

json ptf_op() {
  register_sum_with_timers();
  SchemaPtr out = sql::make_schema({{"k", LogicalType::string()},
                                    {"label", LogicalType::string()},
                                    {"total", LogicalType::bigint()},
                                    {"n", LogicalType::bigint()},
                                    {"rowtime", LogicalType::timestamp(3).not_null()}});
  return keyed_op("ptf", "sql_process_table_function", out,
                  {{"function", "SumWithTimers"},
                   {"uid", "sum"},
                   {"set_semantics", true},
                   {"partition_keys", {1}},
                   {"order_keys", json::array()},
                   {"on_time", 0},
                   {"args", json::array()}});
}

class SqlPtfRestore : public SqlRestoreHarness {};
INSTANTIATE_TEST_SUITE_P(Backends, SqlPtfRestore, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

std::string ts(int ms) { return print_timestamp_ms(ms); }

// Per key the rows (t, v) = (1, 1), (12, 2), (15, 4), (21, 8), (29, 16) with the
// watermarks -, 5, 12, 16, - after the steps: the unnamed timer at 6 fires at the
// watermark 12 (after the row at 15), every other timer at the end of the input, in
// time order; "last" was moved by every row to 29 + 3.
std::vector<std::string> expected() {
  std::vector<std::string> out;
  for (std::string k : {"a", "b", "c", "d", "e", "f"}) {
    auto row = [&](const char* label, int sum, int n, int t) {
      out.push_back("+I[" + k + ", " + label + ", " + std::to_string(sum) + ", " + std::to_string(n) + ", " + ts(t) +
                    "]");
    };
    row("row", 1, 1, 1);
    row("row", 3, 2, 12);
    row("row", 7, 3, 15);
    row("u", 7, 3, 6);
    row("row", 15, 4, 21);
    row("row", 31, 5, 29);
    for (int t : {17, 20, 26, 34}) row("u", 31, 5, t);
    row("last", 31, 5, 32);
  }
  return sorted(out);
}

// Savepoints after steps 2 and 3 hold pending timers (named and unnamed) and state.
TEST_P(SqlPtfRestore, StateAndTimersComeBackExactly) {
  expect_restores(single_op_job("ptf", ptf_op(), rising_steps(watermarks_one_step_behind())),
                  {.savepoint_steps = {2, 3}}, expected());
}

}  // namespace
}  // namespace clink::test
