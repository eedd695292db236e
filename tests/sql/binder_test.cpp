// Binder: exact bound plans for Flink's documentation examples (window TVFs, offsets,
// GROUPING SETS, group windows, non-windowed GROUP BY) and the rest of the subset, and
// exact errors with positions.
#include "plan_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

// The tables of Flink's window TVF / aggregation documentation.
struct DocTables : PlanFixture {
  DocTables() {
    ddl(R"(CREATE TABLE Bid (
        bidtime TIMESTAMP(3), price DECIMAL(10, 2), item STRING, supplier_id STRING,
        WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND
      ) WITH ('connector' = 'filesystem', 'path' = '/data/bid.csv', 'format' = 'csv');
      CREATE TABLE Orders (
        order_id BIGINT, `user` STRING, product STRING, amount INT, order_time TIMESTAMP(3),
        WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND
      ) WITH ('connector' = 'datagen');
      CREATE TABLE Sink (a STRING, b BIGINT) WITH ('connector' = 'print'))");
  }
};

}  // namespace

TEST(Binder, TumbleWindowTvfWithoutAggregation) {
  DocTables f;
  EXPECT_GOLDEN(f.bound("SELECT * FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))"), R"(WindowTableFunction(window=[TUMBLE(time_col=[bidtime], size=[10 min])])
  WatermarkAssigner(rowtime=[bidtime], watermark=[-(bidtime, +0 00:00:01.000)])
    TableSourceScan(table=[Bid], fields=[bidtime, price, item, supplier_id])
)");
}

TEST(Binder, TumbleWindowAggregate) {
  DocTables f;
  EXPECT_GOLDEN(f.bound(R"(SELECT window_start, window_end, SUM(price) AS total_price
  FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
  GROUP BY window_start, window_end)"),
                R"(Calc(select=[window_start, window_end, total_price])
  WindowAggregate(groupBy=[], window=[TUMBLE(time_col=[bidtime], size=[10 min])], select=[window_start, window_end, window_time, SUM(price) AS total_price])
    Calc(select=[bidtime, price])
      WatermarkAssigner(rowtime=[bidtime], watermark=[-(bidtime, +0 00:00:01.000)])
        TableSourceScan(table=[Bid], fields=[bidtime, price, item, supplier_id])
)");
}

TEST(Binder, HopWindowAggregate) {
  DocTables f;
  EXPECT_GOLDEN(f.bound(R"(SELECT window_start, window_end, SUM(price) AS total_price
  FROM TABLE(HOP(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES))
  GROUP BY window_start, window_end)"),
                R"(Calc(select=[window_start, window_end, total_price])
  WindowAggregate(groupBy=[], window=[HOP(time_col=[bidtime], size=[10 min], slide=[5 min])], select=[window_start, window_end, window_time, SUM(price) AS total_price])
    Calc(select=[bidtime, price])
      WatermarkAssigner(rowtime=[bidtime], watermark=[-(bidtime, +0 00:00:01.000)])
        TableSourceScan(table=[Bid], fields=[bidtime, price, item, supplier_id])
)");
}

TEST(Binder, CumulateWindowAggregate) {
  DocTables f;
  EXPECT_GOLDEN(f.bound(R"(SELECT window_start, window_end, SUM(price) AS total_price
  FROM TABLE(CUMULATE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '2' MINUTES, INTERVAL '10' MINUTES))
  GROUP BY window_start, window_end)"),
                R"(Calc(select=[window_start, window_end, total_price])
  WindowAggregate(groupBy=[], window=[CUMULATE(time_col=[bidtime], max_size=[10 min], step=[2 min])], select=[window_start, window_end, window_time, SUM(price) AS total_price])
    Calc(select=[bidtime, price])
      WatermarkAssigner(rowtime=[bidtime], watermark=[-(bidtime, +0 00:00:01.000)])
        TableSourceScan(table=[Bid], fields=[bidtime, price, item, supplier_id])
)");
}

