// The preparse shim: tokens, the offset map back to the original text, keyword lookup,
// and the PostgreSQL-bound rewrite of Flink-only syntax.
#include "clink/sql/parser/preparse.hpp"

#include <gtest/gtest.h>

#include "clink/sql/parser/parser.hpp"

namespace clink::test {

using namespace clink::sql;
using namespace clink::sql::preparse;

namespace {

std::vector<std::string> token_texts(std::string_view sql) {
  SourceMap map(sql);
  Lexed lx = tokenize(MappedText::identity(sql), map);
  std::vector<std::string> out;
  for (const auto& t : lx.tokens) out.push_back(t.text);
  return out;
}

TEST(ParserPreparse, Tokens) {
  EXPECT_EQ(token_texts("SELECT a,`b c`,'it''s' FROM t WHERE x<>1 AND y>=2.5E3 -- tail\n;"),
            (std::vector<std::string>{"SELECT", "a", ",", "`b c`", ",", "'it''s'", "FROM", "t", "WHERE", "x", "<>", "1",
                                      "AND", "y", ">=", "2.5E3", ";"}));
  EXPECT_EQ(token_texts("a||b=>c::d!=e /* x */ f /*+ OPTIONS('k'='v') */"),
            (std::vector<std::string>{"a", "||", "b", "=>", "c", "::", "d", "!=", "e", "f", "/*+ OPTIONS('k'='v') */"}));
  EXPECT_EQ(token_texts("MAP<STRING,ARRAY<INT>>"),
            (std::vector<std::string>{"MAP", "<", "STRING", ",", "ARRAY", "<", "INT", ">", ">"}));
  EXPECT_EQ(token_texts(".5 1. 1e 2e+3"), (std::vector<std::string>{".5", "1.", "1", "e", "2e+3"}));

  SourceMap map("x `a``b` 'c''d' \"e\"\"f\" /*+ H */");
  Lexed lx = tokenize(MappedText::identity(map.original()), map);
  ASSERT_EQ(lx.tokens.size(), 5u);
  EXPECT_EQ(lx.tokens[1].kind, TokenKind::QuotedWord);
  EXPECT_EQ(lx.tokens[1].value, "a`b");
  EXPECT_TRUE(lx.tokens[1].backtick);
  EXPECT_EQ(lx.tokens[2].kind, TokenKind::String);
  EXPECT_EQ(lx.tokens[2].value, "c'd");
  EXPECT_EQ(lx.tokens[3].value, "e\"f");
  EXPECT_FALSE(lx.tokens[3].backtick);
  EXPECT_EQ(lx.tokens[4].kind, TokenKind::Hint);
  EXPECT_EQ(lx.tokens[4].value, " H ");
  EXPECT_EQ(lx.tokens[4].origin, 23u);
}

TEST(ParserPreparse, SourcePositions) {
  SourceMap map("ab\ncd\n\nxü z");
  EXPECT_EQ(map.position(0), (SourcePosition{1, 1}));
  EXPECT_EQ(map.position(1), (SourcePosition{1, 2}));
  EXPECT_EQ(map.position(2), (SourcePosition{1, 3}));
  EXPECT_EQ(map.position(3), (SourcePosition{2, 1}));
  EXPECT_EQ(map.position(6), (SourcePosition{3, 1}));
  EXPECT_EQ(map.position(7), (SourcePosition{4, 1}));
  EXPECT_EQ(map.position(11), (SourcePosition{4, 4}));  // after the two-byte ü and the space
  EXPECT_EQ(map.position(1000), (SourcePosition{4, 5}));
}

TEST(ParserPreparse, MappedTextKeepsOrigins) {
  MappedText src = MappedText::identity("hello world");
  MappedText out;
  out.append("<", 6);
  out.append_from(src, 6, 11);
  out.append(">", 11);
  EXPECT_EQ(out.text, "<world>");
  EXPECT_EQ(out.original_offset(0), 6u);
  EXPECT_EQ(out.original_offset(1), 6u);
  EXPECT_EQ(out.original_offset(5), 10u);
  EXPECT_EQ(out.original_offset(6), 11u);
  EXPECT_EQ(out.original_offset(7), 11u);   // the end
  EXPECT_EQ(out.original_offset(99), 11u);  // past the end clamps
}

TEST(ParserPreparse, KeywordLookup) {
  EXPECT_TRUE(is_postgres_keyword("select"));
  EXPECT_TRUE(is_postgres_keyword("SELECT"));
  EXPECT_TRUE(is_postgres_keyword("Name"));  // unreserved
  EXPECT_FALSE(is_postgres_keyword("tumble"));
  EXPECT_FALSE(is_postgres_keyword("window_start"));
  EXPECT_TRUE(is_reserved_keyword("user"));
  EXPECT_TRUE(is_reserved_keyword("TIMESTAMP"));
  EXPECT_FALSE(is_reserved_keyword("name"));
  EXPECT_FALSE(is_reserved_keyword("orders"));
}

class NoExpressions : public ExpressionSource {
 public:
  ast::ExprPtr parse_expression(const Lexed&, size_t, size_t) override { return parse_expression_text("1"); }
  static ast::ExprPtr parse_expression_text(const char* s) { return clink::sql::parse_expression(s); }
};

std::string rewrite(std::string_view sql, Placeholders& ph) {
  SourceMap map(sql);
  Lexed lx = tokenize(MappedText::identity(sql), map);
  NoExpressions exprs;
  return rewrite_for_postgres(lx, 0, lx.tokens.size(), map, ph, exprs).text.text;
}

TEST(ParserPreparse, RewriteForPostgres) {
  Placeholders ph;
  EXPECT_EQ(rewrite("SELECT MyCol, `b c`, name FROM Orders", ph), "SELECT \"MyCol\" , \"b c\" , name FROM \"Orders\"");
  EXPECT_EQ(rewrite("CAST(x AS MAP<STRING, INT>)", ph), "CAST ( \"x\" AS __clink_ctype_0 )");
  ASSERT_EQ(ph.types.size(), 1u);
  EXPECT_EQ(to_string(ph.types[0]), "MAP<STRING, INT>");
  EXPECT_EQ(rewrite("TRY_CAST(y AS INT)", ph), "CAST ( \"y\" AS __clink_ctype_1 )");
  EXPECT_EQ(ph.try_casts.count(0), 1u);
  EXPECT_EQ(rewrite("a + INTERVAL '10' MINUTES - DATE '2020-01-01'", ph), "\"a\" + __clink_lit_0 - __clink_lit_1");
  ASSERT_EQ(ph.literals.size(), 2u);
  EXPECT_EQ(ast::to_string(ph.literals[0]), "INTERVAL '10' MINUTE");
  EXPECT_EQ(rewrite("MAP['a', 1]", ph), "ARRAY [ 'a' , 1 ]");
  EXPECT_EQ(ph.map_constructors.count(0), 1u);
  EXPECT_EQ(rewrite("FLOOR(ts TO DAY)", ph), "\"FLOOR\" ( \"ts\" )");
  EXPECT_EQ(ph.floor_ceil_units.at(0), "DAY");
  EXPECT_EQ(rewrite("ARRAY_AGG(DISTINCT x IGNORE NULLS)", ph), "\"ARRAY_AGG\" ( DISTINCT \"x\" )");
  EXPECT_EQ(ph.null_treatment.at(0), "IGNORE");
  EXPECT_EQ(rewrite("ARRAY_AGG(nulls)", ph), "\"ARRAY_AGG\" ( nulls )");  // not a null treatment
  EXPECT_EQ(rewrite("SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), x)) w", ph),
            "SELECT * FROM __clink_tvf_0 \"w\"");
  EXPECT_EQ(rewrite("SELECT * FROM t /*+ OPTIONS('k'='v') */", ph), "SELECT * FROM \"t\"");
  EXPECT_EQ(ph.hints.at(14).at(0).options.at(0).key, "k");
  // Strings and comments pass through untouched.
  EXPECT_EQ(rewrite("SELECT 'CAST(x AS MAP<a,b>)' -- TABLE(TUMBLE(\n", ph), "SELECT 'CAST(x AS MAP<a,b>)'");
}

}  // namespace
}  // namespace clink::test
