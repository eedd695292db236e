// Splits a script into statements and parses Flink's statement forms (DDL, SET, SHOW,
// statement sets, ...) from tokens. Queries and expressions inside them go to
// libpg_query through the Frontend.
#include <cctype>

#include "frontend.hpp"
#include "token_cursor.hpp"

namespace clink::sql::detail {

namespace {

using namespace ast;

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

bool starts_query(const TokenCursor& c, size_t ahead = 0) {
  return c.peek_is("SELECT", ahead) || c.peek_is("WITH", ahead) || c.peek_is("VALUES", ahead) ||
         c.peek_is("(", ahead) || c.peek_is("TABLE", ahead);
}

class StatementParser {
 public:
  explicit StatementParser(Frontend& fe) : fe_(fe), lx_(fe.lexed()), map_(fe.map()) {}

  Script script() {
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

 private:
  // Index of the ';' ending the statement that starts at `start` (or the token count).
  // A statement set's BEGIN ... END block contains ';' of its own.
  size_t statement_end(size_t start) const {
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
  size_t block_end(size_t i) const {
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

  Statement statement(size_t b, size_t e) {
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

  Statement::Node node(size_t b, size_t e) {
    TokenCursor c(lx_, b, e, map_);
    const Token& t = c.peek();
    if (t.is("CREATE")) return create(c);
    if (t.is("DROP")) return drop(c);
    if (t.is("ALTER") && c.peek_is("TABLE", 1)) return alter_table(c);
    if (t.is("SHOW")) return show(c);
    if (t.is("DESCRIBE") || t.is("DESC")) return describe_statement(c);
    if (t.is("ANALYZE")) return analyze(c);
    if (t.is("EXPLAIN")) return explain(c);
    if (t.is("SET")) return set(c);
    if (t.is("RESET")) return reset(c);
    if (t.is("INSERT") || (t.is("EXECUTE") && c.peek_is("INSERT", 1))) return insert(c);
    if ((t.is("EXECUTE") && c.peek_is("STATEMENT", 1)) || (t.is("BEGIN") && c.peek_is("STATEMENT", 1)) ||
        (t.is("STATEMENT") && c.peek_is("SET", 1)))
      return statement_set(c);
    if (starts_query(c)) return QueryStatement{fe_.parse_query(lx_, c.index_ahead(0), e)};
    for (const char* kw : {"USE", "LOAD", "UNLOAD", "ADD", "REMOVE", "CALL", "TRUNCATE", "UPDATE", "DELETE", "MERGE"})
      if (t.is(kw)) c.unsupported(t, upper(t.text) + " statements are not supported");
    return unknown(c);
  }

  // Something clink has no statement form for: a ParseError when it is not SQL at all,
  // else name what PostgreSQL recognised.
  [[noreturn]] void unknown_statement(TokenCursor& c, size_t b) {
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
  Statement::Node unknown(TokenCursor& c) { unknown_statement(c, c.index_ahead(0)); }

  void expect_end(TokenCursor& c) {
    if (!c.at_end()) c.fail(c.peek(), "unexpected " + describe(c.peek()));
  }

  // ------------------------------------------------------------ CREATE

  Statement::Node create(TokenCursor& c) {
    size_t b = c.index_ahead(0);
    c.expect("CREATE");
    bool or_replace = c.accept_all({"OR", "REPLACE"});
    bool temporary = c.accept("TEMPORARY");
    bool system = temporary && c.accept("SYSTEM");
    if (c.peek_is("FUNCTION")) return create_function(c, temporary, system, or_replace);
    if (or_replace) c.unsupported(c.peek(), "CREATE OR REPLACE is only supported for functions");
    if (system) c.fail_expected("FUNCTION");
    if (c.accept("TABLE")) return create_table(c, temporary);
    if (c.accept("VIEW")) return create_view(c, temporary);
    for (const char* kw : {"CATALOG", "DATABASE", "MODEL"})
      if (c.peek_is(kw)) c.unsupported(c.peek(), "CREATE " + std::string(kw) + " is not supported");
    unknown_statement(c, b);
  }

  // An expression running to the next top-level ',' / ')' (or COMMENT, for columns).
  ExprPtr element_expression(TokenCursor& c) {
    size_t b = c.index_ahead(0);
    size_t e = c.find_top_level({",", ")", "COMMENT"});
    if (b >= e) c.fail_expected("an expression");
    ExprPtr expr = fe_.parse_expression(lx_, b, e);
    c.seek(e);
    return expr;
  }

  std::vector<std::string> name_list(TokenCursor& c, std::string_view what) {
    c.expect("(");
    std::vector<std::string> out;
    do out.push_back(c.identifier(what));
    while (c.accept(","));
    c.expect(")");
    return out;
  }

  void primary_key(TokenCursor& c, SchemaElements& out, PrimaryKey pk, bool column_level) {
    const Token& at = c.peek();
    c.expect("PRIMARY");
    c.expect("KEY");
    if (!column_level) pk.columns = name_list(c, "a key column");
    if (!c.accept_all({"NOT", "ENFORCED"}))
      c.unsupported(c.peek(), "PRIMARY KEY must be declared NOT ENFORCED (Flink does not enforce keys)");
    if (out.primary_key) c.fail(at, "a table can have only one PRIMARY KEY");
    out.primary_key = std::move(pk);
  }

  void schema_element(TokenCursor& c, SchemaElements& out) {
    SourcePosition pos = c.position();
    if (c.peek_is("WATERMARK") && c.peek_is("FOR", 1)) {
      c.next();
      c.next();
      WatermarkDef w;
      w.pos = pos;
      w.column = c.identifier("the event-time column");
      while (c.accept(".")) w.column += "." + c.identifier("a field name");
      c.expect("AS");
      w.expr = element_expression(c);
      out.watermarks.push_back(std::move(w));
      return;
    }
    if (c.peek_is("PRIMARY") || c.peek_is("CONSTRAINT")) {
      PrimaryKey pk;
      pk.pos = pos;
      if (c.accept("CONSTRAINT")) pk.constraint_name = c.identifier("a constraint name");
      primary_key(c, out, std::move(pk), false);
      return;
    }
    ColumnDef col;
    col.pos = pos;
    col.name = c.identifier("a column name");
    if (c.accept("AS")) {
      col.kind = ColumnDef::Kind::Computed;
      col.expr = element_expression(c);
      if (c.accept("COMMENT")) col.comment = c.string_literal("a comment string");
      out.columns.push_back(std::move(col));
      return;
    }
    col.type = parse_type(c);
    for (;;) {
      if (c.accept("METADATA")) {
        col.kind = ColumnDef::Kind::Metadata;
        if (c.accept("FROM")) col.metadata_key = c.string_literal("a metadata key string");
        if (c.accept("VIRTUAL")) col.is_virtual = true;
      } else if (c.peek_is("PRIMARY") || c.peek_is("CONSTRAINT")) {
        PrimaryKey pk;
        pk.pos = c.position();
        if (c.accept("CONSTRAINT")) pk.constraint_name = c.identifier("a constraint name");
        pk.columns = {col.name};
        primary_key(c, out, std::move(pk), true);
      } else if (c.accept("COMMENT")) {
        col.comment = c.string_literal("a comment string");
      } else if (c.peek_is("FIRST") || c.peek_is("AFTER")) {
        c.unsupported(c.peek(), "column positions (FIRST / AFTER) are not supported");
      } else {
        break;
      }
    }
    out.columns.push_back(std::move(col));
  }

  SchemaElements schema_list(TokenCursor& c) {
    SchemaElements out;
    c.expect("(");
    do schema_element(c, out);
    while (c.accept(","));
    c.expect(")");
    return out;
  }

  Statement::Node create_table(TokenCursor& c, bool temporary) {
    CreateTable t;
    t.temporary = temporary;
    t.if_not_exists = c.accept_all({"IF", "NOT", "EXISTS"});
    t.name = c.qualified_name("a table name");
    if (c.peek_is("(")) t.schema = schema_list(c);
    while (!c.at_end()) {
      if (c.accept("COMMENT")) {
        t.comment = c.string_literal("a comment string");
      } else if (c.accept("PARTITIONED")) {
        c.expect("BY");
        t.partitioned_by = name_list(c, "a partition column");
      } else if (c.accept("WITH")) {
        t.options = parse_property_list(c);
      } else if (c.peek_is("LIKE")) {
        LikeClause like;
        like.pos = c.position();
        c.next();
        like.source = c.qualified_name("the source table");
        if (c.accept("(")) {
          do {
            LikeOption o;
            const Token& mode = c.next();
            if (mode.is("INCLUDING")) o.mode = LikeOption::Mode::Including;
            else if (mode.is("EXCLUDING")) o.mode = LikeOption::Mode::Excluding;
            else if (mode.is("OVERWRITING")) o.mode = LikeOption::Mode::Overwriting;
            else c.fail(mode, "expected INCLUDING, EXCLUDING or OVERWRITING but found " + describe(mode));
            const Token& feature = c.next();
            o.feature = upper(feature.text);
            static const char* kFeatures[] = {"ALL", "CONSTRAINTS", "GENERATED", "METADATA",
                                              "OPTIONS", "PARTITIONS", "WATERMARKS"};
            bool known = false;
            for (const char* f : kFeatures) known = known || feature.is(f);
            if (!known) c.fail(feature, "expected a LIKE feature (ALL, CONSTRAINTS, GENERATED, METADATA, OPTIONS, PARTITIONS, WATERMARKS) but found " + describe(feature));
            like.options.push_back(o);
          } while (!c.peek_is(")") && (c.accept(",") || true));
          c.expect(")");
        }
        t.like = std::move(like);
      } else if (c.peek_is("AS")) {
        c.unsupported(c.peek(), "CREATE TABLE ... AS SELECT is not supported (create the table, then INSERT INTO it)");
      } else if (c.peek_is("DISTRIBUTED")) {
        c.unsupported(c.peek(), "DISTRIBUTED BY is not supported");
      } else {
        c.fail(c.peek(), "unexpected " + describe(c.peek()) + " in CREATE TABLE");
      }
    }
    return t;
  }

  Statement::Node create_view(TokenCursor& c, bool temporary) {
    CreateView v;
    v.temporary = temporary;
    v.if_not_exists = c.accept_all({"IF", "NOT", "EXISTS"});
    v.name = c.qualified_name("a view name");
    if (c.peek_is("(")) v.columns = name_list(c, "a column name");
    if (c.accept("COMMENT")) v.comment = c.string_literal("a comment string");
    c.expect("AS");
    v.query = fe_.parse_query(lx_, c.index_ahead(0), c.end_index());
    return v;
  }

  Statement::Node create_function(TokenCursor& c, bool temporary, bool system, bool or_replace) {
    c.expect("FUNCTION");
    CreateFunction f;
    f.temporary = temporary;
    f.system = system;
    f.or_replace = or_replace;
    f.if_not_exists = c.accept_all({"IF", "NOT", "EXISTS"});
    f.name = c.qualified_name("a function name");
    if (c.accept("(")) {
      f.has_params = true;
      if (!c.accept(")")) {
        do {
          FunctionParam p;
          p.pos = c.position();
          p.name = c.identifier("a parameter name");
          p.type = parse_type(c);
          f.params.push_back(std::move(p));
        } while (c.accept(","));
        c.expect(")");
      }
    }
    if (c.accept("RETURNS")) f.returns = parse_type(c);
    const Token* body = nullptr;
    while (!c.at_end()) {
      if (c.accept("AS")) {
        if (!f.definitions.empty()) c.fail(c.peek(), "AS is given twice");
        do {
          if (c.peek().kind == TokenKind::String) {
            body = &c.peek();
            f.definitions.push_back(c.string_literal("a definition"));
          } else {
            QualifiedName cls = c.qualified_name("a class name or a quoted definition");
            std::string joined;
            for (const auto& part : cls) joined += (joined.empty() ? "" : ".") + part;
            f.definitions.push_back(joined);
          }
        } while (c.accept(","));
      } else if (c.accept("LANGUAGE")) {
        f.language = upper(c.identifier("a language name"));
      } else if (c.peek_is("USING")) {
        c.unsupported(c.peek(), "CREATE FUNCTION ... USING JAR is not supported");
      } else {
        c.fail(c.peek(), "unexpected " + describe(c.peek()) + " in CREATE FUNCTION");
      }
    }
    if (f.definitions.empty()) c.fail_expected("AS '<definition>'");
    if (f.language.empty()) f.language = "JAVA";
    if (f.language == "SQL") {
      if (f.definitions.size() != 1 || !body)
        c.fail(c.peek(), "a LANGUAGE SQL function has exactly one quoted expression as its definition");
      if (!f.returns) c.fail(c.peek(), "a LANGUAGE SQL function needs RETURNS <type>");
      f.body = string_body_expression(*body);
    }
    return f;
  }

  // Parses the inside of a string literal as an expression, mapping positions into the
  // literal ('' escapes included).
  ExprPtr string_body_expression(const Token& literal) {
    preparse::MappedText body;
    body.origin = {literal.origin + 1};
    const std::string& raw = lx_.text.text;
    for (size_t i = literal.begin + 1; i + 1 < literal.end; ++i) {
      body.append(std::string_view(&raw[i], 1), lx_.text.original_offset(i));
      if (raw[i] == '\'') ++i;  // the second quote of ''
    }
    preparse::Lexed inner = preparse::tokenize(std::move(body), map_);
    if (inner.tokens.empty()) throw ParseError(map_.position(literal.origin), "the function body is empty");
    return fe_.parse_expression(inner, 0, inner.tokens.size());
  }

  // ------------------------------------------------------------ DROP / ALTER

  Statement::Node drop(TokenCursor& c) {
    size_t b = c.index_ahead(0);
    c.expect("DROP");
    Drop d;
    d.temporary = c.accept("TEMPORARY");
    d.system = d.temporary && c.accept("SYSTEM");
    if (c.accept("TABLE")) d.kind = Drop::Kind::Table;
    else if (c.accept("VIEW")) d.kind = Drop::Kind::View;
    else if (c.accept("FUNCTION")) d.kind = Drop::Kind::Function;
    else if (c.peek_is("CATALOG") || c.peek_is("DATABASE")) c.unsupported(c.peek(), "DROP " + upper(c.peek().text) + " is not supported");
    else if (!d.temporary) unknown_statement(c, b);
    else c.fail_expected("TABLE, VIEW or FUNCTION");
    d.if_exists = c.accept_all({"IF", "EXISTS"});
    do d.names.push_back(c.qualified_name("a name"));
    while (c.accept(","));
    if (c.peek_is("CASCADE") || c.peek_is("RESTRICT")) c.unsupported(c.peek(), "DROP ... CASCADE / RESTRICT is not supported");
    expect_end(c);
    return d;
  }

  SchemaElements elements_or_list(TokenCursor& c) {
    if (c.peek_is("(")) return schema_list(c);
    SchemaElements out;
    schema_element(c, out);
    return out;
  }

  AlterAction alter_action(TokenCursor& c) {
    AlterAction a;
    a.pos = c.position();
    const Token& verb = c.next();
    if (verb.is("ADD")) {
      a.kind = AlterAction::Kind::Add;
      c.accept("COLUMN");
      a.elements = elements_or_list(c);
    } else if (verb.is("MODIFY")) {
      a.kind = AlterAction::Kind::Modify;
      c.accept("COLUMN");
      a.elements = elements_or_list(c);
    } else if (verb.is("DROP")) {
      if (c.accept_all({"PRIMARY", "KEY"})) {
        a.kind = AlterAction::Kind::DropPrimaryKey;
      } else if (c.accept("CONSTRAINT")) {
        a.kind = AlterAction::Kind::DropPrimaryKey;
        a.new_name = c.identifier("a constraint name");
      } else if (c.accept("WATERMARK")) {
        a.kind = AlterAction::Kind::DropWatermark;
      } else {
        a.kind = AlterAction::Kind::DropColumns;
        c.accept("COLUMN");
        if (c.peek_is("(")) {
          a.columns = name_list(c, "a column name");
        } else {
          a.columns.push_back(c.identifier("a column name"));
        }
      }
    } else if (verb.is("ALTER")) {
      a.kind = AlterAction::Kind::AlterColumnType;
      c.accept("COLUMN");
      a.columns.push_back(c.identifier("a column name"));
      if (c.peek_is("SET") && !c.peek_is("DATA", 1))
        c.unsupported(c.peek(), "ALTER COLUMN ... SET NOT NULL / DEFAULT is not supported (clink does not enforce column constraints)");
      if (c.peek_is("DROP"))
        c.unsupported(c.peek(), "ALTER COLUMN ... DROP NOT NULL / DEFAULT is not supported");
      c.accept_all({"SET", "DATA"});
      c.expect("TYPE");
      a.type = parse_type(c);
      if (c.peek_is("USING")) c.unsupported(c.peek(), "ALTER COLUMN ... TYPE ... USING is not supported (there are no stored rows to convert)");
    } else if (verb.is("SET")) {
      a.kind = AlterAction::Kind::SetOptions;
      a.options = parse_property_list(c);
    } else if (verb.is("RESET")) {
      a.kind = AlterAction::Kind::ResetOptions;
      c.expect("(");
      do {
        if (c.peek().kind == TokenKind::String) {
          a.keys.push_back(c.string_literal("an option key"));
        } else {
          QualifiedName key = c.qualified_name("an option key");
          std::string joined;
          for (const auto& part : key) joined += (joined.empty() ? "" : ".") + part;
          a.keys.push_back(joined);
        }
      } while (c.accept(","));
      c.expect(")");
    } else if (verb.is("RENAME")) {
      if (c.accept("TO")) {
        a.kind = AlterAction::Kind::RenameTable;
        a.new_table_name = c.qualified_name("the new table name");
      } else {
        a.kind = AlterAction::Kind::RenameColumn;
        c.accept("COLUMN");
        a.columns.push_back(c.identifier("a column name"));
        c.expect("TO");
        a.new_name = c.identifier("the new column name");
      }
    } else {
      c.fail(verb, "expected ADD, MODIFY, DROP, ALTER, SET, RESET or RENAME but found " + describe(verb));
    }
    return a;
  }

  Statement::Node alter_table(TokenCursor& c) {
    c.expect("ALTER");
    c.expect("TABLE");
    AlterTable t;
    t.if_exists = c.accept_all({"IF", "EXISTS"});
    t.name = c.qualified_name("a table name");
    do t.actions.push_back(alter_action(c));
    while (c.accept(","));
    expect_end(c);
    return t;
  }

  // ------------------------------------------------------------ utility statements

  Statement::Node show(TokenCursor& c) {
    c.expect("SHOW");
    Show s;
    const Token& what = c.peek();
    if (c.accept("TABLES")) s.what = Show::What::Tables;
    else if (c.accept("VIEWS")) s.what = Show::What::Views;
    else if (c.accept("FUNCTIONS")) s.what = Show::What::Functions;
    else if (c.accept_all({"USER", "FUNCTIONS"})) s.what = Show::What::UserFunctions;
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
      c.unsupported(what, "SHOW " + upper(what.text) + " is not supported");
    } else {
      c.fail_expected("TABLES, VIEWS, FUNCTIONS, CREATE TABLE or COLUMNS");
    }
    expect_end(c);
    return s;
  }

  Statement::Node describe_statement(TokenCursor& c) {
    c.next();
    Describe d;
    d.extended = c.accept("EXTENDED");
    d.table = c.qualified_name("a table name");
    expect_end(c);
    return d;
  }

  Statement::Node analyze(TokenCursor& c) {
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

  Statement::Node explain(TokenCursor& c) {
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
  std::string raw_text(size_t b, size_t e) const {
    if (b >= e) return "";
    size_t from = lx_.tokens[b].origin;
    size_t to = lx_.text.original_offset(lx_.tokens[e - 1].end - 1) + 1;
    return std::string(map_.original().substr(from, to - from));
  }

  Statement::Node set(TokenCursor& c) {
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

  Statement::Node reset(TokenCursor& c) {
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

  Insert insert_statement(TokenCursor& c) {
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
    for (const Token* hint : c.hints_here())
      for (auto& h : preparse::parse_hint_token(lx_, *hint, map_)) ins.hints.push_back(std::move(h));
    if (c.accept("PARTITION")) ins.partition = parse_property_list(c);
    if (c.peek_is("(") && !starts_query(c, 1)) ins.columns = name_list(c, "a column name");
    if (!starts_query(c)) c.fail_expected("a query (SELECT, VALUES or WITH)");
    ins.query = fe_.parse_query(lx_, c.index_ahead(0), c.end_index());
    return ins;
  }

  Statement::Node insert(TokenCursor& c) { return insert_statement(c); }

  Statement::Node statement_set(TokenCursor& c) {
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

  Frontend& fe_;
  const Lexed& lx_;
  const preparse::SourceMap& map_;
};

}  // namespace

Script parse_statements(Frontend& frontend) { return StatementParser(frontend).script(); }

}  // namespace clink::sql::detail