TEST(Binder, SessionWindowAggregatePartitionedByItem) {
  DocTables f;
  EXPECT_GOLDEN(f.bound(R"(SELECT window_start, window_end, item, SUM(price) AS total_price
  FROM TABLE(SESSION(TABLE Bid PARTITION BY item, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES))
  GROUP BY item, window_start, window_end)"),
                R"(Calc(select=[window_start, window_end, item, total_price])
  WindowAggregate(groupBy=[item], window=[SESSION(time_col=[bidtime], gap=[5 min])], select=[item, window_start, window_end, window_time, SUM(price) AS total_price])
    Calc(select=[item, bidtime, price])
      WatermarkAssigner(rowtime=[bidtime], watermark=[-(bidtime, +0 00:00:01.000)])
        TableSourceScan(table=[Bid], fields=[bidtime, price, item, supplier_id])
)");
}

TEST(Binder, WindowOffset) {
  DocTables f;
  EXPECT_GOLDEN(f.bound(R"(SELECT window_start, window_end, SUM(price) AS total_price
  FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES, INTERVAL '1' MINUTES))
  GROUP BY window_start, window_end)"),
                R"(Calc(select=[window_start, window_end, total_price])
  WindowAggregate(groupBy=[], window=[TUMBLE(time_col=[bidtime], size=[10 min], offset=[1 min])], select=[window_start, window_end, window_time, SUM(price) AS total_price])
    Calc(select=[bidtime, price])
      WatermarkAssigner(rowtime=[bidtime], watermark=[-(bidtime, +0 00:00:01.000)])
        TableSourceScan(table=[Bid], fields=[bidtime, price, item, supplier_id])
)");
}

TEST(Binder, WindowAggregateWithGroupingSetsRollupAndCube) {
  DocTables f;
  EXPECT_GOLDEN(f.bound(R"(SELECT window_start, window_end, supplier_id, SUM(price) AS total_price
  FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
  GROUP BY window_start, window_end, GROUPING SETS ((supplier_id), ()))"),
                R"(Calc(select=[window_start, window_end, supplier_id, total_price])
  WindowAggregate(groupBy=[supplier_id], groupingSets=[{supplier_id}, {}], window=[TUMBLE(time_col=[bidtime], size=[10 min])], select=[supplier_id, window_start, window_end, window_time, SUM(price) AS total_price])
    Calc(select=[supplier_id, bidtime, price])
      WatermarkAssigner(rowtime=[bidtime], watermark=[-(bidtime, +0 00:00:01.000)])
        TableSourceScan(table=[Bid], fields=[bidtime, price, item, supplier_id])
)");
  EXPECT_GOLDEN(f.bound(R"(SELECT window_start, window_end, supplier_id, SUM(price) AS total_price
  FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
  GROUP BY window_start, window_end, ROLLUP (supplier_id))"),
                R"(Calc(select=[window_start, window_end, supplier_id, total_price])
  WindowAggregate(groupBy=[supplier_id], groupingSets=[{supplier_id}, {}], window=[TUMBLE(time_col=[bidtime], size=[10 min])], select=[supplier_id, window_start, window_end, window_time, SUM(price) AS total_price])
    Calc(select=[supplier_id, bidtime, price])
      WatermarkAssigner(rowtime=[bidtime], watermark=[-(bidtime, +0 00:00:01.000)])
        TableSourceScan(table=[Bid], fields=[bidtime, price, item, supplier_id])
)");
  EXPECT_GOLDEN(f.bound(R"(SELECT window_start, window_end, item, supplier_id, SUM(price) AS total_price
  FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
  GROUP BY window_start, window_end, CUBE (supplier_id, item))"),
                R"(Calc(select=[window_start, window_end, item, supplier_id, total_price])
  WindowAggregate(groupBy=[supplier_id, item], groupingSets=[{supplier_id, item}, {supplier_id}, {item}, {}], window=[TUMBLE(time_col=[bidtime], size=[10 min])], select=[supplier_id, item, window_start, window_end, window_time, SUM(price) AS total_price])
    Calc(select=[supplier_id, item, bidtime, price])
      WatermarkAssigner(rowtime=[bidtime], watermark=[-(bidtime, +0 00:00:01.000)])
        TableSourceScan(table=[Bid], fields=[bidtime, price, item, supplier_id])
)");
}

