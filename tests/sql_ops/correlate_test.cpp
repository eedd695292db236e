// sql_correlate (UNNEST): arrays, arrays of rows, maps, ordinality, NULL and empty
// collections under INNER and LEFT, row kinds and event times following their input rows,
// watermarks passing through, batches larger than a validity word, and param errors; user
// table functions (table_function.hpp) through the same operator; REPLICATE_ROWS (INTERSECT
// ALL / EXCEPT ALL).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../support/example_udtfs.hpp"
#include "clink/core/error.hpp"
#include "clink/sql/planner/logical_plan.hpp"
#include "clink/sql/spec/expr_json.hpp"
#include "sql_ops_test_support.hpp"

namespace clink::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using sql::RowField;
using sql::ValueList;
namespace ex = sql::expr;

const LogicalType kPoint = LogicalType::row({{"name", LogicalType::string()}, {"qty", LogicalType::int_type()}});

SchemaPtr input() {
  return sql::make_schema({{"id", LogicalType::int_type()},
                           {"tags", LogicalType::array(LogicalType::string())},
                           {"items", LogicalType::array(kPoint)},
                           {"attrs", LogicalType::map(LogicalType::string(), LogicalType::int_type())}});
}

json params(std::size_t arg, bool left, bool ordinality) {
  const SchemaPtr in = input();
  std::vector<RowField> fields = in->fields();
  for (auto& f : sql::unnest_fields(in->type(arg), ordinality, left)) fields.push_back(f);
  json p = {{"input_schemas", json::array({schema_json(in)})},
            {"schema", schema_json(sql::make_schema(fields))},
            {"function", "UNNEST"},
            {"args", json::array({sql::expr_to_json(*ex::column(arg, in->type(arg), in->name(arg)))})},
            {"with_ordinality", ordinality},
            {"join_type", left ? "LEFT" : "INNER"}};
  return p;
}

Value list(std::vector<Value> v) { return Value(ValueList{std::move(v)}); }

// id 1: two elements (+I, t=10); id 2: empty (-U, t=11); id 3: NULL collections (+U, t=12);
// id 4: one element, a NULL row among the items (-D, t=13).
ColumnBatch rows() {
  return batch(input(), {
      Row{{1, list({"a", "b"}), list({list({"x", 2}), list({"y", 1})}), list({"k", 7, "m", 8})}, RowKind::kInsert, 10},
      Row{{2, list({}), list({}), list({})}, RowKind::kUpdateBefore, 11},
      Row{{3, Value(), Value(), Value()}, RowKind::kUpdateAfter, 12},
      Row{{4, list({Value()}), list({Value(), list({"z", 5})}), list({"n", Value()})}, RowKind::kDelete, 13},
  });
}

TEST(SqlCorrelate, InnerUnnestOfAnArrayKeepsKindsAndTimes) {
  OpHarness h("sql_correlate", params(1, false, false));
  h.push(rows());
  h.watermark(100);
  EXPECT_THAT(h.lines, ElementsAre("+I[1, [a, b], [+I[x, 2], +I[y, 1]], {k=7, m=8}, a]",
                                   "+I[1, [a, b], [+I[x, 2], +I[y, 1]], {k=7, m=8}, b]",
                                   "-D[4, [null], [null, +I[z, 5]], {n=null}, null]", "WM 100"));
  EXPECT_THAT(h.times, ElementsAre(10, 10, 13));
}

TEST(SqlCorrelate, LeftUnnestPadsNullAndEmptyWithOrdinality) {
  OpHarness h("sql_correlate", params(1, true, true));
  h.push(rows());
  EXPECT_THAT(h.lines, ElementsAre("+I[1, [a, b], [+I[x, 2], +I[y, 1]], {k=7, m=8}, a, 1]",
                                   "+I[1, [a, b], [+I[x, 2], +I[y, 1]], {k=7, m=8}, b, 2]",
                                   "-U[2, [], [], {}, null, null]", "+U[3, null, null, null, null, null]",
                                   "-D[4, [null], [null, +I[z, 5]], {n=null}, null, 1]"));
  EXPECT_THAT(h.times, ElementsAre(10, 10, 11, 12, 13));
}

TEST(SqlCorrelate, ArrayOfRowsExpandsToFieldsAndANullRowToNullFields) {
  OpHarness h("sql_correlate", params(2, false, true));
  h.push(rows());
  EXPECT_THAT(h.lines, ElementsAre("+I[1, [a, b], [+I[x, 2], +I[y, 1]], {k=7, m=8}, x, 2, 1]",
                                   "+I[1, [a, b], [+I[x, 2], +I[y, 1]], {k=7, m=8}, y, 1, 2]",
                                   "-D[4, [null], [null, +I[z, 5]], {n=null}, null, null, 1]",
                                   "-D[4, [null], [null, +I[z, 5]], {n=null}, z, 5, 2]"));
}

