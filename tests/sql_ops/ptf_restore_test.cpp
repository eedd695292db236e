// sql_process_table_function in real jobs: a process table function registered directly in
// C++ (no CREATE FUNCTION) keeps a running sum in value state and the values in list
// state per key, emits a row per input row, sets an unnamed event-time timer 5 ms after
// each row and a named one ("last") 3 ms after it, replaced by every row, and emits a row
// per firing timer. Run failure-free at parallelism 1 and 2, stopped with a savepoint and
// resumed (1 -> 1, 1 -> 2, 2 -> 1) while timers are pending (the watermark lags the rows by
// one step), and with an injected failure, on the memory and the RocksDB backends: the
// exactly-once output must equal the failure-free one row for row, so state and pending
// timers (named ones replaced, not duplicated) come back exactly. The same for a function
// with two table arguments (Flink's multi-input PTFs): both read the job's rows, share
// state and timers per key, and each one's named timer is replaced by its own rows; and
// with ORDER BY on both, rows of both tables waiting in state across the savepoint.
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

// Two table arguments, both the job's rows: per key, a row count per table (value state
// "n0" / "n1") and every row with its table in list state; each row emits (in<table>,
// its table's count, v), moves its table's named timer ("t0" / "t1") to its time + 3,
// and a row of table 0 sets an unnamed timer at its time + 5. A timer emits the sums of
// v per table over the rows up to its time: the output does not depend on how the two
// inputs interleave (the combined watermark waits for both).
class TwoTables final : public sql::ProcessTableFunction {
 public:
  void eval(sql::PtfContext& ctx, const sql::PtfRow& in, const sql::PtfArgs&) override {
    const std::string t = std::to_string(in.table());
    auto n = ctx.value_state("n" + t);
    n.set_int64(n.get_int64().value_or(0) + 1);
    const std::int64_t v = in.bigint_at(in.index_of("v"));
    ctx.list_state("rows").add(t + "," + std::to_string(*ctx.time()) + "," + std::to_string(v));
    emit(ctx, "in" + t, *n.get_int64(), v);
    ctx.register_on_time("t" + t, *ctx.time() + 3);
    if (in.table() == 0) ctx.register_on_time(*ctx.time() + 5);
  }
  void on_timer(sql::PtfContext& ctx, const sql::PtfArgs&) override {
    std::int64_t sums[2] = {0, 0};
    for (const std::string& r : ctx.list_state("rows").get()) {
      const std::size_t a = r.find(','), b = r.find(',', a + 1);
      if (std::stoll(r.substr(a + 1, b - a - 1)) <= *ctx.time()) sums[r[0] - '0'] += std::stoll(r.substr(b + 1));
    }
    emit(ctx, ctx.current_timer().empty() ? "u" : ctx.current_timer(), sums[0], sums[1]);
  }

 private:
  static void emit(sql::PtfContext& ctx, const std::string& label, std::int64_t a, std::int64_t b) {
    ctx.out().add_row();
    ctx.out().set_string(0, label);
    ctx.out().set_bigint(1, a);
    ctx.out().set_bigint(2, b);
  }
};

json two_table_op() {
  sql::PtfSignature sig;
  sig.table_arg = "left";
  sig.more_table_args = {"right"};
  sig.require_on_time = true;
  sig.output = {{"label", LogicalType::string()}, {"a", LogicalType::bigint()}, {"b", LogicalType::bigint()}};
  sig.state = {{"n0", sql::PtfStateKind::kValue}, {"n1", sql::PtfStateKind::kValue}, {"rows", sql::PtfStateKind::kList}};
  sql::ProcessTableFunctionRegistry::process().add("TwoTables", sig, [] { return std::make_unique<TwoTables>(); });
  SchemaPtr out = sql::make_schema({{"k", LogicalType::string()},
                                    {"k0", LogicalType::string()},
                                    {"label", LogicalType::string()},
                                    {"a", LogicalType::bigint()},
                                    {"b", LogicalType::bigint()},
                                    {"rowtime", LogicalType::timestamp(3).not_null()}});
  json op = keyed_op("ptf", "sql_process_table_function", out,
                     {{"function", "TwoTables"},
                      {"uid", "two"},
                      {"set_semantics", true},
                      {"partition_keys", {1}},
                      {"order_keys", json::array()},
                      {"on_time", 0},
                      {"more_tables", json::array({{{"partition_keys", {1}}, {"on_time", 0}}})},
                      {"args", json::array()}});
  op["params"]["input_schemas"].push_back(op["params"]["input_schemas"][0]);
  json second = op["inputs"][0];
  second["input"] = 1;
  op["inputs"].push_back(second);
  return op;
}

