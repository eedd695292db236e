// Parser-level data types (type_syntax.hpp): every Flink spelling, in DDL and in CAST.
#include "parser_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

// The type of column `c` in CREATE TABLE t (c <type>).
TypeName column_type(const std::string& type) {
  ast::Script s = parse("CREATE TABLE t (c " + type + ")");
  return s.statements.at(0).as<ast::CreateTable>()->schema.columns.at(0).type;
}

TypeName cast_type(const std::string& type) {
  ast::ExprPtr e = parse_expression("CAST(x AS " + type + ")");
  return e->as<ast::Cast>()->type;
}

TEST(ParserType, CanonicalSpellings) {
  const Case cases[] = {
      {"BOOLEAN", "BOOLEAN"},
      {"TINYINT", "TINYINT"},
      {"SMALLINT", "SMALLINT"},
      {"INT", "INT"},
      {"INTEGER", "INT"},
      {"integer", "INT"},
      {"BIGINT", "BIGINT"},
      {"FLOAT", "FLOAT"},
      {"REAL", "FLOAT"},
      {"DOUBLE", "DOUBLE"},
      {"DOUBLE PRECISION", "DOUBLE"},
      {"DECIMAL", "DECIMAL"},
      {"DECIMAL(10)", "DECIMAL(10)"},
      {"DECIMAL(10, 2)", "DECIMAL(10, 2)"},
      {"DEC(5, 1)", "DECIMAL(5, 1)"},
      {"NUMERIC(38,18)", "DECIMAL(38, 18)"},
      {"CHAR", "CHAR"},
      {"CHAR(3)", "CHAR(3)"},
      {"CHARACTER(3)", "CHAR(3)"},
      {"VARCHAR(255)", "VARCHAR(255)"},
      {"CHARACTER VARYING(10)", "VARCHAR(10)"},
      {"STRING", "STRING"},
      {"BINARY(16)", "BINARY(16)"},
      {"VARBINARY(100)", "VARBINARY(100)"},
      {"BYTES", "BYTES"},
      {"DATE", "DATE"},
      {"TIME", "TIME"},
      {"TIME(3)", "TIME(3)"},
      {"TIME(0) WITHOUT TIME ZONE", "TIME(0)"},
      {"TIMESTAMP", "TIMESTAMP"},
      {"TIMESTAMP(3)", "TIMESTAMP(3)"},
      {"TIMESTAMP(6) WITHOUT TIME ZONE", "TIMESTAMP(6)"},
      {"TIMESTAMP(3) WITH LOCAL TIME ZONE", "TIMESTAMP_LTZ(3)"},
      {"TIMESTAMP WITH LOCAL TIME ZONE", "TIMESTAMP_LTZ"},
      {"TIMESTAMP_LTZ", "TIMESTAMP_LTZ"},
      {"TIMESTAMP_LTZ(3)", "TIMESTAMP_LTZ(3)"},
      {"INTERVAL DAY", "INTERVAL DAY"},
      {"INTERVAL DAY(2) TO SECOND(3)", "INTERVAL DAY(2) TO SECOND(3)"},
      {"INTERVAL DAY TO SECOND(3)", "INTERVAL DAY TO SECOND(3)"},
      {"INTERVAL YEAR TO MONTH", "INTERVAL YEAR TO MONTH"},
      {"INTERVAL SECOND(3)", "INTERVAL SECOND(3)"},
      {"ARRAY<INT>", "ARRAY<INT>"},
      {"ARRAY<ARRAY<STRING>>", "ARRAY<ARRAY<STRING>>"},
      {"INT ARRAY", "ARRAY<INT>"},
      {"INT NOT NULL ARRAY", "ARRAY<INT NOT NULL>"},
      {"STRING ARRAY ARRAY", "ARRAY<ARRAY<STRING>>"},
      {"INT[]", "ARRAY<INT>"},  // PostgreSQL's spelling, as the seed's scripts write it
      {"VARCHAR(10)[][]", "ARRAY<ARRAY<VARCHAR(10)>>"},
      {"BIGINT NOT NULL[]", "ARRAY<BIGINT NOT NULL>"},
      {"MAP<STRING, INT>", "MAP<STRING, INT>"},
      {"MAP<STRING, MAP<INT, ARRAY<DOUBLE>>>", "MAP<STRING, MAP<INT, ARRAY<DOUBLE>>>"},
      {"MULTISET<STRING>", "MULTISET<STRING>"},
      {"INT MULTISET", "MULTISET<INT>"},
      {"ROW<a INT, b STRING>", "ROW<a INT, b STRING>"},
      {"ROW(a INT, b STRING)", "ROW<a INT, b STRING>"},
      {"ROW<`my field` INT 'not a comment'>", ""},  // replaced below: a bare string is not allowed
      {"ROW<a INT COMMENT 'the a', b ROW<c DECIMAL(5, 2)>>", "ROW<a INT COMMENT 'the a', b ROW<c DECIMAL(5, 2)>>"},
      {"ROW<>", "ROW<>"},
      {"ROW()", "ROW<>"},
      {"INT NOT NULL", "INT NOT NULL"},
      {"STRING NULL", "STRING"},
      {"ARRAY<INT NOT NULL> NOT NULL", "ARRAY<INT NOT NULL> NOT NULL"},
      {"MAP<STRING NOT NULL, INT> NOT NULL", "MAP<STRING NOT NULL, INT> NOT NULL"},
      {"ROW<a INT NOT NULL> NOT NULL", "ROW<a INT NOT NULL> NOT NULL"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.sql);
    if (std::string(c.expected).empty()) {
      EXPECT_NE(error_of(std::string("CREATE TABLE t (c ") + c.sql + ")"), "no error");
      continue;
    }
    EXPECT_EQ(to_string(column_type(c.sql)), c.expected);
    EXPECT_EQ(to_string(cast_type(c.sql)), c.expected);
  }
}

