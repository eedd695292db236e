// sql_process_table_function run directly (OpHarness, a manual processing-time clock):
// processing-time timers (named, replaced by every row, fired when the clock passes them),
// clear_timer / clear_all, the timer's name and domain in on_timer, state restored from a
// snapshot with pending timers, and the errors a function gets for what its call does not
// allow (state or timers with row semantics, event-time timers without on_time).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sql_ops_test_support.hpp"

#include "clink/sql/function/process_table_function.hpp"

#include "../support/manual_clock.hpp"

namespace clink::test {
namespace {

using ::testing::ElementsAre;

SchemaPtr kv() { return sql::make_schema({{"k", LogicalType::string()}, {"v", LogicalType::bigint()}}); }
ColumnBatch rows(const std::vector<std::pair<std::string, std::int64_t>>& r) {
  std::vector<Row> out;
  for (const auto& [k, v] : r) out.push_back({{Value(k), Value(v)}});
  return batch(kv(), out);
}

// Counts a partition's rows; 100 ms (processing time) after its last row emits the count.
// v = -1 clears the partition's timer, v = -2 clears everything.
class IdleCounter final : public sql::ProcessTableFunction {
 public:
  void eval(sql::PtfContext& ctx, const sql::PtfRow& in, const sql::PtfArgs&) override {
    const std::int64_t v = in.bigint_at(1);
    if (v == -1) return ctx.clear_timer("idle");
    if (v == -2) return ctx.clear_all();
    auto n = ctx.value_state("n");
    n.set_int64(n.get_int64().value_or(0) + 1);
    ctx.register_on_processing_time("idle", ctx.current_processing_time() + 100);
  }
  void on_timer(sql::PtfContext& ctx, const sql::PtfArgs&) override {
    ctx.out().add_row();
    ctx.out().set_bigint(0, ctx.value_state("n").get_int64().value_or(0));
    ctx.out().set_string(1, std::string(ctx.processing_time_timer() ? "processing " : "event ") + ctx.current_timer());
  }
};

// Row semantics, but tries state or an event-time timer (v selects which).
class Misbehaving final : public sql::ProcessTableFunction {
 public:
  void eval(sql::PtfContext& ctx, const sql::PtfRow& in, const sql::PtfArgs&) override {
    if (in.bigint_at(1) == 1) ctx.value_state("x");
    else ctx.register_on_time(0);
  }
};

void register_functions() {
  sql::PtfSignature idle;
  idle.output = {{"n", LogicalType::bigint()}, {"timer", LogicalType::string()}};
  idle.state = {{"n", sql::PtfStateKind::kValue}};
  sql::ProcessTableFunctionRegistry::process().add("IdleCounter", idle, [] { return std::make_unique<IdleCounter>(); });
  sql::PtfSignature row;
  row.semantics = sql::PtfTableSemantics::kRow;
  row.output = {{"x", LogicalType::bigint()}};
  sql::ProcessTableFunctionRegistry::process().add("Misbehaving", row, [] { return std::make_unique<Misbehaving>(); });
}

json params(const std::string& fn, bool set) {
  register_functions();
  std::vector<sql::RowField> out;
  if (set) out.push_back({"k", LogicalType::string()});
  if (fn == "IdleCounter") {
    out.push_back({"n", LogicalType::bigint()});
    out.push_back({"timer", LogicalType::string()});
  } else {
    out.push_back({"x", LogicalType::bigint()});
  }
  return {{"input_schemas", json::array({schema_json(kv())})},
          {"schema", schema_json(sql::make_schema(out))},
          {"function", fn},
          {"set_semantics", set},
          {"partition_keys", set ? json::array({0}) : json::array()},
          {"args", json::array()}};
}

TEST(SqlPtf, NamedProcessingTimeTimersAreReplacedAndFireWhenTheClockPasses) {
  ManualClock clock{1000};
  OpHarness h("sql_process_table_function", params("IdleCounter", true), 1, clock);
  h.push(rows({{"a", 1}, {"b", 1}}));  // a, b: idle at 1100
  clock.now = 1050;
  h.push(rows({{"a", 1}}));  // a: moved to 1150
  h.processing_time(1100);
  EXPECT_THAT(h.lines, ElementsAre("+I[b, 1, processing idle]"));
  h.processing_time(1149);
  EXPECT_EQ(h.lines.size(), 1u);
  h.processing_time(1150);
  EXPECT_THAT(h.lines, ElementsAre("+I[b, 1, processing idle]", "+I[a, 2, processing idle]"));
  EXPECT_EQ(h.context().timer_service().processing_time_timer_count(), 0u);
}

TEST(SqlPtf, ClearTimerAndClearAll) {
  ManualClock clock{0};
  OpHarness h("sql_process_table_function", params("IdleCounter", true), 1, clock);
  h.push(rows({{"a", 1}, {"b", 1}, {"c", 1}}));
  h.push(rows({{"a", -1}, {"b", -2}}));  // a: timer gone, count kept; b: both gone
  EXPECT_EQ(h.context().timer_service().processing_time_timer_count(), 1u);
  h.processing_time(1000);
  h.push(rows({{"a", 1}, {"b", 1}}));
  h.processing_time(2000);
  EXPECT_THAT(h.lines, ElementsAre("+I[c, 1, processing idle]", "+I[a, 2, processing idle]", "+I[b, 1, processing idle]"));
}

TEST(SqlPtf, StateAndPendingTimersComeBackFromASnapshot) {
  ManualClock clock{0};
  StateBackendConfig memory;
  std::vector<KeyedStateHandle> handles;
  std::set<Timer> timers;
  auto dir = std::filesystem::temp_directory_path() / ("clink-ptf-test-" + std::to_string(::getpid()));
  {
    OpHarness h("sql_process_table_function", params("IdleCounter", true), 1, clock, memory);
    h.push(rows({{"a", 1}, {"a", 1}, {"b", 1}}));
    handles.push_back(h.context().keyed_state_backend()->snapshot(1, dir));
    timers = h.context().timer_service().processing_time_timers();
  }
  OpHarness h("sql_process_table_function", params("IdleCounter", true), 1, clock, memory, handles);
  for (const auto& t : timers) h.context().timer_service().register_processing_time_timer(t.time, t.key, t.ns);
  h.push(rows({{"b", 1}}));  // b's restored timer is replaced (its registry entry came back too)
  h.processing_time(1000);
  EXPECT_THAT(h.lines, ElementsAre("+I[a, 2, processing idle]", "+I[b, 2, processing idle]"));
  std::filesystem::remove_all(dir);
}

TEST(SqlPtf, RowSemanticsHaveNoStateOrTimers) {
  OpHarness state("sql_process_table_function", params("Misbehaving", false));
  try {
    state.push(rows({{"a", 1}}));
    FAIL() << "no error";
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("Misbehaving has row semantics: it has no state"));
  }
  OpHarness timer("sql_process_table_function", params("Misbehaving", false));
  try {
    timer.push(rows({{"a", 2}}));
    FAIL() << "no error";
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("Misbehaving has row semantics: timers need a table with set semantics"));
  }
}

