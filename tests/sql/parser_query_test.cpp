// Queries: SELECT clauses, joins, set operations, window table functions (Flink's
// documentation examples verbatim), group windows and GROUPING SETS.
#include "parser_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

void check_all(std::initializer_list<Case> cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.sql);
    EXPECT_EQ(dump(c.sql), c.expected);
  }
}

// UNNEST and LATERAL TABLE in FROM: the call, WITH ORDINALITY and the alias with its
// column names, as written.
TEST(ParserQuery, TableFunctionsInFrom) {
  check_all({
      {"SELECT * FROM t CROSS JOIN UNNEST(t.arr) AS x (v)", "SELECT * FROM (t CROSS JOIN UNNEST(t.arr) AS x(v))"},
      {"SELECT * FROM t, UNNEST(arr) WITH ORDINALITY AS x(Val, Pos)",
       "SELECT * FROM t, UNNEST(arr) WITH ORDINALITY AS x(Val, Pos)"},
      {"SELECT * FROM t LEFT JOIN UNNEST(m) AS u(k, v) ON TRUE",
       "SELECT * FROM (t LEFT JOIN UNNEST(m) AS u(k, v) ON TRUE)"},
      {"SELECT * FROM UNNEST(ARRAY[1, 2])", "SELECT * FROM UNNEST(ARRAY[1, 2])"},
      {"SELECT s, w FROM t, LATERAL TABLE(Split(s, ' ')) AS T(w)",
       "SELECT s, w FROM t, LATERAL TABLE(Split(s, ' ')) AS T(w)"},
      {"SELECT * FROM t JOIN LATERAL TABLE(f(a)) AS T(x, y) ON TRUE",
       "SELECT * FROM (t JOIN LATERAL TABLE(f(a)) AS T(x, y) ON TRUE)"},
  });
}

TEST(ParserQuery, SelectClauses) {
  check_all({
      {"SELECT 1", "SELECT 1"},
      {"SELECT a, b AS c, d e FROM t", "SELECT a, b AS c, d AS e FROM t"},
      {"SELECT DISTINCT a FROM t", "SELECT DISTINCT a FROM t"},
      {"SELECT * FROM t", "SELECT * FROM t"},
      {"SELECT t.*, u.x FROM t, u", "SELECT t.*, u.x FROM t, u"},
      {"SELECT a FROM t AS x", "SELECT a FROM t AS x"},
      {"SELECT a FROM t x", "SELECT a FROM t AS x"},
      {"SELECT a FROM cat.db.Orders", "SELECT a FROM cat.db.Orders"},
      {"SELECT a FROM `My Table`", "SELECT a FROM `My Table`"},
      {"SELECT a FROM t WHERE a > 1 AND b IS NOT NULL", "SELECT a FROM t WHERE ((a > 1) AND (b IS NOT NULL))"},
      {"SELECT a, COUNT(*) FROM t GROUP BY a HAVING COUNT(*) > 1",
       "SELECT a, COUNT(*) FROM t GROUP BY a HAVING (COUNT(*) > 1)"},
      {"SELECT a FROM t ORDER BY a", "SELECT a FROM t ORDER BY a"},
      {"SELECT a FROM t ORDER BY a DESC, b ASC NULLS FIRST, c DESC NULLS LAST",
       "SELECT a FROM t ORDER BY a DESC, b NULLS FIRST, c DESC NULLS LAST"},
      {"SELECT a FROM t LIMIT 10", "SELECT a FROM t LIMIT 10"},
      {"SELECT a FROM t LIMIT 10 OFFSET 5", "SELECT a FROM t LIMIT 10 OFFSET 5"},
      {"SELECT a FROM t ORDER BY a FETCH FIRST 3 ROWS ONLY", "SELECT a FROM t ORDER BY a LIMIT 3"},
      {"SELECT a FROM t OFFSET 5 ROWS FETCH NEXT 3 ROWS ONLY", "SELECT a FROM t LIMIT 3 OFFSET 5"},
      {"SELECT a FROM t LIMIT ALL", "SELECT a FROM t"},
      {"SELECT a FROM (SELECT a FROM t) AS s", "SELECT a FROM (SELECT a FROM t) AS s"},
      {"SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS v(id, name)",
       "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS v(id, name)"},
      {"VALUES (1, 'a'), (2, 'b')", "VALUES (1, 'a'), (2, 'b')"},
      {"(SELECT a FROM t)", "SELECT a FROM t"},
      {"SELECT a FROM t WHERE a IN (SELECT b FROM u)", "SELECT a FROM t WHERE (a IN (SELECT b FROM u))"},
  });
}

