// ROW field access: `col.field`, `t.col.field`, `(expr).field` bind to FIELD(row, 'name')
// (table.column first, then column.field, as Flink resolves them), FIELD evaluates over a
// batch with the row's NULLs, and the Nexmark views plan.
#include "clink/sql/spec/expr_json.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"
#include "expr_test_util.hpp"
#include "plan_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

LogicalType row_type() {
  return LogicalType::row({{"a", LogicalType::int_type()}, {"b", LogicalType::string()}});
}

}  // namespace

TEST(RowField, EvaluatesOverABatchWithTheRowsNulls) {
  auto schema = make_schema({{"r", row_type()}, {"k", LogicalType::int_type()}});
  ColumnBatch b(schema);
  b.append_row({Value(ValueList{{Value(1), Value("x")}}), 10});
  b.append_row({Value::null(), 20});                                 // a NULL row: every field NULL
  b.append_row({Value(ValueList{{Value::null(), Value("z")}}), 30});  // a NULL field in a row
  auto r = expr::column(0, row_type(), "r");
  auto a = call("FIELD", {r, str("a")});
  auto second = call("FIELD", {r, i32(2)});
  EXPECT_EQ(a->type.to_string(), "INT");
  EXPECT_EQ(second->type.to_string(), "STRING");
  EXPECT_EQ(eval_rows(a, b), (std::vector<std::string>{"1", "NULL", "NULL"}));
  EXPECT_EQ(eval_rows(second, b), (std::vector<std::string>{"x", "NULL", "z"}));
  // Case-insensitive fallback, as for unquoted column names; errors name the field.
  EXPECT_EQ(eval_rows(call("FIELD", {r, str("B")}), b), (std::vector<std::string>{"x", "NULL", "z"}));
  EXPECT_THROW(call("FIELD", {r, str("c")}), SqlTypeError);
  EXPECT_THROW(call("FIELD", {r, i32(3)}), SqlTypeError);
  // The job-spec form reloads to the same call (the operators load it this way).
  auto back = expr_from_json(expr_to_json(*a), *schema);
  EXPECT_EQ(expr_to_json(*back), expr_to_json(*a));
  EXPECT_EQ(eval_rows(back, b), (std::vector<std::string>{"1", "NULL", "NULL"}));
}

TEST(RowField, BinderResolvesTableColumnThenColumnField) {
  PlanFixture f;
  f.ddl("CREATE TABLE nested (r ROW<a INT, b STRING>, k INT) WITH ('connector' = 'datagen');"
        "CREATE TABLE r (a INT) WITH ('connector' = 'datagen')");
  EXPECT_GOLDEN(f.bound("SELECT r.a, nested.r.b, (r).b, r.a + k FROM nested"),
                R"(Calc(select=[FIELD(r, 'a') AS a, FIELD(r, 'b') AS b, FIELD(r, 'b') AS EXPR$2, +(FIELD(r, 'a'), k) AS EXPR$3])
  TableSourceScan(table=[nested], fields=[r, k])
)");
  // `r.a` is table r's column a when a table r is in scope.
  EXPECT_GOLDEN(f.bound("SELECT r.a FROM r"), R"(TableSourceScan(table=[r], fields=[a])
)");
  // A grouped ROW column's fields after the aggregation.
  EXPECT_GOLDEN(f.bound("SELECT r.b, COUNT(*) FROM nested GROUP BY r"), R"(Calc(select=[FIELD(r, 'b') AS b, EXPR$1])
  GroupAggregate(groupBy=[r], select=[r, COUNT(*) AS EXPR$1])
    Calc(select=[r])
      TableSourceScan(table=[nested], fields=[r, k])
)");
  EXPECT_GOLDEN(f.error("SELECT r.x FROM nested"), R"(line 1, column 8: no field 'x' in ROW<`a` INT, `b` STRING>)");
  EXPECT_GOLDEN(f.error("SELECT z.x FROM nested"), R"(line 1, column 8: Table 'z' not found)");
  EXPECT_GOLDEN(f.error("SELECT k.x FROM nested"), R"(line 1, column 8: Cannot apply FIELD to arguments of type FIELD(INT, STRING NOT NULL). Supported signatures:
  FIELD(ROW, STRING name | INT 1-based index), the field a constant)");
}

TEST(RowField, NexmarkBidViewPlans) {
  PlanFixture f;
  f.ddl(R"(CREATE TABLE datagen (
    event_type int,
    person ROW<id BIGINT, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR, city VARCHAR, state VARCHAR,
               dateTime TIMESTAMP(3), extra VARCHAR>,
    auction ROW<id BIGINT, itemName VARCHAR, description VARCHAR, initialBid BIGINT, reserve BIGINT,
                dateTime TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra VARCHAR>,
    bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, dateTime TIMESTAMP(3),
            extra VARCHAR>,
    dateTime AS CASE WHEN event_type = 0 THEN person.dateTime WHEN event_type = 1 THEN auction.dateTime
                ELSE bid.dateTime END,
    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND
  ) WITH ('connector' = 'nexmark', 'events.num' = '100');
  CREATE VIEW bid AS SELECT bid.auction, bid.bidder, bid.price, bid.channel, bid.url, bid.dateTime, bid.extra
    FROM datagen WHERE event_type = 2)");
  EXPECT_GOLDEN(f.optimized("SELECT auction, price FROM bid WHERE price > 100"),
                R"(Calc(select=[FIELD(bid, 'auction') AS auction, FIELD(bid, 'price') AS price], where=[AND(>(FIELD(bid, 'price'), 100), =(event_type, 2))])
  WatermarkAssigner(rowtime=[dateTime], watermark=[-(dateTime, +0 00:00:04.000)])
    Calc(select=[event_type, bid, CASE(=(event_type, 0), FIELD(person, 'dateTime'), =(event_type, 1), FIELD(auction, 'dateTime'), FIELD(bid, 'dateTime')) AS dateTime])
      TableSourceScan(table=[datagen], fields=[event_type, person, auction, bid])
)");
  // The physical plan serialises FIELD for sql_calc (the spec reloads through expr_json).
  f.ddl("CREATE TABLE bids_out (auction BIGINT, price BIGINT) WITH ('connector' = 'blackhole')");
  auto spec = f.spec("INSERT INTO bids_out SELECT auction, price FROM bid");
  std::string calcs;
  for (const auto& op : spec.at("ops")) {
    if (op.at("type") != "sql_calc") continue;
    auto input = schema_from_json(op.at("params").at("input_schemas").at(0), "test");
    for (const auto& p : op.at("params").at("projections")) calcs += expr_from_json(p, *input)->to_string() + "; ";
    calcs += "\n";
  }
  EXPECT_GOLDEN(calcs, R"(event_type; bid; CASE(=(event_type, 0), FIELD(person, 'dateTime'), =(event_type, 1), FIELD(auction, 'dateTime'), FIELD(bid, 'dateTime')); 
FIELD(bid, 'auction'); FIELD(bid, 'price'); 
)");
}

}  // namespace clink::test
