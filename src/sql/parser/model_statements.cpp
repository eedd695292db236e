// CREATE MODEL (Flink 2.x's SqlCreateModel) from tokens: libpg_query has no MODEL
// grammar, so the statement parser reads it whole, as it reads CREATE TABLE.
//   CREATE [TEMPORARY] MODEL [IF NOT EXISTS] m
//     INPUT (c T [COMMENT '...'], ...) OUTPUT (c T, ...) [COMMENT '...'] WITH ('k' = 'v', ...)
#include "statement_parser.hpp"

namespace clink::sql::detail {

using namespace ast;

namespace {

std::vector<FunctionParam> model_columns(TokenCursor& c, const char* clause) {
  c.expect(clause);
  c.expect("(");
  std::vector<FunctionParam> out;
  do {
    FunctionParam p;
    p.pos = c.position();
    p.name = c.identifier("a column name");
    p.type = parse_type(c);
    if (c.accept("COMMENT")) (void)c.string_literal("a comment string");
    out.push_back(std::move(p));
  } while (c.accept(","));
  c.expect(")");
  return out;
}

}  // namespace

Statement::Node StatementParser::create_model(TokenCursor& c, bool temporary) {
  c.expect("MODEL");
  CreateModel m;
  m.temporary = temporary;
  m.if_not_exists = c.accept_all({"IF", "NOT", "EXISTS"});
  m.name = c.qualified_name("a model name");
  m.input = model_columns(c, "INPUT");
  m.output = model_columns(c, "OUTPUT");
  if (c.accept("COMMENT")) m.comment = c.string_literal("a comment string");
  m.options_pos = c.position();
  if (c.peek_is("AS")) c.unsupported(c.peek(), "CREATE MODEL ... AS <query> (training a model) is not supported");
  c.expect("WITH");
  m.options = parse_property_list(c);
  expect_end(c);
  return m;
}

}  // namespace clink::sql::detail