TEST(ParserQuery, With) {
  check_all({
      {"WITH c AS (SELECT 1 AS x) SELECT x FROM c", "WITH c AS (SELECT 1 AS x) SELECT x FROM c"},
      {"WITH c (x, y) AS (SELECT 1, 2), d AS (SELECT * FROM c) SELECT * FROM d",
       "WITH c (x, y) AS (SELECT 1, 2), d AS (SELECT * FROM c) SELECT * FROM d"},
  });
}

TEST(ParserQuery, Joins) {
  check_all({
      {"SELECT * FROM a JOIN b ON a.id = b.id", "SELECT * FROM (a JOIN b ON (a.id = b.id))"},
      {"SELECT * FROM a INNER JOIN b ON a.id = b.id", "SELECT * FROM (a JOIN b ON (a.id = b.id))"},
      {"SELECT * FROM a LEFT JOIN b ON a.id = b.id", "SELECT * FROM (a LEFT JOIN b ON (a.id = b.id))"},
      {"SELECT * FROM a LEFT OUTER JOIN b ON a.id = b.id", "SELECT * FROM (a LEFT JOIN b ON (a.id = b.id))"},
      {"SELECT * FROM a RIGHT JOIN b ON TRUE", "SELECT * FROM (a RIGHT JOIN b ON TRUE)"},
      {"SELECT * FROM a FULL OUTER JOIN b ON a.x = b.x", "SELECT * FROM (a FULL JOIN b ON (a.x = b.x))"},
      {"SELECT * FROM a CROSS JOIN b", "SELECT * FROM (a CROSS JOIN b)"},
      {"SELECT * FROM a JOIN b USING (id, k)", "SELECT * FROM (a JOIN b USING (id, k))"},
      {"SELECT * FROM a NATURAL JOIN b", "SELECT * FROM (a NATURAL JOIN b)"},
      {"SELECT * FROM a x JOIN b y ON x.i = y.i LEFT JOIN c z ON y.j = z.j",
       "SELECT * FROM ((a AS x JOIN b AS y ON (x.i = y.i)) LEFT JOIN c AS z ON (y.j = z.j))"},
      {"SELECT * FROM a, b WHERE a.id = b.id", "SELECT * FROM a, b WHERE (a.id = b.id)"},
      {"SELECT * FROM Orders o, Shipments s WHERE o.id = s.order_id AND o.order_time BETWEEN s.ship_time - INTERVAL '4' HOUR AND s.ship_time",
       "SELECT * FROM Orders AS o, Shipments AS s WHERE ((o.id = s.order_id) AND (o.order_time BETWEEN (s.ship_time - "
       "INTERVAL '4' HOUR) AND s.ship_time))"},
  });
  auto script = parse("SELECT * FROM a LEFT JOIN b ON a.x = b.x");
  const auto* q = script.statements[0].as<ast::QueryStatement>();
  const auto& sel = std::get<ast::Select>(q->query->body);
  const auto* join = std::get_if<ast::Join>(&sel.from.at(0)->node);
  ASSERT_NE(join, nullptr);
  EXPECT_EQ(join->type, ast::Join::Type::Left);
  EXPECT_EQ(ast::to_string(join->on), "(a.x = b.x)");
}

TEST(ParserQuery, SetOperations) {
  check_all({
      {"SELECT a FROM t UNION SELECT a FROM u", "(SELECT a FROM t) UNION (SELECT a FROM u)"},
      {"SELECT a FROM t UNION ALL SELECT a FROM u", "(SELECT a FROM t) UNION ALL (SELECT a FROM u)"},
      {"SELECT a FROM t INTERSECT SELECT a FROM u", "(SELECT a FROM t) INTERSECT (SELECT a FROM u)"},
      {"SELECT a FROM t INTERSECT ALL SELECT a FROM u", "(SELECT a FROM t) INTERSECT ALL (SELECT a FROM u)"},
      {"SELECT a FROM t EXCEPT SELECT a FROM u", "(SELECT a FROM t) EXCEPT (SELECT a FROM u)"},
      {"SELECT 1 UNION ALL SELECT 2 EXCEPT SELECT 3 ORDER BY 1 LIMIT 5",
       "((SELECT 1) UNION ALL (SELECT 2)) EXCEPT (SELECT 3) ORDER BY 1 LIMIT 5"},
      {"SELECT 1 INTERSECT (SELECT 2 UNION SELECT 3)", "(SELECT 1) INTERSECT ((SELECT 2) UNION (SELECT 3))"},
  });
}

