// The lookup join op's mechanics that need a table answering on cue (the jdbc tests cover
// everything a user sees against PostgreSQL): its output order around watermarks, in
// ORDERED and ALLOW_UNORDERED mode, and its retries. The table is a LookupSource that
// holds back the lookups of keys >= 100 until the test releases them.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "clink/connectors/sql/lookup_source.hpp"
#include "clink/sql/expression/expr.hpp"
#include "clink/sql/spec/expr_json.hpp"
#include "clink/sql/spec/lookup_join_spec.hpp"
#include "sql_ops_test_support.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  std::atomic<int> failures_left{0};  // lookups that throw before answering
  void release() {
    {
      std::lock_guard lock(mu);
      open = true;
    }
    cv.notify_all();
  }
};
Gate& gate() {
  static Gate g;
  return g;
}

// (n INT, label STRING): label "L<n>"; keys >= 100 wait for the gate.
class GatedTable final : public LookupSource {
 public:
  void lookup(const ColumnBatch& keys, ColumnBatch& out) override {
    if (gate().failures_left.fetch_sub(1) > 0) throw ClinkError("lookup refused");
    for (std::size_t r = 0; r < keys.size(); ++r) {
      const std::int32_t k = keys.column(0).values<std::int32_t>()[r];
      if (k >= 100) {
        std::unique_lock lock(gate().mu);
        gate().cv.wait(lock, [] { return gate().open; });
      }
      out.column(0).append(k);
      out.column(1).append_string("L" + std::to_string(k));
    }
    out.commit_rows(keys.size());
  }
};

SchemaPtr probe_schema() { return make_schema({{"id", LogicalType::bigint()}, {"k", LogicalType::int_type()}}); }
SchemaPtr table_schema() { return make_schema({{"n", LogicalType::int_type()}, {"label", LogicalType::string()}}); }

json params(const std::string& mode, const std::string& options_extra = "") {
  register_lookup_function("gated", [](const LookupSourceContext&) { return std::make_unique<GatedTable>(); });
  json options = {{"lookup_function", "gated"}, {"lookup.cache", "PARTIAL"}, {"lookup.partial-cache.max-rows", "100"}};
  if (!options_extra.empty()) options["lookup.max-retries"] = options_extra;
  SchemaPtr out = make_schema({{"id", LogicalType::bigint()}, {"k", LogicalType::int_type()},
                               {"n", LogicalType::int_type()}, {"label", LogicalType::string()}});
  return {{"input_schemas", json::array({schema_json(probe_schema())})},
          {"schema", schema_json(out)},
          {"join_type", "inner"},
          {"table", "gated"},
          {"lookup", kLookupFunctionSource},
          {"options", options},
          {"dim_schema", schema_json(table_schema())},
          {"dim_columns", {0, 1}},
          {"keys", json::array({{{"column", 0}, {"value", expr_to_json(*expr::column(1, LogicalType::int_type()))}}})},
          {"async", {{"capacity", 100}, {"output_mode", mode}, {"timeout_ms", 60000}}}};
}

ColumnBatch rows(std::int64_t id, std::int32_t k, EventTime t) {
  return batch(probe_schema(), {Row{{Value(id), Value(k)}, RowKind::kInsert, t}});
}

// Lets the op take what its lookup thread answered (an empty batch: the op polls on every
// call, as its task's mailbox would make it) until it emitted `n` lines (or 10 s passed),
// then a little longer (nothing more may come).
void settle(OpHarness& h, std::size_t n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (h.lines.size() < n && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    h.push(ColumnBatch(probe_schema()));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  h.push(ColumnBatch(probe_schema()));
}

// Key 1 is cached first; then row 1 (key 100, held back), row 2 (key 1, cached), the
// watermark 5 and row 3 (key 1, cached).
std::vector<std::string> run(const std::string& mode, std::vector<std::string>& while_held, std::vector<EventTime>& times) {
  gate().open = false;
  const bool ordered = mode == "ORDERED";
  OpHarness h(kSqlLookupJoin, params(mode));
  h.push(rows(0, 1, 1));
  settle(h, 1);
  h.push(rows(1, 100, 2));
  h.push(rows(2, 1, 3));
  h.watermark(5);
  h.push(rows(3, 1, 6));
  settle(h, ordered ? 1 : 2);
  while_held = h.lines;
  gate().release();
  settle(h, 5);
  h.finish();
  times = h.times;
  return h.lines;
}

TEST(LookupJoinOrder, OrderedKeepsRowsAndWatermarksInInputOrder) {
  std::vector<std::string> held;
  std::vector<EventTime> times;
  auto lines = run("ORDERED", held, times);
  EXPECT_EQ(held, (std::vector<std::string>{"+I[0, 1, 1, L1]"}));
  EXPECT_EQ(lines, (std::vector<std::string>{"+I[0, 1, 1, L1]", "+I[1, 100, 100, L100]", "+I[2, 1, 1, L1]", "WM 5",
                                             "+I[3, 1, 1, L1]", "WM " + std::to_string(kMaxEventTime)}));
  EXPECT_EQ(times, (std::vector<EventTime>{1, 2, 3, 6}));  // each row keeps its input's time
}

// A cached row overtakes a waiting one, but no row crosses the watermark between them.
TEST(LookupJoinOrder, UnorderedLetsRowsOvertakeOnlyWithinAWatermark) {
  std::vector<std::string> held;
  std::vector<EventTime> times;
  auto lines = run("ALLOW_UNORDERED", held, times);
  EXPECT_EQ(held, (std::vector<std::string>{"+I[0, 1, 1, L1]", "+I[2, 1, 1, L1]"}));
  EXPECT_EQ(lines, (std::vector<std::string>{"+I[0, 1, 1, L1]", "+I[2, 1, 1, L1]", "+I[1, 100, 100, L100]", "WM 5",
                                             "+I[3, 1, 1, L1]", "WM " + std::to_string(kMaxEventTime)}));
}

// A failed lookup is tried again ('lookup.max-retries'); past the retries the job fails
// naming the table and the last error.
TEST(LookupJoinOrder, FailedLookupsAreRetried) {
  gate().open = true;
  gate().failures_left = 1;
  {
    OpHarness h(kSqlLookupJoin, params("ORDERED", "1"));
    h.push(rows(0, 1, 1));
    h.finish();
    EXPECT_EQ(h.lines, (std::vector<std::string>{"+I[0, 1, 1, L1]", "WM " + std::to_string(kMaxEventTime)}));
  }
  gate().failures_left = 1;
  OpHarness h(kSqlLookupJoin, params("ORDERED", "0"));
  h.push(rows(0, 1, 1));
  try {
    h.finish();
    FAIL() << "expected the lookup to fail";
  } catch (const ClinkError& e) {
    EXPECT_NE(std::string(e.what()).find("(table `gated`): the lookup failed after 1 attempt(s) ('lookup.max-retries' "
                                         "= 0): lookup refused"),
              std::string::npos)
        << e.what();
  }
  gate().failures_left = 0;
}

}  // namespace
}  // namespace clink::test