TEST(Binder, LegacyGroupWindows) {
  DocTables f;
  EXPECT_GOLDEN(f.bound(R"(SELECT `user`,
    TUMBLE_START(order_time, INTERVAL '1' DAY) AS wStart,
    SUM(amount) FROM Orders
  GROUP BY TUMBLE(order_time, INTERVAL '1' DAY), `user`)"),
                R"(Calc(select=[user, window_start AS wStart, EXPR$2])
  WindowAggregate(groupBy=[user], window=[TUMBLE(time_col=[order_time], size=[1 d])], select=[user, window_start, window_end, window_time, SUM(amount) AS EXPR$2])
    Calc(select=[user, order_time, amount])
      WatermarkAssigner(rowtime=[order_time], watermark=[-(order_time, +0 00:00:05.000)])
        TableSourceScan(table=[Orders], fields=[order_id, user, product, amount, order_time])
)");
  EXPECT_GOLDEN(f.bound(R"(SELECT HOP_END(order_time, INTERVAL '1' MINUTE, INTERVAL '5' MINUTE) AS e, COUNT(*) AS c
  FROM Orders GROUP BY HOP(order_time, INTERVAL '1' MINUTE, INTERVAL '5' MINUTE))"),
                R"(Calc(select=[window_end AS e, c])
  WindowAggregate(groupBy=[], window=[HOP(time_col=[order_time], size=[5 min], slide=[1 min])], select=[window_start, window_end, window_time, COUNT(*) AS c])
    Calc(select=[order_time])
      WatermarkAssigner(rowtime=[order_time], watermark=[-(order_time, +0 00:00:05.000)])
        TableSourceScan(table=[Orders], fields=[order_id, user, product, amount, order_time])
)");
  EXPECT_GOLDEN(f.bound(R"(SELECT product, SESSION_ROWTIME(order_time, INTERVAL '10' SECOND) AS rt, MAX(amount) AS m
  FROM Orders GROUP BY SESSION(order_time, INTERVAL '10' SECOND), product)"),
                R"(Calc(select=[product, window_time AS rt, m])
  WindowAggregate(groupBy=[product], window=[SESSION(time_col=[order_time], gap=[10 s])], select=[product, window_start, window_end, window_time, MAX(amount) AS m])
    Calc(select=[product, order_time, amount])
      WatermarkAssigner(rowtime=[order_time], watermark=[-(order_time, +0 00:00:05.000)])
        TableSourceScan(table=[Orders], fields=[order_id, user, product, amount, order_time])
)");
}

TEST(Binder, GroupingSetsOnAnUnboundedAggregate) {
  DocTables f;
  // Flink's GROUPING SETS documentation example.
  EXPECT_GOLDEN(f.bound(R"(SELECT supplier_id, rating, COUNT(*) AS total
  FROM (VALUES
      ('supplier1', 'product1', 4),
      ('supplier1', 'product2', 3),
      ('supplier2', 'product3', 3),
      ('supplier2', 'product4', 4))
  AS Products(supplier_id, product_id, rating)
  GROUP BY GROUPING SETS ((supplier_id, rating), (supplier_id), ()))"),
                R"(GroupAggregate(groupBy=[supplier_id, rating], groupingSets=[{supplier_id, rating}, {supplier_id}, {}], select=[supplier_id, rating, COUNT(*) AS total])
  Calc(select=[supplier_id, rating])
    Calc(select=[EXPR$0 AS supplier_id, EXPR$1 AS product_id, EXPR$2 AS rating])
      Values(tuples=[[{ 'supplier1', 'product1', 4 }, { 'supplier1', 'product2', 3 }, { 'supplier2', 'product3', 3 }, { 'supplier2', 'product4', 4 }]], values=[EXPR$0, EXPR$1, EXPR$2])
)");
  EXPECT_GOLDEN(f.bound("SELECT product, `user`, COUNT(*) AS c FROM Orders GROUP BY CUBE (product, `user`)"), R"(GroupAggregate(groupBy=[product, user], groupingSets=[{product, user}, {product}, {user}, {}], select=[product, user, COUNT(*) AS c])
  Calc(select=[product, user])
    WatermarkAssigner(rowtime=[order_time], watermark=[-(order_time, +0 00:00:05.000)])
      TableSourceScan(table=[Orders], fields=[order_id, user, product, amount, order_time])
)");
}