TEST(ParserQuery, FlinkDocsTumble) {
  check_all({
      {R"(SELECT * FROM TABLE(
   TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES));)",
       "SELECT * FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTE))"},
      {R"(SELECT * FROM TABLE(
   TUMBLE(
     DATA => TABLE Bid,
     TIMECOL => DESCRIPTOR(bidtime),
     SIZE => INTERVAL '10' MINUTES));)",
       "SELECT * FROM TABLE(TUMBLE(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), SIZE => INTERVAL '10' MINUTE))"},
      {R"(SELECT window_start, window_end, SUM(price)
  FROM TABLE(
    TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
  GROUP BY window_start, window_end;)",
       "SELECT window_start, window_end, SUM(price) FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' "
       "MINUTE)) GROUP BY window_start, window_end"},
  });
}

TEST(ParserQuery, FlinkDocsHopAndCumulate) {
  check_all({
      {R"(SELECT * FROM TABLE(
    HOP(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES));)",
       "SELECT * FROM TABLE(HOP(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTE, INTERVAL '10' MINUTE))"},
      {R"(SELECT * FROM TABLE(
    HOP(
      DATA => TABLE Bid,
      TIMECOL => DESCRIPTOR(bidtime),
      SLIDE => INTERVAL '5' MINUTES,
      SIZE => INTERVAL '10' MINUTES));)",
       "SELECT * FROM TABLE(HOP(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), SLIDE => INTERVAL '5' MINUTE, "
       "SIZE => INTERVAL '10' MINUTE))"},
      {R"(SELECT window_start, window_end, SUM(price)
  FROM TABLE(
    HOP(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES))
  GROUP BY window_start, window_end;)",
       "SELECT window_start, window_end, SUM(price) FROM TABLE(HOP(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' "
       "MINUTE, INTERVAL '10' MINUTE)) GROUP BY window_start, window_end"},
      {R"(SELECT * FROM TABLE(
    CUMULATE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '2' MINUTES, INTERVAL '10' MINUTES));)",
       "SELECT * FROM TABLE(CUMULATE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '2' MINUTE, INTERVAL '10' MINUTE))"},
      {R"(SELECT * FROM TABLE(
    CUMULATE(
      DATA => TABLE Bid,
      TIMECOL => DESCRIPTOR(bidtime),
      STEP => INTERVAL '2' MINUTES,
      SIZE => INTERVAL '10' MINUTES));)",
       "SELECT * FROM TABLE(CUMULATE(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), STEP => INTERVAL '2' MINUTE, "
       "SIZE => INTERVAL '10' MINUTE))"},
      {R"(SELECT window_start, window_end, SUM(price)
  FROM TABLE(
    CUMULATE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '2' MINUTES, INTERVAL '10' MINUTES))
  GROUP BY window_start, window_end;)",
       "SELECT window_start, window_end, SUM(price) FROM TABLE(CUMULATE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '2' "
       "MINUTE, INTERVAL '10' MINUTE)) GROUP BY window_start, window_end"},
  });
}

TEST(ParserQuery, FlinkDocsWindowOffset) {
  check_all({
      {R"(SELECT * FROM TABLE(
   TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES, INTERVAL '1' MINUTES));)",
       "SELECT * FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTE, INTERVAL '1' MINUTE))"},
      {R"(SELECT * FROM TABLE(
   TUMBLE(
     DATA => TABLE Bid,
     TIMECOL => DESCRIPTOR(bidtime),
     SIZE => INTERVAL '10' MINUTES,
     OFFSET => INTERVAL '1' MINUTES));)",
       "SELECT * FROM TABLE(TUMBLE(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), SIZE => INTERVAL '10' MINUTE, "
       "OFFSET => INTERVAL '1' MINUTE))"},
      {R"(SELECT window_start, window_end, SUM(price)
  FROM TABLE(
    TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES, INTERVAL '1' MINUTES))
  GROUP BY window_start, window_end;)",
       "SELECT window_start, window_end, SUM(price) FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' "
       "MINUTE, INTERVAL '1' MINUTE)) GROUP BY window_start, window_end"},
  });
}

