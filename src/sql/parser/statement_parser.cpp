// Splits a script into statements and parses Flink's utility statements (SET, SHOW,
// EXPLAIN, INSERT, statement sets, ...). Queries and expressions inside them go to
// libpg_query through the Frontend.
#include <cctype>

#include "statement_parser.hpp"

namespace clink::sql::detail {

using namespace ast;

std::string upper_case(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

bool starts_query(const TokenCursor& c, size_t ahead) {
  return c.peek_is("SELECT", ahead) || c.peek_is("WITH", ahead) || c.peek_is("VALUES", ahead) ||
         c.peek_is("(", ahead) || c.peek_is("TABLE", ahead);
}

Script StatementParser::script() {
  Script out;
  const auto& toks = lx_.tokens;
  size_t start = 0;
  while (start < toks.size()) {
    size_t end = statement_end(start);
    size_t b = start;
    while (b < end && toks[b].kind == TokenKind::Hint) ++b;
    if (b < end) out.statements.push_back(statement(b, end));
    start = end + 1;  // past the ';'
  }
  return out;
}

// Index of the ';' ending the statement that starts at `start` (or the token count).
// A statement set's BEGIN ... END block contains ';' of its own.
size_t StatementParser::statement_end(size_t start) const {
  const auto& toks = lx_.tokens;
  int depth = 0;
  for (size_t i = start; i < toks.size(); ++i) {
    const Token& t = toks[i];
    if (t.sym("(") || t.sym("[")) ++depth;
    if (t.sym(")") || t.sym("]")) --depth;
    if (depth != 0) continue;
    if (t.sym(";")) return i;
    bool block = (i + 2 < toks.size() && t.is("STATEMENT") && toks[i + 1].is("SET") && toks[i + 2].is("BEGIN")) ||
                 (i == start && i + 2 < toks.size() && t.is("BEGIN") && toks[i + 1].is("STATEMENT") &&
                  toks[i + 2].is("SET"));
    if (block) i = block_end(i + 3);
  }
  return toks.size();
}

// Index of the END closing a statement-set block whose body starts at `i` (CASE ... END
// inside the inserts is skipped).
size_t StatementParser::block_end(size_t i) const {
  const auto& toks = lx_.tokens;
  int cases = 0;
  for (; i < toks.size(); ++i) {
    if (toks[i].is("CASE")) ++cases;
    if (toks[i].is("END")) {
      if (cases == 0) return i;
      --cases;
    }
  }
  throw ParseError(map_.position(lx_.text.original_offset(lx_.text.text.size())),
                   "statement set is missing its END");
}

Statement StatementParser::statement(size_t b, size_t e) {
  Statement s;
  const Token& first = lx_.tokens[b];
  const Token& last = lx_.tokens[e - 1];
  s.pos = map_.position(first.origin);
  s.begin = first.origin;
  s.end = lx_.text.original_offset(last.end - 1) + 1;
  s.text = std::string(map_.original().substr(s.begin, s.end - s.begin));
  s.node = node(b, e);
  return s;
}

Statement::Node StatementParser::node(size_t b, size_t e) {
  TokenCursor c(lx_, b, e, map_);
  const Token& t = c.peek();
  if (is_materialized(c)) return materialized(c);
  if (t.is("CREATE")) return create(c);
  if (t.is("DROP")) return drop(c);
  if (t.is("ALTER") && c.peek_is("TABLE", 1)) return alter_table(c);
  if (t.is("SHOW")) return show(c);
  if (t.is("DESCRIBE") || t.is("DESC")) return describe_statement(c);
  if (t.is("ANALYZE")) return analyze(c);
  if (t.is("EXPLAIN")) return explain(c);
  if (t.is("SET")) return set(c);
  if (t.is("RESET")) return reset(c);
  if (t.is("INSERT") || (t.is("EXECUTE") && c.peek_is("INSERT", 1))) return insert_statement(c);
  if ((t.is("EXECUTE") && c.peek_is("STATEMENT", 1)) || (t.is("BEGIN") && c.peek_is("STATEMENT", 1)) ||
      (t.is("STATEMENT") && c.peek_is("SET", 1)))
    return statement_set(c);
  if (starts_query(c)) return QueryStatement{fe_.parse_query(lx_, c.index_ahead(0), e)};
  if (t.is("USE")) return use(c);
  if (t.is("STOP") && c.peek_is("JOB", 1)) return stop_job(c);
  if ((t.is("ADD") || t.is("REMOVE")) && c.peek_is("JAR", 1)) return jar(c);
  for (const char* kw : {"USE", "LOAD", "UNLOAD", "ADD", "REMOVE", "CALL", "TRUNCATE", "UPDATE", "DELETE", "MERGE"})
    if (t.is(kw)) c.unsupported(t, upper_case(t.text) + " statements are not supported");
  unknown_statement(c, c.index_ahead(0));
}

// Something clink has no statement form for: a ParseError when it is not SQL at all,
// else name what PostgreSQL recognised.
void StatementParser::unknown_statement(TokenCursor& c, size_t b) {
  std::string kind = fe_.postgres_statement_kind(lx_, b, c.end_index());
  static const std::pair<const char*, const char*> kNames[] = {
      {"IndexStmt", "CREATE INDEX"}, {"UpdateStmt", "UPDATE"}, {"DeleteStmt", "DELETE"},
      {"CreateSchemaStmt", "CREATE SCHEMA"}, {"CreatedbStmt", "CREATE DATABASE"}, {"CreateSeqStmt", "CREATE SEQUENCE"},
      {"CreateTableAsStmt", "CREATE TABLE ... AS / CREATE MATERIALIZED VIEW"}, {"TransactionStmt", "transaction control"},
      {"VariableSetStmt", "SET"}, {"GrantStmt", "GRANT / REVOKE"}, {"CopyStmt", "COPY"}};
  std::string name = kind;
  for (const auto& [pg, n] : kNames)
    if (kind == pg) name = n;
  throw TranslationError(map_.position(lx_.tokens[b].origin), name + " statements are not supported");
}

void StatementParser::expect_end(TokenCursor& c) {
  if (!c.at_end()) c.fail(c.peek(), "unexpected " + describe(c.peek()));
}

Statement::Node StatementParser::show(TokenCursor& c) {
  c.expect("SHOW");
  Show s;
  const Token& what = c.peek();
  if (c.accept("TABLES")) s.what = Show::What::Tables;
  else if (c.accept("VIEWS")) s.what = Show::What::Views;
  else if (c.accept_all({"MATERIALIZED", "TABLES"})) s.what = Show::What::MaterializedTables;
  else if (c.accept_all({"CREATE", "MATERIALIZED", "TABLE"})) {
    s.what = Show::What::CreateMaterializedTable;
    s.object = c.qualified_name("a materialized table name");
  }
  else if (c.accept("FUNCTIONS")) s.what = Show::What::Functions;
  else if (c.accept_all({"USER", "FUNCTIONS"})) s.what = Show::What::UserFunctions;
  else if (c.accept("CATALOGS")) s.what = Show::What::Catalogs;
  else if (c.accept("DATABASES")) s.what = Show::What::Databases;
  else if (c.accept_all({"CURRENT", "CATALOG"})) s.what = Show::What::CurrentCatalog;
  else if (c.accept_all({"CURRENT", "DATABASE"})) s.what = Show::What::CurrentDatabase;
  else if (c.accept("JOBS")) s.what = Show::What::Jobs;
  else if (c.accept("JARS")) s.what = Show::What::Jars;
  else if (c.accept("MODELS")) s.what = Show::What::Models;
  else if (c.accept_all({"CREATE", "MODEL"})) {
    s.what = Show::What::CreateModel;
    s.object = c.qualified_name("a model name");
  }
  else if (c.accept_all({"CREATE", "TABLE"})) {
    s.what = Show::What::CreateTable;
    s.object = c.qualified_name("a table name");
  } else if (c.accept_all({"CREATE", "VIEW"})) {
    s.what = Show::What::CreateView;
    s.object = c.qualified_name("a view name");
  } else if (c.accept("COLUMNS")) {
    s.what = Show::What::Columns;
    if (!c.accept("FROM")) c.expect("IN");
    s.object = c.qualified_name("a table name");
  } else if (what.word()) {
    c.unsupported(what, "SHOW " + upper_case(what.text) + " is not supported");
  } else {
    c.fail_expected("TABLES, VIEWS, FUNCTIONS, CREATE TABLE or COLUMNS");
  }
  // Listings take Flink's [ (FROM | IN) [catalog.]database ] [ [NOT] LIKE '<pattern>' ].
  using W = Show::What;
  if (s.what == W::Tables || s.what == W::Views || s.what == W::MaterializedTables || s.what == W::Functions ||
      s.what == W::UserFunctions || s.what == W::Models) {
    if (c.accept("FROM") || c.accept("IN")) s.object = c.qualified_name("a database name");
    s.not_like = c.accept("NOT");
    if (s.not_like) c.expect("LIKE");
    if (s.not_like || c.accept("LIKE")) s.like = c.string_literal("a LIKE pattern");
  }
  expect_end(c);
  return s;
}

Statement::Node StatementParser::use(TokenCursor& c) {
  c.expect("USE");
  Use u;
  // `USE catalog` names a database called "catalog"; `USE CATALOG x` switches catalogs.
  if (c.peek().is("CATALOG") && c.index_ahead(1) < c.end_index()) {
    c.next();
    u.catalog = true;
  }
  u.name = c.qualified_name(u.catalog ? "a catalog name" : "a database name");
  expect_end(c);
  return u;
}

Statement::Node StatementParser::stop_job(TokenCursor& c) {
  c.expect("STOP");
  c.expect("JOB");
  StopJob s;
  s.job_id = c.string_literal("the job id (a string literal)");
  while (c.accept("WITH")) {
    if (c.accept("SAVEPOINT")) s.with_savepoint = true;
    else if (c.accept("DRAIN")) s.with_drain = true;
    else c.fail_expected("SAVEPOINT or DRAIN");
  }
  expect_end(c);
  return s;
}

Statement::Node StatementParser::jar(TokenCursor& c) {
  Jar j;
  j.add = c.accept("ADD");
  if (!j.add) c.expect("REMOVE");
  c.expect("JAR");
  j.path = c.string_literal("the jar's path (a string literal)");
  expect_end(c);
  return j;
}

Statement::Node StatementParser::describe_statement(TokenCursor& c) {
  c.next();
  Describe d;
  d.extended = c.accept("EXTENDED");
  d.table = c.qualified_name("a table name");
  expect_end(c);
  return d;
}

Statement::Node StatementParser::analyze(TokenCursor& c) {
  c.expect("ANALYZE");
  c.expect("TABLE");
  AnalyzeTable a;
  a.table = c.qualified_name("a table name");
  if (c.accept("PARTITION")) a.partition = parse_property_list(c);
  c.expect("COMPUTE");
  c.expect("STATISTICS");
  if (c.accept("FOR")) {
    if (c.accept_all({"ALL", "COLUMNS"})) {
      a.for_all_columns = true;
    } else {
      c.expect("COLUMNS");
      do a.columns.push_back(c.identifier("a column name"));
      while (c.accept(","));
    }
  }
  if (c.peek_is("NOSCAN")) c.unsupported(c.peek(), "ANALYZE ... NOSCAN is not supported");
  expect_end(c);
  return a;
}

Statement::Node StatementParser::explain(TokenCursor& c) {
  c.expect("EXPLAIN");
  Explain x;
  c.accept_all({"PLAN", "FOR"});
  static const char* kDetails[] = {"ESTIMATED_COST", "CHANGELOG_MODE", "PLAN_ADVICE", "JSON_EXECUTION_PLAN"};
  for (;;) {
    bool found = false;
    for (const char* d : kDetails)
      if (c.accept(d)) {
        x.details.push_back(d);
        found = true;
      }
    if (!found) break;
    c.accept(",");
  }
  size_t b = c.index_ahead(0);
  if (b >= c.end_index()) c.fail_expected("a statement to explain");
  Statement inner = statement(b, c.end_index());
  if (!inner.as<QueryStatement>() && !inner.as<Insert>() && !inner.as<StatementSet>())
    throw TranslationError(inner.pos, "EXPLAIN supports queries, INSERT and statement sets");
  x.statement = std::make_shared<const Statement>(std::move(inner));
  return x;
}

// The original text of tokens [b, e) (trimmed), for unquoted SET keys and values.
std::string StatementParser::raw_text(size_t b, size_t e) const {
  if (b >= e) return "";
  size_t from = lx_.tokens[b].origin;
  size_t to = lx_.text.original_offset(lx_.tokens[e - 1].end - 1) + 1;
  return std::string(map_.original().substr(from, to - from));
}

Statement::Node StatementParser::set(TokenCursor& c) {
  c.expect("SET");
  Set s;
  if (c.at_end()) return s;
  if (c.peek().kind == TokenKind::String) {
    s.key = c.string_literal("a key");
  } else {
    size_t b = c.index_ahead(0);
    size_t eq = c.find_top_level({"="});
    s.key = raw_text(b, eq);
    c.seek(eq);
  }
  if (c.accept("=")) {
    if (c.at_end()) c.fail_expected("a value");
    if (c.peek().kind == TokenKind::String && c.index_ahead(1) >= c.end_index()) {
      s.value = c.string_literal("a value");
    } else {
      s.value = raw_text(c.index_ahead(0), c.end_index());
      c.seek(c.end_index());
    }
  }
  expect_end(c);
  return s;
}

Statement::Node StatementParser::reset(TokenCursor& c) {
  c.expect("RESET");
  Reset r;
  if (c.at_end()) return r;
  if (c.peek().kind == TokenKind::String) {
    r.key = c.string_literal("a key");
  } else {
    r.key = raw_text(c.index_ahead(0), c.end_index());
    c.seek(c.end_index());
  }
  expect_end(c);
  return r;
}

Insert StatementParser::insert_statement(TokenCursor& c) {
  Insert ins;
  ins.pos = c.position();
  c.accept("EXECUTE");
  c.expect("INSERT");
  if (c.accept("OVERWRITE")) {
    ins.overwrite = true;
  } else {
    c.expect("INTO");
  }
  ins.table = c.qualified_name("a table name");
  for (const Token* hint : c.hints_here()) {
    for (auto& h : preparse::parse_hint_token(lx_, *hint, map_)) ins.hints.push_back(std::move(h));
    fe_.use_hint(*hint);
  }
  if (c.accept("PARTITION")) ins.partition = parse_property_list(c);
  if (c.peek_is("(") && !starts_query(c, 1)) ins.columns = name_list(c, "a column name");
  if (!starts_query(c)) c.fail_expected("a query (SELECT, VALUES or WITH)");
  ins.query = fe_.parse_query(lx_, c.index_ahead(0), c.end_index());
  return ins;
}

Statement::Node StatementParser::statement_set(TokenCursor& c) {
  if (!c.peek_is("BEGIN")) {
    c.accept("EXECUTE");  // EXPLAIN STATEMENT SET BEGIN ... END has no EXECUTE
    c.expect("STATEMENT");
    c.expect("SET");
    c.expect("BEGIN");
  } else {
    c.expect("BEGIN");
    c.expect("STATEMENT");
    c.expect("SET");
    c.expect(";");
  }
  size_t body = c.index_ahead(0);
  size_t end = block_end(body);
  StatementSet set;
  size_t start = body;
  while (start < end) {
    size_t stop = start;
    while (stop < end && !lx_.tokens[stop].sym(";")) ++stop;
    if (stop > start) {
      TokenCursor inner(lx_, start, stop, map_);
      if (!(inner.peek_is("INSERT") || (inner.peek_is("EXECUTE") && inner.peek_is("INSERT", 1))))
        inner.unsupported(inner.peek(), "a statement set holds only INSERT statements");
      set.inserts.push_back(insert_statement(inner));
    }
    start = stop + 1;
  }
  if (set.inserts.empty()) c.fail(lx_.tokens[end], "a statement set needs at least one INSERT");
  c.seek(end + 1);
  expect_end(c);
  return set;
}

Script parse_statements(Frontend& frontend) { return StatementParser(frontend).script(); }

}  // namespace clink::sql::detail