TEST(ParserType, Structure) {
  TypeName dec = column_type("DECIMAL(10, 2) NOT NULL");
  EXPECT_EQ(dec.name, "DECIMAL");
  EXPECT_EQ(dec.params, (std::vector<int>{10, 2}));
  EXPECT_FALSE(dec.nullable);
  EXPECT_EQ(dec.spelling, "DECIMAL");

  TypeName num = column_type("numeric(5)");
  EXPECT_EQ(num.name, "DECIMAL");
  EXPECT_EQ(num.spelling, "numeric");

  TypeName map = column_type("MAP<STRING, ARRAY<INT>>");
  EXPECT_EQ(map.name, "MAP");
  ASSERT_EQ(map.elements.size(), 2u);
  EXPECT_EQ(map.elements[0].name, "STRING");
  EXPECT_EQ(map.elements[1].name, "ARRAY");
  ASSERT_EQ(map.elements[1].elements.size(), 1u);
  EXPECT_EQ(map.elements[1].elements[0].name, "INT");

  TypeName row = column_type("ROW<id BIGINT NOT NULL COMMENT 'key', `Name` STRING>");
  EXPECT_EQ(row.name, "ROW");
  ASSERT_EQ(row.fields.size(), 2u);
  EXPECT_EQ(row.fields[0].name, "id");
  EXPECT_EQ(row.fields[0].type.at(0).name, "BIGINT");
  EXPECT_FALSE(row.fields[0].type.at(0).nullable);
  EXPECT_EQ(row.fields[0].comment, "key");
  EXPECT_EQ(row.fields[1].name, "Name");

  TypeName ltz = column_type("TIMESTAMP(3) WITH LOCAL TIME ZONE");
  EXPECT_EQ(ltz.name, "TIMESTAMP_LTZ");
  EXPECT_EQ(ltz.params, (std::vector<int>{3}));

  TypeName iv = column_type("INTERVAL DAY(2) TO SECOND(3)");
  EXPECT_EQ(iv.interval_from, "DAY");
  EXPECT_EQ(iv.interval_to, "SECOND");
  EXPECT_EQ(iv.params, (std::vector<int>{2, 3}));

  TypeName arr = column_type("INT NOT NULL ARRAY NOT NULL");
  EXPECT_EQ(arr.name, "ARRAY");
  EXPECT_FALSE(arr.nullable);
  EXPECT_FALSE(arr.elements.at(0).nullable);
}