TEST(ParserQuery, SessionWindows) {
  check_all({
      {"SELECT * FROM TABLE(SESSION(TABLE Bid PARTITION BY item, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES))",
       "SELECT * FROM TABLE(SESSION(TABLE Bid PARTITION BY (item), DESCRIPTOR(bidtime), INTERVAL '5' MINUTE))"},
      {"SELECT * FROM TABLE(SESSION(TABLE Bid PARTITION BY (item, price), DESCRIPTOR(bidtime), INTERVAL '5' MINUTES))",
       "SELECT * FROM TABLE(SESSION(TABLE Bid PARTITION BY (item, price), DESCRIPTOR(bidtime), INTERVAL '5' MINUTE))"},
      {"SELECT * FROM TABLE(SESSION(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES))",
       "SELECT * FROM TABLE(SESSION(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTE))"},
      {R"(SELECT window_start, window_end, item, SUM(price) AS total_price
  FROM TABLE(
      SESSION(TABLE Bid PARTITION BY item, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES))
  GROUP BY item, window_start, window_end;)",
       "SELECT window_start, window_end, item, SUM(price) AS total_price FROM TABLE(SESSION(TABLE Bid PARTITION BY "
       "(item), DESCRIPTOR(bidtime), INTERVAL '5' MINUTE)) GROUP BY item, window_start, window_end"},
  });
}

TEST(ParserQuery, WindowTvfStructure) {
  auto script = parse("SELECT * FROM TABLE(\n  HOP(DATA => TABLE db.Bid, TIMECOL => DESCRIPTOR(ts), SLIDE => INTERVAL '5' SECOND,\n"
                      "      SIZE => INTERVAL '1' MINUTE)) AS w");
  const auto& sel = std::get<ast::Select>(script.statements.at(0).as<ast::QueryStatement>()->query->body);
  const auto& ref = *sel.from.at(0);
  EXPECT_EQ(ref.alias, "w");
  EXPECT_EQ(ref.pos, (SourcePosition{1, 15}));
  const auto* tvf = std::get_if<ast::WindowTvf>(&ref.node);
  ASSERT_NE(tvf, nullptr);
  EXPECT_EQ(tvf->function, "HOP");
  ASSERT_EQ(tvf->args.size(), 4u);
  EXPECT_EQ(tvf->args[0].kind, ast::TvfArg::Kind::Table);
  EXPECT_EQ(tvf->args[0].name, "DATA");
  EXPECT_EQ(tvf->args[0].table, (ast::QualifiedName{"db", "Bid"}));
  EXPECT_EQ(tvf->args[1].kind, ast::TvfArg::Kind::Descriptor);
  EXPECT_EQ(tvf->args[1].columns, (std::vector<std::string>{"ts"}));
  EXPECT_EQ(tvf->args[2].kind, ast::TvfArg::Kind::Expression);
  EXPECT_EQ(tvf->args[2].name, "SLIDE");
  EXPECT_EQ(tvf->args[2].pos, (SourcePosition{2, 56}));
  EXPECT_EQ(tvf->args[2].expr->pos, (SourcePosition{2, 65}));
  EXPECT_EQ(tvf->args[3].expr->pos, (SourcePosition{3, 15}));
  // Lower-case function names and the aggregate-over-TVF shape.
  EXPECT_EQ(dump("select * from table(tumble(table t, descriptor(ts), interval '1' hour))"),
            "SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' HOUR))");
  // Joins with a window TVF and a subquery as its neighbour.
  EXPECT_EQ(dump("SELECT * FROM TABLE(TUMBLE(TABLE L, DESCRIPTOR(ts), INTERVAL '5' MINUTES)) AS l JOIN "
                 "(SELECT * FROM TABLE(TUMBLE(TABLE R, DESCRIPTOR(ts), INTERVAL '5' MINUTES))) r ON l.id = r.id "
                 "AND l.window_start = r.window_start"),
            "SELECT * FROM (TABLE(TUMBLE(TABLE L, DESCRIPTOR(ts), INTERVAL '5' MINUTE)) AS l JOIN (SELECT * FROM "
            "TABLE(TUMBLE(TABLE R, DESCRIPTOR(ts), INTERVAL '5' MINUTE))) AS r ON ((l.id = r.id) AND (l.window_start = "
            "r.window_start)))");
}

