#include <gtest/gtest.h>

#include "clink/sql/parser.hpp"

using namespace clink::sql;

TEST(ParserSmoke, Select) {
  auto s = parse("SELECT a, b + 1 AS c FROM t WHERE a > 0");
  ASSERT_EQ(s.statements.size(), 1u);
  EXPECT_EQ(ast::to_string(s.statements[0]), "SELECT a, (b + 1) AS c FROM t WHERE (a > 0)");
}