TEST(ParserType, Positions) {
  ast::Script s = parse("CREATE TABLE t (\n  a INT,\n  b   MAP<STRING, ROW<x INT>>\n)");
  const auto& cols = s.statements.at(0).as<ast::CreateTable>()->schema.columns;
  EXPECT_EQ(cols.at(0).type.pos, (SourcePosition{2, 5}));
  EXPECT_EQ(cols.at(1).type.pos, (SourcePosition{3, 7}));
  EXPECT_EQ(cols.at(1).type.elements.at(1).pos, (SourcePosition{3, 19}));
  EXPECT_EQ(cols.at(1).type.elements.at(1).fields.at(0).type.at(0).pos, (SourcePosition{3, 25}));
}

TEST(ParserType, TypesInsideQueriesAndFunctions) {
  EXPECT_EQ(dump("SELECT CAST(a AS MAP<STRING, INT>), TRY_CAST(b AS ROW<x INT>) FROM t"),
            "SELECT CAST(a AS MAP<STRING, INT>), TRY_CAST(b AS ROW<x INT>) FROM t");
  EXPECT_EQ(dump("CREATE FUNCTION f(m MAP<STRING, INT>, a INT ARRAY) RETURNS ROW<k STRING> AS 'x' LANGUAGE JAVA"),
            "CREATE FUNCTION f(m MAP<STRING, INT>, a ARRAY<INT>) RETURNS ROW<k STRING> AS 'x' LANGUAGE JAVA");
  EXPECT_EQ(dump("CREATE TABLE t (tags STRING[], m INT[][]) WITH ('connector' = 'datagen')"),
            "CREATE TABLE t (tags ARRAY<STRING>, m ARRAY<ARRAY<INT>>) WITH ('connector' = 'datagen')");
  EXPECT_EQ(dump("SELECT CAST(a AS BIGINT[]) FROM t"), "SELECT CAST(a AS ARRAY<BIGINT>) FROM t");
  EXPECT_EQ(dump("ALTER TABLE t MODIFY m MAP<STRING, BIGINT> NOT NULL"),
            "ALTER TABLE t MODIFY (m MAP<STRING, BIGINT> NOT NULL)");
}

TEST(ParserType, Errors) {
  EXPECT_EQ(error_of("CREATE TABLE t (c MAP<STRING>)"), "ParseError: line 1, column 29: expected ',' but found '>'");
  EXPECT_EQ(error_of("CREATE TABLE t (c ARRAY<INT)"), "ParseError: line 1, column 28: expected '>' but found ')'");
  EXPECT_EQ(error_of("CREATE TABLE t (c ROW<INT>)"), "ParseError: line 1, column 26: expected a data type but found '>'");
  EXPECT_EQ(error_of("CREATE TABLE t (c VARCHAR(x))"),
            "ParseError: line 1, column 27: expected an integer type parameter but found 'x'");
  EXPECT_EQ(error_of("CREATE TABLE t (c TIMESTAMP(3) WITH TIME ZONE)"),
            "TranslationError: line 1, column 32: TIMESTAMP WITH TIME ZONE is not supported (use TIMESTAMP_LTZ / WITH "
            "LOCAL TIME ZONE)");
  EXPECT_EQ(error_of("CREATE TABLE t (c TEXT)"), "TranslationError: line 1, column 19: unknown data type 'TEXT'");
  EXPECT_EQ(error_of("CREATE TABLE t (c INTERVAL)"), "ParseError: line 1, column 27: expected an interval unit but found ')'");
}

}  // namespace
}  // namespace clink::test