TEST(Binder, NonWindowedGroupByDistinctAndFilteredAggregates) {
  DocTables f;
  EXPECT_GOLDEN(f.bound("SELECT COUNT(*) FROM Orders GROUP BY order_id"), R"(Calc(select=[EXPR$0])
  GroupAggregate(groupBy=[order_id], select=[order_id, COUNT(*) AS EXPR$0])
    Calc(select=[order_id])
      WatermarkAssigner(rowtime=[order_time], watermark=[-(order_time, +0 00:00:05.000)])
        TableSourceScan(table=[Orders], fields=[order_id, user, product, amount, order_time])
)");
  EXPECT_GOLDEN(f.bound(R"(SELECT product, COUNT(DISTINCT `user`) AS buyers,
    SUM(amount) FILTER (WHERE amount > 10) AS big, AVG(amount + 1) AS a
  FROM Orders GROUP BY product HAVING SUM(amount) > 50)"),
                R"(Calc(select=[product, buyers, big, a], where=[>($a3, 50)])
  GroupAggregate(groupBy=[product], select=[product, COUNT(DISTINCT user) AS buyers, SUM(amount) FILTER $f3 AS big, AVG($f4) AS a, SUM(amount) AS $a3])
    Calc(select=[product, user, amount, >(amount, 10) AS $f3, +(amount, 1) AS $f4])
      WatermarkAssigner(rowtime=[order_time], watermark=[-(order_time, +0 00:00:05.000)])
        TableSourceScan(table=[Orders], fields=[order_id, user, product, amount, order_time])
)");
  EXPECT_GOLDEN(f.bound("SELECT COUNT(*) AS n, MIN(order_time) AS first_time FROM Orders"), R"(GroupAggregate(groupBy=[], select=[COUNT(*) AS n, MIN(order_time) AS first_time])
  Calc(select=[order_time])
    WatermarkAssigner(rowtime=[order_time], watermark=[-(order_time, +0 00:00:05.000)])
      TableSourceScan(table=[Orders], fields=[order_id, user, product, amount, order_time])
)");
}

TEST(Binder, DistinctUnionOrderLimit) {
  DocTables f;
  EXPECT_GOLDEN(f.bound("SELECT DISTINCT product FROM Orders"), R"(GroupAggregate(groupBy=[product], select=[product])
  Calc(select=[product])
    WatermarkAssigner(rowtime=[order_time], watermark=[-(order_time, +0 00:00:05.000)])
      TableSourceScan(table=[Orders], fields=[order_id, user, product, amount, order_time])
)");
  EXPECT_GOLDEN(f.bound("SELECT product, amount FROM Orders UNION ALL SELECT item, 1 FROM Bid"), R"(Union(all=[true], union=[product, amount])
  Calc(select=[product, amount])
    WatermarkAssigner(rowtime=[order_time], watermark=[-(order_time, +0 00:00:05.000)])
      TableSourceScan(table=[Orders], fields=[order_id, user, product, amount, order_time])
  Calc(select=[item AS product, 1 AS amount])
    WatermarkAssigner(rowtime=[bidtime], watermark=[-(bidtime, +0 00:00:01.000)])
      TableSourceScan(table=[Bid], fields=[bidtime, price, item, supplier_id])
)");
  EXPECT_GOLDEN(f.bound("SELECT product, amount FROM Orders ORDER BY amount DESC, 1 LIMIT 10"), R"(SortLimit(orderBy=[amount DESC, product ASC], offset=[0], fetch=[10], strategy=[AppendFastStrategy])
  Calc(select=[product, amount])
    WatermarkAssigner(rowtime=[order_time], watermark=[-(order_time, +0 00:00:05.000)])
      TableSourceScan(table=[Orders], fields=[order_id, user, product, amount, order_time])
)");
  EXPECT_GOLDEN(f.bound("SELECT product FROM Orders LIMIT 5 OFFSET 2"), R"(Limit(offset=[2], fetch=[5])
  Calc(select=[product])
    WatermarkAssigner(rowtime=[order_time], watermark=[-(order_time, +0 00:00:05.000)])
      TableSourceScan(table=[Orders], fields=[order_id, user, product, amount, order_time])
)");
}