// Rows per table as expected() above; the named timers are replaced by the next step's
// row before the watermark reaches them, so only the last ones (29 + 3) fire; the unnamed
// one at 6 fires at the watermark 12, the rest at the end of the input.
std::vector<std::string> two_table_expected() {
  std::vector<std::string> out;
  const int times[] = {1, 12, 15, 21, 29}, values[] = {1, 2, 4, 8, 16};
  for (std::string k : {"a", "b", "c", "d", "e", "f"}) {
    auto row = [&](const std::string& label, int a, int b, int t) {
      out.push_back("+I[" + k + ", " + k + ", " + label + ", " + std::to_string(a) + ", " + std::to_string(b) + ", " +
                    ts(t) + "]");
    };
    for (int table = 0; table < 2; ++table)
      for (int i = 0; i < 5; ++i) row("in" + std::to_string(table), i + 1, values[i], times[i]);
    auto sum_to = [&](int t) {
      int s = 0;
      for (int i = 0; i < 5; ++i) s += times[i] <= t ? values[i] : 0;
      return s;
    };
    for (int t : {6, 17, 20, 26, 34}) row("u", sum_to(t), sum_to(t), t);
    row("t0", 31, 31, 32);
    row("t1", 31, 31, 32);
  }
  return sorted(out);
}

TEST_P(SqlPtfRestore, TwoTableArgumentsShareStateAndTimersThatComeBackExactly) {
  expect_restores(single_op_job("ptf2", two_table_op(), rising_steps(watermarks_one_step_behind())),
                  {.savepoint_steps = {2, 3}}, two_table_expected());
}

// ORDER BY on both table arguments: per key a running sum of v over the rows delivered so
// far, emitted per row. The rows of both tables wait in state for the watermark and come
// in time order, table 0 first at one time, so the sums do not depend on how the inputs
// interleave; savepoints after steps 2 and 3 hold waiting rows of both tables.
class RunningTotal final : public sql::ProcessTableFunction {
 public:
  void eval(sql::PtfContext& ctx, const sql::PtfRow& in, const sql::PtfArgs&) override {
    auto sum = ctx.value_state("sum");
    const std::int64_t v = in.bigint_at(in.index_of("v"));
    sum.set_int64(sum.get_int64().value_or(0) + v);
    ctx.out().add_row();
    ctx.out().set_string(0, "in" + std::to_string(in.table()));
    ctx.out().set_bigint(1, *sum.get_int64());
    ctx.out().set_bigint(2, v);
  }
};

json ordered_two_table_op() {
  sql::PtfSignature sig;
  sig.table_arg = "left";
  sig.more_table_args = {"right"};
  sig.output = {{"label", LogicalType::string()}, {"a", LogicalType::bigint()}, {"b", LogicalType::bigint()}};
  sig.state = {{"sum", sql::PtfStateKind::kValue}};
  sql::ProcessTableFunctionRegistry::process().add("RunningTotal", sig, [] { return std::make_unique<RunningTotal>(); });
  json op = two_table_op();
  op["params"]["function"] = "RunningTotal";
  op["params"]["uid"] = "total";
  const json by_time = json::array({{{"column", 0}, {"descending", false}}});
  op["params"]["order_keys"] = by_time;
  op["params"]["more_tables"][0]["order_keys"] = by_time;
  return op;
}

std::vector<std::string> ordered_two_table_expected() {
  std::vector<std::string> out;
  const int times[] = {1, 12, 15, 21, 29}, values[] = {1, 2, 4, 8, 16};
  for (std::string k : {"a", "b", "c", "d", "e", "f"}) {
    int sum = 0;
    for (int i = 0; i < 5; ++i)
      for (int table = 0; table < 2; ++table) {
        sum += values[i];
        out.push_back("+I[" + k + ", " + k + ", in" + std::to_string(table) + ", " + std::to_string(sum) + ", " +
                      std::to_string(values[i]) + ", " + ts(times[i]) + "]");
      }
  }
  return sorted(out);
}

TEST_P(SqlPtfRestore, OrderByOnTwoTableArgumentsMergesTheirRowsInTimeOrder) {
  expect_restores(single_op_job("ptf_ordered", ordered_two_table_op(), rising_steps(watermarks_one_step_behind())),
                  {.savepoint_steps = {2, 3}}, ordered_two_table_expected());
}

}  // namespace
}  // namespace clink::test