TEST(ParserQuery, FlinkDocsWindowAggregationGroupingSets) {
  check_all({
      {R"(SELECT window_start, window_end, supplier_id, SUM(price) AS total_price
  FROM TABLE(
    TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
  GROUP BY window_start, window_end, GROUPING SETS ((supplier_id), ());)",
       "SELECT window_start, window_end, supplier_id, SUM(price) AS total_price FROM TABLE(TUMBLE(TABLE Bid, "
       "DESCRIPTOR(bidtime), INTERVAL '10' MINUTE)) GROUP BY window_start, window_end, GROUPING SETS (supplier_id, ())"},
      {R"(SELECT window_start, window_end, supplier_id, SUM(price) AS total_price
  FROM TABLE(
    TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
  GROUP BY window_start, window_end, ROLLUP (supplier_id);)",
       "SELECT window_start, window_end, supplier_id, SUM(price) AS total_price FROM TABLE(TUMBLE(TABLE Bid, "
       "DESCRIPTOR(bidtime), INTERVAL '10' MINUTE)) GROUP BY window_start, window_end, ROLLUP (supplier_id)"},
      {R"(SELECT window_start, window_end, item, supplier_id, SUM(price) AS total_price
  FROM TABLE(
    TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
  GROUP BY window_start, window_end, CUBE (supplier_id, item);)",
       "SELECT window_start, window_end, item, supplier_id, SUM(price) AS total_price FROM TABLE(TUMBLE(TABLE Bid, "
       "DESCRIPTOR(bidtime), INTERVAL '10' MINUTE)) GROUP BY window_start, window_end, CUBE (supplier_id, item)"},
  });
}

TEST(ParserQuery, FlinkDocsGroupingSets) {
  check_all({
      {R"(SELECT supplier_id, rating, COUNT(*) AS total
FROM (VALUES
    ('supplier1', 'product1', 4),
    ('supplier1', 'product2', 3),
    ('supplier2', 'product3', 3),
    ('supplier2', 'product4', 4))
AS Products(supplier_id, product_id, rating)
GROUP BY GROUPING SETS ((supplier_id, rating), (supplier_id), ()))",
       "SELECT supplier_id, rating, COUNT(*) AS total FROM (VALUES ('supplier1', 'product1', 4), ('supplier1', "
       "'product2', 3), ('supplier2', 'product3', 3), ('supplier2', 'product4', 4)) AS Products(supplier_id, "
       "product_id, rating) GROUP BY GROUPING SETS ((supplier_id, rating), supplier_id, ())"},
      {R"(SELECT supplier_id, rating, COUNT(*)
FROM (VALUES
    ('supplier1', 'product1', 4),
    ('supplier1', 'product2', 3),
    ('supplier2', 'product3', 3),
    ('supplier2', 'product4', 4))
AS Products(supplier_id, product_id, rating)
GROUP BY ROLLUP (supplier_id, rating))",
       "SELECT supplier_id, rating, COUNT(*) FROM (VALUES ('supplier1', 'product1', 4), ('supplier1', 'product2', 3), "
       "('supplier2', 'product3', 3), ('supplier2', 'product4', 4)) AS Products(supplier_id, product_id, rating) GROUP "
       "BY ROLLUP (supplier_id, rating)"},
      {R"(SELECT supplier_id, rating, product_id, COUNT(*)
FROM (VALUES
    ('supplier1', 'product1', 4),
    ('supplier1', 'product2', 3),
    ('supplier2', 'product3', 3),
    ('supplier2', 'product4', 4))
AS Products(supplier_id, product_id, rating)
GROUP BY CUBE (supplier_id, rating, product_id))",
       "SELECT supplier_id, rating, product_id, COUNT(*) FROM (VALUES ('supplier1', 'product1', 4), ('supplier1', "
       "'product2', 3), ('supplier2', 'product3', 3), ('supplier2', 'product4', 4)) AS Products(supplier_id, "
       "product_id, rating) GROUP BY CUBE (supplier_id, rating, product_id)"},
  });
  auto script = parse("SELECT a FROM t GROUP BY GROUPING SETS ((a, b), (c), ())");
  const auto& sel = std::get<ast::Select>(script.statements[0].as<ast::QueryStatement>()->query->body);
  ASSERT_EQ(sel.group_by.size(), 1u);
  const auto& sets = sel.group_by[0];
  EXPECT_EQ(sets.kind, ast::GroupingElement::Kind::Sets);
  ASSERT_EQ(sets.children.size(), 3u);
  EXPECT_EQ(sets.children[0].kind, ast::GroupingElement::Kind::Row);
  EXPECT_EQ(sets.children[0].children.size(), 2u);
  EXPECT_EQ(sets.children[1].kind, ast::GroupingElement::Kind::Expression);
  EXPECT_EQ(sets.children[2].kind, ast::GroupingElement::Kind::Empty);
}

