// CREATE TABLE / VIEW / FUNCTION, DROP and ALTER TABLE from tokens; embedded
// expressions and queries go to libpg_query through the Frontend.
#include "statement_parser.hpp"

namespace clink::sql::detail {

using namespace ast;

Statement::Node StatementParser::create(TokenCursor& c) {
  size_t b = c.index_ahead(0);
  c.expect("CREATE");
  bool or_replace = c.accept_all({"OR", "REPLACE"});
  bool temporary = c.accept("TEMPORARY");
  bool system = temporary && c.accept("SYSTEM");
  if (c.peek_is("FUNCTION")) return create_function(c, temporary, system, or_replace);
  if (c.peek_is("AGGREGATE") && !system) return create_aggregate(c, temporary, or_replace);
  if (system) c.fail_expected("FUNCTION");
  if (c.accept("VIEW")) return create_view(c, temporary, or_replace);
  if (or_replace) c.unsupported(c.peek(), "CREATE OR REPLACE is only supported for views and functions");
  if (c.accept("TABLE")) return create_table(c, temporary);
  if (c.peek_is("MODEL")) return create_model(c, temporary);
  for (const char* kw : {"CATALOG", "DATABASE"})
    if (c.peek_is(kw)) c.unsupported(c.peek(), "CREATE " + std::string(kw) + " is not supported");
  unknown_statement(c, b);
}

// An expression running to the next top-level ',' / ')' (or COMMENT, for columns).
ExprPtr StatementParser::element_expression(TokenCursor& c) {
  size_t b = c.index_ahead(0);
  size_t e = c.find_top_level({",", ")", "COMMENT"});
  if (b >= e) c.fail_expected("an expression");
  ExprPtr expr = fe_.parse_expression(lx_, b, e);
  c.seek(e);
  return expr;
}

std::vector<std::string> StatementParser::name_list(TokenCursor& c, std::string_view what) {
  c.expect("(");
  std::vector<std::string> out;
  do out.push_back(c.identifier(what));
  while (c.accept(","));
  c.expect(")");
  return out;
}

void StatementParser::primary_key(TokenCursor& c, SchemaElements& out, PrimaryKey pk, bool column_level) {
  const Token& at = c.peek();
  c.expect("PRIMARY");
  c.expect("KEY");
  if (!column_level) pk.columns = name_list(c, "a key column");
  if (!c.accept_all({"NOT", "ENFORCED"}))
    c.unsupported(c.peek(), "PRIMARY KEY must be declared NOT ENFORCED (Flink does not enforce keys)");
  if (out.primary_key) c.fail(at, "a table can have only one PRIMARY KEY");
  out.primary_key = std::move(pk);
}

void StatementParser::schema_element(TokenCursor& c, SchemaElements& out) {
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

SchemaElements StatementParser::schema_list(TokenCursor& c) {
  SchemaElements out;
  c.expect("(");
  do schema_element(c, out);
  while (c.accept(","));
  c.expect(")");
  return out;
}

Statement::Node StatementParser::create_table(TokenCursor& c, bool temporary) {
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
          o.feature = upper_case(feature.text);
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

Statement::Node StatementParser::create_view(TokenCursor& c, bool temporary, bool or_replace) {
  CreateView v;
  v.temporary = temporary;
  v.or_replace = or_replace;
  v.if_not_exists = c.accept_all({"IF", "NOT", "EXISTS"});
  if (v.if_not_exists && v.or_replace) c.fail(c.peek(), "OR REPLACE and IF NOT EXISTS cannot be combined");
  v.name = c.qualified_name("a view name");
  if (c.peek_is("(")) v.columns = name_list(c, "a column name");
  if (c.accept("COMMENT")) v.comment = c.string_literal("a comment string");
  c.expect("AS");
  v.query = fe_.parse_query(lx_, c.index_ahead(0), c.end_index());
  return v;
}

Statement::Node StatementParser::create_function(TokenCursor& c, bool temporary, bool system, bool or_replace) {
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
      f.definitions_pos = c.position();
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
      f.language = upper_case(c.identifier("a language name"));
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
ExprPtr StatementParser::string_body_expression(const Token& literal) {
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

Statement::Node StatementParser::drop(TokenCursor& c) {
  size_t b = c.index_ahead(0);
  c.expect("DROP");
  Drop d;
  d.temporary = c.accept("TEMPORARY");
  d.system = d.temporary && c.accept("SYSTEM");
  if (c.accept("TABLE")) d.kind = Drop::Kind::Table;
  else if (c.accept("VIEW")) d.kind = Drop::Kind::View;
  else if (c.accept("FUNCTION") || c.accept("AGGREGATE")) d.kind = Drop::Kind::Function;
  else if (c.accept("MODEL")) d.kind = Drop::Kind::Model;
  else if (c.peek_is("CATALOG") || c.peek_is("DATABASE")) c.unsupported(c.peek(), "DROP " + upper_case(c.peek().text) + " is not supported");
  else if (!d.temporary) unknown_statement(c, b);
  else c.fail_expected("TABLE, VIEW, FUNCTION or MODEL");
  d.if_exists = c.accept_all({"IF", "EXISTS"});
  do d.names.push_back(c.qualified_name("a name"));
  while (c.accept(","));
  if (c.peek_is("CASCADE") || c.peek_is("RESTRICT")) c.unsupported(c.peek(), "DROP ... CASCADE / RESTRICT is not supported");
  expect_end(c);
  return d;
}

SchemaElements StatementParser::elements_or_list(TokenCursor& c) {
  if (c.peek_is("(")) return schema_list(c);
  SchemaElements out;
  schema_element(c, out);
  return out;
}

AlterAction StatementParser::alter_action(TokenCursor& c) {
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

Statement::Node StatementParser::alter_table(TokenCursor& c) {
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

}  // namespace clink::sql::detail