TEST(SqlCorrelate, MapGivesKeyAndValueColumns) {
  OpHarness h("sql_correlate", params(3, true, false));
  h.push(rows());
  EXPECT_THAT(h.lines, ElementsAre("+I[1, [a, b], [+I[x, 2], +I[y, 1]], {k=7, m=8}, k, 7]",
                                   "+I[1, [a, b], [+I[x, 2], +I[y, 1]], {k=7, m=8}, m, 8]",
                                   "-U[2, [], [], {}, null, null]", "+U[3, null, null, null, null, null]",
                                   "-D[4, [null], [null, +I[z, 5]], {n=null}, n, null]"));
}

// 300 input rows of i % 3 elements (0, 1, 2): 300 output rows crossing validity words,
// the padded rows (LEFT) in between the gathered runs.
TEST(SqlCorrelate, LargeBatchGathersRunsAcrossValidityWords) {
  std::vector<Row> in;
  for (int i = 0; i < 300; ++i) {
    std::vector<Value> tags;
    for (int k = 0; k < i % 3; ++k) tags.push_back(Value(std::to_string(i) + "." + std::to_string(k)));
    in.push_back(Row{{i, list(tags), Value(), Value()}, RowKind::kInsert, i});
  }
  OpHarness h("sql_correlate", params(1, true, true));
  h.push(batch(input(), in));
  ASSERT_EQ(h.lines.size(), 400u);  // 100 padded + 100 * 1 + 100 * 2
  EXPECT_EQ(h.lines[0], "+I[0, [], null, null, null, null]");
  EXPECT_EQ(h.lines[1], "+I[1, [1.0], null, null, 1.0, 1]");
  EXPECT_EQ(h.lines[3], "+I[2, [2.0, 2.1], null, null, 2.1, 2]");
  EXPECT_EQ(h.lines[399], "+I[299, [299.0, 299.1], null, null, 299.1, 2]");
  EXPECT_EQ(h.lines[396], "+I[297, [], null, null, null, null]");
  EXPECT_EQ(h.times[399], 299);
}

TEST(SqlCorrelate, ParamErrorsNameTheProblem) {
  json p = params(0, false, false);
  p["schema"] = schema_json(input());
  try {
    OpHarness h("sql_correlate", p);
    FAIL();
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), HasSubstr("param 'args'[0] is INT: UNNEST needs an ARRAY or MAP"));
  }
  p = params(1, false, false);
  p["schema"] = schema_json(input());
  try {
    OpHarness h("sql_correlate", p);
    FAIL();
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), HasSubstr("param 'schema' has 4 fields, the input's 4 and UNNEST's 1 make 5"));
  }
  p = params(1, false, false);
  p["join_type"] = "FULL";
  try {
    OpHarness h("sql_correlate", p);
    FAIL();
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), HasSubstr("param 'join_type' must be INNER or LEFT, got 'FULL'"));
  }
}

// REPLICATE_ROWS(n, v): v n times per row, the row's kind and time on every copy.
SchemaPtr counted_input() { return sql::make_schema({{"n", LogicalType::bigint()}, {"v", LogicalType::string()}}); }

json replicate_params() {
  const SchemaPtr in = counted_input();
  std::vector<RowField> fields = in->fields();
  fields.push_back({"v0", LogicalType::string()});
  return {{"input_schemas", json::array({schema_json(in)})},
          {"schema", schema_json(sql::make_schema(fields))},
          {"function", "REPLICATE_ROWS"},
          {"args", json::array({sql::expr_to_json(*ex::column(0, LogicalType::bigint(), "n")),
                                sql::expr_to_json(*ex::column(1, LogicalType::string(), "v"))})}};
}

TEST(SqlCorrelate, ReplicateRowsCopiesEachRowItsCountTimes) {
  OpHarness h("sql_correlate", replicate_params());
  h.push(batch(counted_input(), {Row{{3, "a"}, RowKind::kInsert, 10}, Row{{0, "zero"}, RowKind::kInsert, 11},
                                 Row{{Value(), "null"}, RowKind::kInsert, 12}, Row{{-2, "neg"}, RowKind::kInsert, 13},
                                 Row{{2, Value()}, RowKind::kUpdateBefore, 14}, Row{{1, "b"}, RowKind::kDelete, 15}}));
  EXPECT_THAT(h.lines, ElementsAre("+I[3, a, a]", "+I[3, a, a]", "+I[3, a, a]", "-U[2, null, null]", "-U[2, null, null]",
                                   "-D[1, b, b]"));
  EXPECT_THAT(h.times, ElementsAre(10, 10, 10, 14, 14, 15));
  h.push(batch(counted_input(), {Row{{0, "none"}}}));
  EXPECT_EQ(h.lines.size(), 6u) << "a batch of no copies emits nothing";
}