TEST(ParserQuery, LegacyGroupWindows) {
  check_all({
      {R"(SELECT `user`,
  TUMBLE_START(order_time, INTERVAL '1' DAY) AS wStart,
  SUM(amount) FROM Orders
GROUP BY TUMBLE(order_time, INTERVAL '1' DAY), `user`)",
       "SELECT `user`, TUMBLE_START(order_time, INTERVAL '1' DAY) AS wStart, SUM(amount) FROM Orders GROUP BY "
       "TUMBLE(order_time, INTERVAL '1' DAY), `user`"},
      {"SELECT HOP_START(ts, INTERVAL '5' MINUTE, INTERVAL '1' HOUR), COUNT(*) FROM t GROUP BY HOP(ts, INTERVAL '5' "
       "MINUTE, INTERVAL '1' HOUR)",
       "SELECT HOP_START(ts, INTERVAL '5' MINUTE, INTERVAL '1' HOUR), COUNT(*) FROM t GROUP BY HOP(ts, INTERVAL '5' "
       "MINUTE, INTERVAL '1' HOUR)"},
      {"SELECT SESSION_END(ts, INTERVAL '10' MINUTES), k FROM t GROUP BY SESSION(ts, INTERVAL '10' MINUTES), k",
       "SELECT SESSION_END(ts, INTERVAL '10' MINUTE), k FROM t GROUP BY SESSION(ts, INTERVAL '10' MINUTE), k"},
  });
}

TEST(ParserQuery, TableHints) {
  check_all({
      {"SELECT id, name FROM kafka_table1 /*+ OPTIONS('scan.startup.mode'='earliest-offset') */",
       "SELECT id, name FROM kafka_table1 /*+ OPTIONS('scan.startup.mode' = 'earliest-offset') */"},
      {"SELECT * FROM db.t /*+ OPTIONS('a' = '1', 'b' = '2') */ AS x JOIN u /*+ OPTIONS('c'='3') */ ON x.i = u.i",
       "SELECT * FROM (db.t /*+ OPTIONS('a' = '1', 'b' = '2') */ AS x JOIN u /*+ OPTIONS('c' = '3') */ ON (x.i = u.i))"},
      {"SELECT * FROM t /* a plain comment */", "SELECT * FROM t"},
  });
  auto script = parse("SELECT * FROM t\n  /*+ OPTIONS('k' = 'v') */");
  const auto& sel = std::get<ast::Select>(script.statements[0].as<ast::QueryStatement>()->query->body);
  const auto& named = std::get<ast::NamedTable>(sel.from.at(0)->node);
  ASSERT_EQ(named.hints.size(), 1u);
  EXPECT_EQ(named.hints[0].name, "OPTIONS");
  ASSERT_EQ(named.hints[0].options.size(), 1u);
  EXPECT_EQ(named.hints[0].options[0].key, "k");
  EXPECT_EQ(named.hints[0].options[0].pos, (SourcePosition{2, 15}));
}

TEST(ParserQuery, NamesKeepTheCaseWritten) {
  // Unquoted names that are PostgreSQL keywords (Name, Value, Data, Type...) keep their case too.
  check_all({
      {"SELECT Name, Value AS Data, COUNT(*) AS Total FROM Orders AS Level", "SELECT Name, Value AS Data, COUNT(*) AS Total FROM Orders AS Level"},
      {"SELECT o.Name FROM db.Orders Type", "SELECT o.Name FROM db.Orders AS Type"},
      {"WITH Source AS (SELECT 1 AS One) SELECT One FROM Source", "WITH Source AS (SELECT 1 AS One) SELECT One FROM Source"},
      {"SELECT * FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) AS Window1",
       "SELECT * FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) AS Window1"},
      {"SELECT a AS `Quoted Alias`, b `Second` FROM t", "SELECT a AS `Quoted Alias`, b AS Second FROM t"},
      {"SELECT * FROM (SELECT a FROM t ORDER BY a DESC NULLS LAST) AS Data(Value)",
       "SELECT * FROM (SELECT a FROM t ORDER BY a DESC NULLS LAST) AS Data(Value)"},
      {"SELECT * FROM (SELECT Data FROM t) Data", "SELECT * FROM (SELECT Data FROM t) AS Data"},
      {"SELECT * FROM (VALUES (1, 2)) AS V(Name, Type)", "SELECT * FROM (VALUES (1, 2)) AS V(Name, Type)"},
      {"SELECT * FROM Orders AS Source(Key, Value)", "SELECT * FROM Orders AS Source(Key, Value)"},
      {"WITH c (Name, Value) AS (SELECT 1, 2) SELECT * FROM c", "WITH c (Name, Value) AS (SELECT 1, 2) SELECT * FROM c"},
      {"SELECT * FROM a JOIN db.b AS x USING (Key, Value)", "SELECT * FROM (a JOIN db.b AS x USING (Key, Value))"},
      {"SELECT * FROM a JOIN (SELECT Key FROM b ORDER BY Key DESC) USING (Key)",
       "SELECT * FROM (a JOIN (SELECT Key FROM b ORDER BY Key DESC) USING (Key))"},
  });
}

