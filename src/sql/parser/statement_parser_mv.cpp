// Materialized tables (Flink 2.x) and materialized views (the seed's spelling) from tokens:
// CREATE / ALTER ... SUSPEND | RESUME | REFRESH | AS | ADD | MODIFY | DROP / REFRESH
// MATERIALIZED VIEW / DROP. The
// defining query goes to libpg_query through the Frontend; its text is kept as written
// (the catalog persists it and every refresh re-plans it).
#include <charconv>

#include "statement_parser.hpp"

namespace clink::sql::detail {

using namespace ast;

namespace {

// FRESHNESS = INTERVAL '<n>' SECOND | MINUTE | HOUR | DAY, as Flink's
// SqlCreateMaterializedTableConverter accepts it: one unit, a positive integer.
std::int64_t freshness_ms(TokenCursor& c) {
  const Token& at = c.peek();
  ExprPtr e = parse_interval_literal(c);
  const auto* lit = e->as<IntervalLiteral>();
  if (lit->negative || !lit->to_unit.empty())
    c.fail(at, "Materialized table freshness must be a positive interval of one unit, e.g. INTERVAL '30' SECOND");
  std::int64_t n = 0;
  auto [p, ec] = std::from_chars(lit->value.data(), lit->value.data() + lit->value.size(), n);
  if (ec != std::errc() || p != lit->value.data() + lit->value.size() || n <= 0)
    c.fail(at, "Materialized table freshness only supports a positive integer interval value, got '" + lit->value + "'");
  std::int64_t unit = 0;
  if (lit->from_unit == "SECOND") unit = 1000;
  else if (lit->from_unit == "MINUTE") unit = 60'000;
  else if (lit->from_unit == "HOUR") unit = 3'600'000;
  else if (lit->from_unit == "DAY") unit = 86'400'000;
  else c.fail(at, "Materialized table freshness only supports SECOND, MINUTE, HOUR, DAY as the time unit, got " + lit->from_unit);
  return n * unit;
}

}  // namespace

bool StatementParser::is_materialized(const TokenCursor& c) {
  if (c.peek_is("CREATE"))
    return c.peek_is("MATERIALIZED", 1) ||
           (c.peek_is("OR", 1) && (c.peek_is("REPLACE", 2) || c.peek_is("ALTER", 2)) && c.peek_is("MATERIALIZED", 3));
  return (c.peek_is("ALTER") || c.peek_is("DROP") || c.peek_is("REFRESH")) && c.peek_is("MATERIALIZED", 1);
}

Statement::Node StatementParser::materialized(TokenCursor& c) {
  MaterializedTable m;
  const Token& verb = c.next();
  if (verb.is("CREATE") && c.peek_is("OR")) {
    if (c.peek_is("REPLACE", 1))
      c.unsupported(c.peek(), "CREATE OR REPLACE is not supported for materialized tables: CREATE OR ALTER changes an "
                              "existing one's query, or DROP it and CREATE it again");
    c.expect("OR");
    c.expect("ALTER");
    m.or_alter = true;
  }
  c.expect("MATERIALIZED");
  if (!m.or_alter && c.accept("VIEW")) m.view = true;
  else c.expect("TABLE");
  if (verb.is("DROP")) {
    m.action = MaterializedTable::Action::Drop;
    m.if_exists = c.accept_all({"IF", "EXISTS"});
    m.name = c.qualified_name("a materialized table name");
    expect_end(c);
    return m;
  }
  if (verb.is("REFRESH")) {  // REFRESH MATERIALIZED VIEW v (PostgreSQL's statement)
    m.action = MaterializedTable::Action::Refresh;
    if (c.peek_is("CONCURRENTLY")) c.unsupported(c.peek(), "REFRESH ... CONCURRENTLY is not supported (every refresh swaps the backing atomically)");
    m.name = c.qualified_name("a materialized view name");
    expect_end(c);
    return m;
  }
  if (verb.is("ALTER")) {
    m.name = c.qualified_name("a materialized table name");
    if (c.accept("SUSPEND")) {
      m.action = MaterializedTable::Action::Suspend;
    } else if (c.accept("RESUME")) {
      m.action = MaterializedTable::Action::Resume;
      if (c.accept("WITH")) m.options = parse_property_list(c);
    } else if (c.accept("REFRESH")) {
      m.action = MaterializedTable::Action::Refresh;
      if (c.accept("PARTITION")) m.partition = parse_property_list(c);
    } else if (c.peek_is("AS")) {
      c.next();
      m.action = MaterializedTable::Action::AlterQuery;
      defining_query(c, m);
      return m;
    } else if (c.peek_is("ADD") || c.peek_is("MODIFY") || c.peek_is("DROP")) {
      // Flink 2.3's schema changes: one ADD / MODIFY / DROP per statement, as its grammar.
      if (c.peek_is("DISTRIBUTION", 1))
        c.unsupported(c.peek(1), "ALTER MATERIALIZED TABLE ... " + upper_case(c.peek().text) +
                                     " DISTRIBUTION is not supported (clink has no DISTRIBUTED BY: a backing "
                                     "table's files are written per partition, not per bucket)");
      m.action = MaterializedTable::Action::AlterSchema;
      m.schema_change = alter_action(c);
    } else if (c.peek_is("SET") || c.peek_is("RESET")) {  // Flink 2.3 parses these and refuses them too
      c.unsupported(c.peek(), "ALTER MATERIALIZED TABLE ... " + upper_case(c.peek().text) +
                                  " is not supported (SUSPEND, RESUME, REFRESH, AS <query>, ADD, MODIFY and DROP are)");
    } else {
      c.fail_expected("SUSPEND, RESUME, REFRESH, AS, ADD, MODIFY or DROP");
    }
    expect_end(c);
    return m;
  }
  m.if_not_exists = c.accept_all({"IF", "NOT", "EXISTS"});
  m.name = c.qualified_name("a materialized table name");
  if (!m.view && c.peek_is("(")) {  // only a table constraint: the schema is the query's
    c.expect("(");
    SchemaElements el;
    PrimaryKey pk;
    pk.pos = c.position();
    if (c.accept("CONSTRAINT")) pk.constraint_name = c.identifier("a constraint name");
    if (!c.peek_is("PRIMARY"))
      c.fail(c.peek(), "a materialized table declares no columns (its schema is the query's): only "
                       "[CONSTRAINT name] PRIMARY KEY (..) NOT ENFORCED may be written here");
    primary_key(c, el, std::move(pk), false);
    m.primary_key = std::move(el.primary_key);
    c.expect(")");
  }
  for (;;) {
    if (c.accept("COMMENT")) {
      m.comment = c.string_literal("a comment string");
    } else if (c.accept("PARTITIONED")) {
      c.expect("BY");
      m.partitioned_by = name_list(c, "a partition column");
    } else if (c.accept("WITH")) {
      m.options = parse_property_list(c);
    } else if (c.peek_is("FRESHNESS")) {
      m.freshness_pos = c.position();
      c.next();
      c.expect("=");
      m.freshness_ms = freshness_ms(c);
    } else if (c.peek_is("REFRESH_MODE")) {
      m.refresh_mode_pos = c.position();
      c.next();
      c.expect("=");
      const Token& mode = c.next();
      if (mode.is("CONTINUOUS")) m.refresh_mode = "CONTINUOUS";
      else if (mode.is("FULL")) m.refresh_mode = "FULL";
      else c.fail(mode, "REFRESH_MODE must be CONTINUOUS or FULL, got " + describe(mode));
    } else {
      break;
    }
  }
  c.expect("AS");
  defining_query(c, m);
  return m;
}

// The rest of the statement: the query, parsed, and its text as written.
void StatementParser::defining_query(TokenCursor& c, MaterializedTable& m) {
  const size_t b = c.index_ahead(0);
  if (b >= c.end_index()) c.fail_expected("a query");
  m.query_pos = c.position();
  const Token& first = lx_.tokens[b];
  const Token& last = lx_.tokens[c.end_index() - 1];
  const size_t from = first.origin, to = lx_.text.original_offset(last.end - 1) + 1;
  m.query_sql = std::string(map_.original().substr(from, to - from));
  m.query = fe_.parse_query(lx_, b, c.end_index());
}

}  // namespace clink::sql::detail
