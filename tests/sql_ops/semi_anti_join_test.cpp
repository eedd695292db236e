// sql_semi_anti_join run directly, one input batch at a time in a fixed order: the exact
// changelog of Flink's StreamingSemiAntiJoinOperator (left rows forwarded with their own
// kind, right rows emitting or retracting the left rows whose match count they take from
// or to 0), duplicates, NULL keys, a residual condition and NOT IN's keyless NULL-aware
// condition.
#include <gtest/gtest.h>

#include "clink/sql/function/function_registry.hpp"
#include "clink/sql/spec/expr_json.hpp"
#include "join_harness.hpp"

namespace clink::test {
namespace {

using Lines = std::vector<std::string>;
namespace expr = sql::expr;

SchemaPtr left_schema() { return sql::make_schema({{"k", LogicalType::bigint()}, {"lv", LogicalType::string()}}); }
SchemaPtr right_schema() { return sql::make_schema({{"k", LogicalType::bigint()}, {"rv", LogicalType::string()}}); }

json semi_params(const std::string& type, const sql::ExprPtr& condition = nullptr) {
  return {{"schema", schema_json(left_schema())},
          {"input_schemas", json::array({schema_json(left_schema()), schema_json(right_schema())})},
          {"join_type", type},
          {"left_keys", {0}},
          {"right_keys", {0}},
          {"condition", condition ? sql::expr_to_json(*condition) : json(nullptr)}};
}

Row row(Value k, const char* v, RowKind kind = RowKind::kInsert) { return Row{{std::move(k), Value(v)}, kind}; }
ColumnBatch L(std::vector<Row> rows) { return batch(left_schema(), rows); }
ColumnBatch R(std::vector<Row> rows) { return batch(right_schema(), rows); }

TEST(SqlSemiJoin, EmitsLeftRowsOnTheirFirstMatchAndRetractsThemOnTheirLast) {
  JoinHarness h("sql_semi_anti_join", semi_params("semi"));
  EXPECT_EQ(h.push(0, L({row(1, "a1")})), Lines{});
  EXPECT_EQ(h.push(1, R({row(1, "b1")})), Lines{"+I[1, a1]"});
  EXPECT_EQ(h.push(1, R({row(1, "b2")})), Lines{}) << "a1 already matched";
  EXPECT_EQ(h.push(0, L({row(1, "a2")})), Lines{"+I[1, a2]"});
  EXPECT_EQ(h.push(1, R({row(1, "b1", RowKind::kDelete)})), Lines{}) << "b2 still matches";
  EXPECT_EQ(h.push(1, R({row(1, "b2", RowKind::kDelete)})), (Lines{"-D[1, a1]", "-D[1, a2]"}));
  EXPECT_EQ(h.push(0, L({row(1, "a1", RowKind::kDelete)})), Lines{}) << "no match: not forwarded";
  EXPECT_EQ(h.push(1, R({row(1, "b3")})), Lines{"+I[1, a2]"});
  EXPECT_EQ(h.push(0, L({row(1, "a2", RowKind::kUpdateBefore), row(1, "a3", RowKind::kUpdateAfter)})),
            (Lines{"-U[1, a2]", "+U[1, a3]"}));
  EXPECT_EQ(h.push(1, R({row(1, "b3", RowKind::kDelete)})), Lines{"-D[1, a3]"});
}

TEST(SqlSemiJoin, RightUpdatesPassTheirKindsAndNullKeysNeverMatch) {
  JoinHarness h("sql_semi_anti_join", semi_params("semi"));
  EXPECT_EQ(h.push(0, L({row(2, "x"), row(2, "x"), row(Value(), "n")})), Lines{});
  EXPECT_EQ(h.push(1, R({row(2, "y", RowKind::kUpdateAfter), row(Value(), "m")})), (Lines{"+U[2, x]", "+U[2, x]"}));
  EXPECT_EQ(h.push(1, R({row(2, "y", RowKind::kUpdateBefore)})), (Lines{"-U[2, x]", "-U[2, x]"}));
  EXPECT_EQ(h.push(0, L({row(Value(), "n2")})), Lines{});
}

TEST(SqlAntiJoin, EmitsLeftRowsWithoutMatchAndRetractsThemWhenAMatchArrives) {
  JoinHarness h("sql_semi_anti_join", semi_params("anti"));
  EXPECT_EQ(h.push(0, L({row(1, "a1"), row(1, "a1")})), (Lines{"+I[1, a1]", "+I[1, a1]"}));
  EXPECT_EQ(h.push(1, R({row(1, "b1")})), (Lines{"-D[1, a1]", "-D[1, a1]"}));
  EXPECT_EQ(h.push(1, R({row(1, "b2")})), Lines{});
  EXPECT_EQ(h.push(0, L({row(1, "a2")})), Lines{}) << "matched: not forwarded";
  EXPECT_EQ(h.push(1, R({row(1, "b1", RowKind::kDelete)})), Lines{}) << "b2 still matches";
  EXPECT_EQ(h.push(1, R({row(1, "b2", RowKind::kUpdateBefore)})), (Lines{"+I[1, a1]", "+I[1, a1]", "+I[1, a2]"}));
  EXPECT_EQ(h.push(0, L({row(1, "a1", RowKind::kDelete)})), Lines{"-D[1, a1]"});
  EXPECT_EQ(h.push(0, L({row(Value(), "n")})), Lines{"+I[null, n]"}) << "a NULL key never matches";
  EXPECT_EQ(h.push(1, R({row(Value(), "m"), row(1, "b3")})), (Lines{"-D[1, a1]", "-D[1, a2]"}));
}

TEST(SqlAntiJoin, ResidualConditionDecidesTheMatch) {
  // lv <> rv over left ++ right.
  const auto& reg = sql::FunctionRegistry::builtins();
  auto cond = expr::call(reg, "<>", {expr::column(1, LogicalType::string()), expr::column(3, LogicalType::string())});
  JoinHarness h("sql_semi_anti_join", semi_params("anti", cond));
  EXPECT_EQ(h.push(0, L({row(1, "m"), row(1, "c")})), (Lines{"+I[1, m]", "+I[1, c]"}));
  EXPECT_EQ(h.push(1, R({row(1, "m")})), Lines{"-D[1, c]"}) << "m <> m is false";
  EXPECT_EQ(h.push(1, R({row(1, "c")})), Lines{"-D[1, m]"});
  EXPECT_EQ(h.push(1, R({row(1, "m", RowKind::kDelete)})), Lines{"+I[1, c]"}) << "c lost its only match; m keeps c";
}

// x NOT IN (SELECT y ...): no keys, OR(IS NULL(x), IS NULL(y), =(x, y)): a NULL on either
// side matches every row of the other.
TEST(SqlAntiJoin, NotInConditionWithoutKeys) {
  const auto& reg = sql::FunctionRegistry::builtins();
  auto l = expr::column(0, LogicalType::bigint()), r = expr::column(2, LogicalType::bigint());
  auto cond = expr::or_({expr::call(reg, "IS NULL", {l}), expr::call(reg, "IS NULL", {r}), expr::call(reg, "=", {l, r})});
  json p = semi_params("anti", cond);
  p["left_keys"] = json::array();
  p["right_keys"] = json::array();
  JoinHarness h("sql_semi_anti_join", p);
  EXPECT_EQ(h.push(0, L({row(1, "a"), row(Value(), "b"), row(2, "c")})), (Lines{"+I[1, a]", "+I[null, b]", "+I[2, c]"}));
  EXPECT_EQ(h.push(1, R({row(1, "x")})), (Lines{"-D[null, b]", "-D[1, a]"}));
  EXPECT_EQ(h.push(1, R({row(Value(), "y")})), Lines{"-D[2, c]"});
  EXPECT_EQ(h.push(1, R({row(Value(), "y", RowKind::kDelete)})), Lines{"+I[2, c]"});
  EXPECT_EQ(h.push(0, L({row(3, "d")})), Lines{"+I[3, d]"});
}

// table.exec.state.ttl: a row expires `ttl` of processing time after its last write (a
// left row's match count changing is a write); an expired left row is never emitted again,
// an expired right row no longer matches.
TEST(SqlAntiJoin, StateTtlExpiresRowsOfBothSides) {
  ManualClock clock{1000};
  json p = semi_params("anti");
  p["state_ttl_ms"] = 100;
  JoinHarness h("sql_semi_anti_join", p, clock);
  EXPECT_EQ(h.push(0, L({row(1, "a")})), Lines{"+I[1, a]"});
  clock.now = 1050;
  EXPECT_EQ(h.push(1, R({row(1, "b")})), Lines{"-D[1, a]"});
  clock.now = 1150;
  EXPECT_EQ(h.push(1, R({row(1, "b", RowKind::kDelete)})), Lines{}) << "a and b expired at 1050 + 100";
  EXPECT_EQ(h.push(1, R({row(1, "c")})), Lines{});
  clock.now = 1249;
  EXPECT_EQ(h.push(0, L({row(1, "d")})), Lines{}) << "c matches";
  clock.now = 1250;
  EXPECT_EQ(h.push(0, L({row(1, "e")})), Lines{"+I[1, e]"}) << "c expired at 1150 + 100";
}

TEST(SqlSemiAntiJoin, SpecErrorsNameTheProblem) {
  json p = semi_params("inner");
  try {
    JoinHarness h("sql_semi_anti_join", p);
    FAIL() << "expected an error";
  } catch (const ClinkError& e) {
    EXPECT_EQ(std::string(e.what()), "op 'join' (sql_semi_anti_join): param 'join_type' must be semi or anti, got 'inner'");
  }
  p = semi_params("semi");
  p["join_type"] = "semi";
  p["schema"] = schema_json(sql::make_schema({{"k", LogicalType::bigint()}}));
  EXPECT_THROW(JoinHarness("sql_semi_anti_join", p), ClinkError) << "the output must be the left schema";
  p = semi_params("semi");
  EXPECT_THROW(JoinHarness("sql_join", p), ClinkError) << "sql_join takes no semi join";
}

}  // namespace
}  // namespace clink::test