TEST(SqlCorrelate, ReplicateRowsParamErrors) {
  json p = replicate_params();
  p["args"] = json::array({p["args"][1], p["args"][1]});
  EXPECT_THROW(
      {
        try {
          OpHarness h("sql_correlate", p);
        } catch (const ClinkError& e) {
          EXPECT_THAT(e.what(), HasSubstr("param 'args'[0] is STRING, REPLICATE_ROWS' count must be BIGINT"));
          throw;
        }
      },
      ClinkError);
  p = replicate_params();
  p["join_type"] = "LEFT";
  EXPECT_THROW(
      {
        try {
          OpHarness h("sql_correlate", p);
        } catch (const ClinkError& e) {
          EXPECT_THAT(e.what(), HasSubstr("param 'join_type' must be INNER for REPLICATE_ROWS"));
          throw;
        }
      },
      ClinkError);
}

SchemaPtr text_input() { return sql::make_schema({{"id", LogicalType::int_type()}, {"txt", LogicalType::string()}}); }

json udtf_params(const std::string& function, bool left) {
  const SchemaPtr in = text_input();
  std::vector<RowField> fields = in->fields();
  fields.push_back({"word", LogicalType::string()});
  fields.push_back({"len", LogicalType::int_type()});
  return {{"input_schemas", json::array({schema_json(in)})},
          {"schema", schema_json(sql::make_schema(fields))},
          {"function", function},
          {"args", json::array({sql::expr_to_json(*ex::column(1, LogicalType::string(), "txt")),
                                sql::expr_to_json(*ex::literal(Value(","), LogicalType::string().not_null()))})},
          {"join_type", left ? "LEFT" : "INNER"}};
}

TEST(SqlCorrelate, UserTableFunctionRowsFollowTheirInputRow) {
  register_example_udtfs();
  OpHarness h("sql_correlate", udtf_params("SPLIT_WORDS", true));
  h.push(batch(text_input(), {Row{{1, "ab,c"}, RowKind::kInsert, 5}, Row{{2, Value()}, RowKind::kUpdateBefore, 6},
                              Row{{3, ",,"}, RowKind::kUpdateAfter, 7}, Row{{4, "xyz"}, RowKind::kDelete, 8}}));
  EXPECT_THAT(h.lines, ElementsAre("+I[1, ab,c, ab, 2]", "+I[1, ab,c, c, 1]", "-U[2, null, null, null]",
                                   "+U[3, ,,, null, null]", "-D[4, xyz, xyz, 3]"));
  EXPECT_THAT(h.times, ElementsAre(5, 5, 6, 7, 8));
}

// A function writing past its row or into a column of another type fails the job,
// naming the operator, rather than corrupting columns.
TEST(SqlCorrelate, UserTableFunctionMisuseIsAnError) {
  sql::TableFunctionDef bad;
  bad.params = {LogicalType::string(), LogicalType::string()};
  bad.columns = {{"word", LogicalType::string()}, {"len", LogicalType::int_type()}};
  bad.eval = [](const sql::TableFunctionArgs&, sql::TableFunctionOutput& out) {
    out.add_row();
    out.set_bigint(1, 7);
  };
  sql::TableFunctionRegistry::process().add("bad_kind", bad);
  bad.eval = [](const sql::TableFunctionArgs&, sql::TableFunctionOutput& out) {
    out.add_row();
    out.set_string(0, "a");
    out.set_string(0, "b");
  };
  sql::TableFunctionRegistry::process().add("bad_twice", bad);
  auto run = [](const std::string& f) -> std::string {
    OpHarness h("sql_correlate", udtf_params(f, false));
    try {
      h.push(batch(text_input(), {Row{{1, "x"}}}));
    } catch (const ClinkError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_THAT(run("BAD_KIND"), HasSubstr("op 'op' (sql_correlate): table function BAD_KIND: a table function wrote a BIGINT into column 1, which is INT"));
  EXPECT_THAT(run("BAD_TWICE"), HasSubstr("op 'op' (sql_correlate): table function BAD_TWICE: a table function set column 0 twice in one row"));
  try {
    OpHarness h("sql_correlate", udtf_params("NOPE", false));
    FAIL();
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), HasSubstr("param 'function': no table function 'NOPE' is registered in this process"));
  }
}

}  // namespace
}  // namespace clink::test