// PASS_COLUMNS_THROUGH: each output row starts with the input row's columns (k, v), then
// the function's (v doubled); v = 0 tries a timer, which such a function may not use.
class Doubling final : public sql::ProcessTableFunction {
 public:
  void eval(sql::PtfContext& ctx, const sql::PtfRow& in, const sql::PtfArgs&) override {
    if (in.bigint_at(1) == 0) return ctx.register_on_processing_time("t", 1);
    ctx.out().add_row();
    ctx.out().set_bigint(0, 2 * in.bigint_at(1));
  }
};

TEST(SqlPtf, PassColumnsThroughStartsEachRowWithTheInputRowAndAllowsNoTimers) {
  sql::PtfSignature sig;
  sig.pass_columns_through = true;
  sig.output = {{"x", LogicalType::bigint()}};
  sql::ProcessTableFunctionRegistry::process().add("Doubling", sig, [] { return std::make_unique<Doubling>(); });
  const json p = {{"input_schemas", json::array({schema_json(kv())})},
                  {"schema", schema_json(sql::make_schema({{"k", LogicalType::string()},
                                                           {"v", LogicalType::bigint()},
                                                           {"x", LogicalType::bigint()}}))},
                  {"function", "Doubling"},
                  {"set_semantics", true},
                  {"partition_keys", json::array({0})},
                  {"args", json::array()}};
  OpHarness h("sql_process_table_function", p);
  h.push(rows({{"a", 1}, {"b", 5}, {"a", 3}}));
  EXPECT_THAT(h.lines, ElementsAre("+I[a, 1, 2]", "+I[b, 5, 10]", "+I[a, 3, 6]"));
  try {
    h.push(rows({{"a", 0}}));
    FAIL() << "no error";
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("Doubling passes its input's columns through (PASS_COLUMNS_THROUGH), "
                                               "so it cannot use timers"));
  }
}

TEST(SqlPtf, SupportUpdatesExcludesPassColumnsThrough) {
  sql::PtfSignature sig;
  sig.pass_columns_through = true;
  sig.supports_updates = true;
  sig.output = {{"x", LogicalType::bigint()}};
  try {
    sql::ProcessTableFunctionRegistry::process().add("Both", sig, [] { return std::make_unique<Doubling>(); });
    FAIL() << "no error";
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("process table function Both: PASS_COLUMNS_THROUGH is not supported if "
                                               "SUPPORT_UPDATES is declared"));
  }
}

}  // namespace
}  // namespace clink::test