TEST(Binder, CtesSubqueriesViewsAndJoins) {
  DocTables f;
  f.ddl("CREATE VIEW big_orders AS SELECT order_id, amount FROM Orders WHERE amount > 100");
  EXPECT_GOLDEN(f.bound(R"(WITH t AS (SELECT product, amount * 2 AS a2 FROM Orders)
  SELECT x.product FROM (SELECT product FROM t WHERE a2 > 4) AS x)"),
                R"(Calc(select=[product], where=[>(a2, 4)])
  Calc(select=[product, *(amount, 2) AS a2])
    WatermarkAssigner(rowtime=[order_time], watermark=[-(order_time, +0 00:00:05.000)])
      TableSourceScan(table=[Orders], fields=[order_id, user, product, amount, order_time])
)");
  EXPECT_GOLDEN(f.bound("SELECT b.order_id, o.product FROM big_orders b JOIN Orders o ON b.order_id = o.order_id"),
                R"(Calc(select=[order_id, product])
  Join(joinType=[InnerJoin], where=[=(order_id, order_id)], select=[order_id, amount, order_id0, user, product, amount0, order_time], leftKeys=[order_id], rightKeys=[order_id])
    Calc(select=[order_id, amount], where=[>(amount, 100)])
      WatermarkAssigner(rowtime=[order_time], watermark=[-(order_time, +0 00:00:05.000)])
        TableSourceScan(table=[Orders], fields=[order_id, user, product, amount, order_time])
    WatermarkAssigner(rowtime=[order_time], watermark=[-(order_time, +0 00:00:05.000)])
      TableSourceScan(table=[Orders], fields=[order_id, user, product, amount, order_time])
)");
  EXPECT_GOLDEN(f.bound("SELECT * FROM big_orders b LEFT JOIN Bid ON b.amount = 3"), R"(Join(joinType=[LeftOuterJoin], where=[=(amount, 3)], select=[order_id, amount, bidtime, price, item, supplier_id], leftKeys=[], rightKeys=[])
  Calc(select=[order_id, amount], where=[>(amount, 100)])
    WatermarkAssigner(rowtime=[order_time], watermark=[-(order_time, +0 00:00:05.000)])
      TableSourceScan(table=[Orders], fields=[order_id, user, product, amount, order_time])
  WatermarkAssigner(rowtime=[bidtime], watermark=[-(bidtime, +0 00:00:01.000)])
    TableSourceScan(table=[Bid], fields=[bidtime, price, item, supplier_id])
)");
}

TEST(Binder, InsertCastsAndChecksTheSinkColumns) {
  DocTables f;
  EXPECT_GOLDEN(f.bound("INSERT INTO Sink SELECT product, amount FROM Orders"), R"(Sink(table=[Sink], fields=[a, b])
  Calc(select=[product AS a, CAST(amount AS BIGINT) AS b])
    Calc(select=[product, amount])
      WatermarkAssigner(rowtime=[order_time], watermark=[-(order_time, +0 00:00:05.000)])
        TableSourceScan(table=[Orders], fields=[order_id, user, product, amount, order_time])
)");
  EXPECT_GOLDEN(f.bound("INSERT INTO Sink (b, a) SELECT order_id, product FROM Orders"), R"(Sink(table=[Sink], fields=[a, b])
  Calc(select=[product AS a, order_id AS b])
    Calc(select=[order_id, product])
      WatermarkAssigner(rowtime=[order_time], watermark=[-(order_time, +0 00:00:05.000)])
        TableSourceScan(table=[Orders], fields=[order_id, user, product, amount, order_time])
)");
  EXPECT_GOLDEN(f.bound("INSERT INTO Sink (a) SELECT product FROM Orders"), R"(Sink(table=[Sink], fields=[a, b])
  Calc(select=[product AS a, null AS b])
    Calc(select=[product])
      WatermarkAssigner(rowtime=[order_time], watermark=[-(order_time, +0 00:00:05.000)])
        TableSourceScan(table=[Orders], fields=[order_id, user, product, amount, order_time])
)");
  EXPECT_GOLDEN(f.error("INSERT INTO Sink SELECT amount, product FROM Orders"), R"(line 1, column 18: INSERT INTO Sink: incompatible types for sink column `a` at position 0: the query produces INT, the sink takes STRING)");
  EXPECT_GOLDEN(f.error("INSERT INTO Sink SELECT product FROM Orders"), R"(line 1, column 18: INSERT INTO Sink: the query has 1 columns but the sink has 2: (`a` STRING, `b` BIGINT))");
  EXPECT_GOLDEN(f.error("INSERT INTO Sink (a, c) SELECT product, amount FROM Orders"), R"(line 1, column 1: INSERT INTO Sink: unknown target column `c`)");
}

