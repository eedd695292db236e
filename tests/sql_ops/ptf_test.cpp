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

// State TTL (Flink's @StateHint(ttl)): counts a partition's rows in value state, keeps its
// values in a list and a map; emits (count, list size, map size).
class Remembering final : public sql::ProcessTableFunction {
 public:
  void eval(sql::PtfContext& ctx, const sql::PtfRow& in, const sql::PtfArgs&) override {
    auto n = ctx.value_state("n");
    const std::int64_t count = n.get_int64().value_or(0) + 1;
    n.set_int64(count);
    auto l = ctx.list_state("l");
    l.add(in.text_at(1));
    auto m = ctx.map_state("m");
    m.put(in.text_at(1), "x");
    std::int64_t entries = 0;
    m.for_each([&](std::string_view, std::string_view v) {
      EXPECT_EQ(v, "x");
      ++entries;
      return true;
    });
    ctx.out().add_row();
    ctx.out().set_bigint(0, count);
    ctx.out().set_bigint(1, static_cast<std::int64_t>(l.get().size()));
    ctx.out().set_bigint(2, entries);
  }
};

json remembering_params() {
  sql::PtfSignature sig;
  sig.output = {{"n", LogicalType::bigint()}, {"l", LogicalType::bigint()}, {"m", LogicalType::bigint()}};
  // n: the pipeline's table.exec.state.ttl (100 ms below); l: its own 100 ms; m: 0, never.
  sig.state = {{"n", sql::PtfStateKind::kValue}, {"l", sql::PtfStateKind::kList, 100}, {"m", sql::PtfStateKind::kMap, 0}};
  sql::ProcessTableFunctionRegistry::process().add("Remembering", sig, [] { return std::make_unique<Remembering>(); });
  return {{"input_schemas", json::array({schema_json(kv())})},
          {"schema", schema_json(sql::make_schema({{"k", LogicalType::string()},
                                                   {"n", LogicalType::bigint()},
                                                   {"l", LogicalType::bigint()},
                                                   {"m", LogicalType::bigint()}}))},
          {"function", "Remembering"},
          {"set_semantics", true},
          {"partition_keys", json::array({0})},
          {"args", json::array()},
          {"state_ttl_ms", 100}};
}

// An entry not written for its TTL (processing time) is gone: value and list elements at
// 100 ms, the map (TTL 0) never; a write renews it. The TTL layout survives a snapshot.
TEST(SqlPtf, StateEntriesExpireAfterTheirTtlAndComeBackFromASnapshotWithIt) {
  for (const char* backend : {"memory", "rocksdb"}) {
    SCOPED_TRACE(backend);
    ManualClock clock{0};
    StateBackendConfig config;
    config.kind = backend;
    std::vector<KeyedStateHandle> handles;
    auto dir = std::filesystem::temp_directory_path() / ("clink-ptf-ttl-" + std::to_string(::getpid()) + backend);
    {
      OpHarness h("sql_process_table_function", remembering_params(), 1, clock, config);
      h.push(rows({{"a", 1}}));
      clock.now = 50;
      h.push(rows({{"a", 2}}));  // n renewed at 50; list: 1 (t 0), 2 (t 50)
      clock.now = 120;
      h.push(rows({{"a", 3}}));  // the list's 1 expired; n (written at 50) lives
      EXPECT_THAT(h.lines, ElementsAre("+I[a, 1, 1, 1]", "+I[a, 2, 2, 2]", "+I[a, 3, 2, 3]"));
      handles.push_back(h.context().keyed_state_backend()->snapshot(1, dir));
    }
    clock.now = 130;
    OpHarness h("sql_process_table_function", remembering_params(), 1, clock, config, handles);
    h.push(rows({{"a", 4}}));  // restored: n 3 (t 120), list 2 (t 50), 3 (t 120)
    clock.now = 400;
    h.push(rows({{"a", 5}}));  // everything but the map expired
    EXPECT_THAT(h.lines, ElementsAre("+I[a, 4, 3, 4]", "+I[a, 1, 1, 5]"));
    std::filesystem::remove_all(dir);
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