TEST(ParserQuery, LongNamesAreNotTruncated) {
  // PostgreSQL truncates names to 63 bytes; clink keeps what was written.
  const std::string col(70, 'c'), tab = "T" + std::string(69, 't'), fn = "F" + std::string(69, 'f');
  const std::string alias = "A" + std::string(69, 'a'), quoted = "Q " + std::string(68, 'q');
  std::string sql = "SELECT " + col + ", " + fn + "(x) AS " + alias + ", `" + quoted + "` FROM " + tab + " AS " + alias;
  EXPECT_EQ(dump(sql), "SELECT " + col + ", " + fn + "(x) AS " + alias + ", `" + quoted + "` FROM " + tab + " AS " + alias);
}

TEST(ParserQuery, MisplacedHintsAreErrors) {
  EXPECT_EQ(error_of("SELECT * FROM t AS x /*+ OPTIONS('k'='v') */"),
            "TranslationError: line 1, column 22: a /*+ OPTIONS(...) */ hint is only supported directly after a table name");
  EXPECT_EQ(error_of("SELECT a /*+ OPTIONS('k'='v') */ FROM t"),
            "TranslationError: line 1, column 10: a /*+ OPTIONS(...) */ hint is only supported directly after a table name");
  EXPECT_EQ(error_of("CREATE TABLE t /*+ OPTIONS('k'='v') */ (a INT)"),
            "TranslationError: line 1, column 16: a /*+ OPTIONS(...) */ hint is only supported directly after a table name");
  EXPECT_EQ(error_of("SELECT * FROM (SELECT 1) /*+ OPTIONS('k'='v') */"),
            "TranslationError: line 1, column 26: a /*+ ... */ hint is only supported after a table name");
  EXPECT_EQ(error_of("SELECT * FROM TABLE(TUMBLE(TABLE t /*+ OPTIONS('k'='v') */, DESCRIPTOR(ts), INTERVAL '1' HOUR))"),
            "TranslationError: line 1, column 36: hints on the input of a window table function are not supported");
  EXPECT_EQ(error_of("SELECT user FROM t"),
            "TranslationError: line 1, column 8: USER is not supported (to name a column user, quote it: `user`)");
}

TEST(ParserQuery, QueryPositions) {
  auto script = parse("SELECT\n  a,\n  b + 1 AS c\nFROM t AS x\nWHERE x.a > 0");
  const auto& q = *script.statements[0].as<ast::QueryStatement>()->query;
  const auto& sel = std::get<ast::Select>(q.body);
  EXPECT_EQ(sel.items[0].pos, (SourcePosition{2, 3}));
  EXPECT_EQ(sel.items[1].pos, (SourcePosition{3, 3}));
  EXPECT_EQ(sel.from[0]->pos, (SourcePosition{4, 6}));
  EXPECT_EQ(sel.where->pos, (SourcePosition{5, 7}));
  EXPECT_EQ(sel.where->as<ast::Binary>()->right->pos, (SourcePosition{5, 13}));
  EXPECT_EQ(q.pos, (SourcePosition{1, 1}));

  // A query's position is its SELECT / VALUES / WITH, also for subqueries and CTEs.
  auto nested = parse("WITH c AS (\n  SELECT DISTINCT x FROM t)\nSELECT * FROM (VALUES (1)) AS v, c\n  WHERE a IN (SELECT b FROM u)");
  const auto& outer = *nested.statements[0].as<ast::QueryStatement>()->query;
  EXPECT_EQ(outer.pos, (SourcePosition{1, 1}));
  EXPECT_EQ(outer.with.at(0).pos, (SourcePosition{1, 6}));
  EXPECT_EQ(outer.with.at(0).query->pos, (SourcePosition{2, 3}));
  const auto& osel = std::get<ast::Select>(outer.body);
  EXPECT_EQ(std::get<ast::DerivedTable>(osel.from.at(0)->node).query->pos, (SourcePosition{3, 16}));
  EXPECT_EQ(osel.where->as<ast::InSubquery>()->query->pos, (SourcePosition{4, 15}));
}