TEST(Binder, NameResolutionErrorsHavePositions) {
  DocTables f;
  EXPECT_GOLDEN(f.error("SELECT a FROM missing"), R"(line 1, column 15: Object 'missing' not found)");
  EXPECT_GOLDEN(f.error("SELECT nope FROM Orders"), R"(line 1, column 8: Column 'nope' not found in any table)");
  EXPECT_GOLDEN(f.error("SELECT o.nope FROM Orders o"), R"(line 1, column 8: Column 'o.nope' not found in any table)");
  EXPECT_GOLDEN(f.error("SELECT z.product FROM Orders o"), R"(line 1, column 8: Table 'z' not found)");
  EXPECT_GOLDEN(f.error("SELECT order_id FROM Orders a JOIN Orders b ON a.order_id = b.order_id"), R"(line 1, column 8: Column 'order_id' is ambiguous)");
  EXPECT_GOLDEN(f.error("SELECT product, amount FROM Orders GROUP BY product"), R"(line 1, column 17: Expression 'amount' is not being grouped)");
  EXPECT_GOLDEN(f.error("SELECT no_such_fn(amount) FROM Orders"), R"(line 1, column 8: No such function: NO_SUCH_FN)");
  EXPECT_GOLDEN(f.error("SELECT product FROM Orders WHERE product + 1 > 2"), R"(line 1, column 34: Cannot apply + to arguments of type +(STRING, INT NOT NULL). Supported signatures:
  +(NUMERIC, NUMERIC)
  +(NUMERIC)
  +(TEMPORAL, INTERVAL))");
  EXPECT_GOLDEN(f.error("SELECT product FROM Orders WHERE amount"), R"(line 1, column 34: WHERE needs a BOOLEAN condition, got INT)");
  EXPECT_GOLDEN(f.error("SELECT product FROM Orders WHERE COUNT(*) > 1"), R"(line 1, column 34: aggregate functions are not allowed in WHERE)");
}

TEST(Binder, OutsideTheSubsetIsRejectedWithAPosition) {
  DocTables f;
  EXPECT_GOLDEN(f.error("SELECT product FROM Orders GROUP BY product, (SELECT 1)"), R"(line 1, column 46: subqueries are not supported in GROUP BY (only in SELECT, WHERE, HAVING and JOIN ON))");
  EXPECT_GOLDEN(f.error("SELECT SUM(amount) OVER (PARTITION BY product) FROM Orders"), R"(line 1, column 8: The window can only be ordered by a single time column.)");
  EXPECT_GOLDEN(f.error("SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), "
                        "INTERVAL '10' MINUTES)) GROUP BY window_start"),
                R"(line 1, column 114: a window aggregate must GROUP BY both window_start and window_end)");
  EXPECT_GOLDEN(f.error("SELECT * FROM TABLE(HOP(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '3' MINUTES, "
                        "INTERVAL '10' MINUTES))"),
                R"(line 1, column 79: HOP size must be an integral multiple of the slide)");
  EXPECT_GOLDEN(f.error("SELECT * FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(item), INTERVAL '10' MINUTES))"), R"(line 1, column 39: the window time column `item` must be TIMESTAMP(3) or TIMESTAMP_LTZ(3), got STRING)");
  EXPECT_GOLDEN(f.error("SELECT * FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '1' MONTH))"), R"(line 1, column 60: the window size must be a day-time interval (YEAR/MONTH intervals vary in length))");
  EXPECT_GOLDEN(f.error("SELECT TUMBLE_START(order_time, INTERVAL '1' DAY) FROM Orders"), R"(line 1, column 8: TUMBLE_START needs a GROUP BY TUMBLE(...) group window)");
  f.ddl("CREATE TABLE nested (r ROW<a INT, b STRING>) WITH ('connector' = 'datagen')");
  EXPECT_GOLDEN(f.error("SELECT r.x FROM nested"), R"(line 1, column 8: no field 'x' in ROW<`a` INT, `b` STRING>)");
  EXPECT_GOLDEN(f.error("SELECT * FROM Orders NATURAL JOIN Bid"), R"(line 1, column 15: NATURAL and USING joins are not supported (write the ON condition))");
}

}  // namespace clink::test