// FOR SYSTEM_TIME AS OF <expr> stays on the table reference (the temporal join's versioned
// side): with AS, without AS, with a hint, a qualified name, and in a chain of joins.
TEST(ParserQuery, TemporalJoinSystemTime) {
  EXPECT_EQ(dump("SELECT * FROM Orders AS o LEFT JOIN Rates FOR SYSTEM_TIME AS OF o.order_time AS r ON o.c = r.c"),
            "SELECT * FROM (Orders AS o LEFT JOIN Rates FOR SYSTEM_TIME AS OF o.order_time AS r ON (o.c = r.c))");
  EXPECT_EQ(dump("SELECT * FROM Orders o JOIN db.Rates /*+ OPTIONS('k' = 'v') */ FOR SYSTEM_TIME AS OF o.ts r "
                 "ON o.c = r.c JOIN Other FOR SYSTEM_TIME AS OF (o.ts) ON o.c = Other.c"),
            "SELECT * FROM ((Orders AS o JOIN db.Rates /*+ OPTIONS('k' = 'v') */ FOR SYSTEM_TIME AS OF o.ts AS r ON "
            "(o.c = r.c)) JOIN Other FOR SYSTEM_TIME AS OF o.ts ON (o.c = Other.c))");
  EXPECT_EQ(dump("SELECT * FROM Rates FOR SYSTEM_TIME AS OF TIMESTAMP '2024-01-01 10:00:00' r"),
            "SELECT * FROM Rates FOR SYSTEM_TIME AS OF TIMESTAMP '2024-01-01 10:00:00' AS r");
  EXPECT_EQ(dump("SELECT * FROM o JOIN Rates FOR SYSTEM_TIME AS OF o.ts + INTERVAL '1' SECOND ON o.c = Rates.c"),
            "SELECT * FROM (o JOIN Rates FOR SYSTEM_TIME AS OF (o.ts + INTERVAL '1' SECOND) ON (o.c = Rates.c))");
}

// MATCH_RECOGNIZE is cut out by the preparse shim and parsed by its own clause parser;
// the canonical text spells every clause (the defaults too) and keeps the input's and the
// clause's aliases and a subquery input.
TEST(ParserQuery, MatchRecognize) {
  check_all({
      {"SELECT * FROM Ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY rowtime MEASURES FIRST(A.price) AS fp, "
       "LAST(B.price, 1) lp PATTERN (A B+? C{2,} D{3}) DEFINE B AS B.price > PREV(B.price), C AS TRUE) AS T",
       "SELECT * FROM Ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY rowtime MEASURES FIRST(A.price) AS fp, "
       "LAST(B.price, 1) AS lp ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW PATTERN (A B+? C{2,} D{3}) DEFINE B AS "
       "(B.price > PREV(B.price)), C AS TRUE) AS T"},
      {"SELECT x FROM (SELECT * FROM t) MATCH_RECOGNIZE (ORDER BY ts MEASURES A.v AS x AFTER MATCH SKIP TO FIRST A "
       "PATTERN ((A) B*?) WITHIN INTERVAL '5' SECOND DEFINE A AS v > 1)",
       "SELECT x FROM (SELECT * FROM t) MATCH_RECOGNIZE (ORDER BY ts MEASURES A.v AS x ONE ROW PER MATCH AFTER MATCH "
       "SKIP TO FIRST A PATTERN (A B*?) WITHIN INTERVAL '5' SECOND DEFINE A AS (v > 1))"},
      {"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES A.v AS x AFTER MATCH SKIP TO A PATTERN (A) DEFINE A AS "
       "v > 1) m WHERE x > 2",
       "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES A.v AS x ONE ROW PER MATCH AFTER MATCH SKIP TO LAST A "
       "PATTERN (A) DEFINE A AS (v > 1)) AS m WHERE (x > 2)"},
  });
}

}  // namespace
}  // namespace clink::test
