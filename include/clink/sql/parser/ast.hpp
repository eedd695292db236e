#pragma once
// clink's parser-agnostic SQL AST. Everything after the parser (catalog, binder,
// planner) works against these structs; libpg_query's tree never leaves
// src/sql/parser/ast_builder.cpp. Every node carries the SourcePosition of its first token in
// the ORIGINAL text. Identifiers keep the case the user wrote (Flink identifiers are
// case-sensitive); keywords and built-in syntax are canonical upper case.
//
// to_string() prints a node as canonical, fully parenthesised SQL, so the printed text
// shows the tree's structure (tests compare it).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "clink/sql/common/sql_error.hpp"
#include "clink/sql/parser/type_syntax.hpp"

namespace clink::sql::ast {

struct Expr;
struct Query;
struct TableRef;
struct Statement;
using ExprPtr = std::shared_ptr<const Expr>;
using QueryPtr = std::shared_ptr<const Query>;
using TableRefPtr = std::shared_ptr<const TableRef>;

// A possibly qualified name: catalog.db.table, t.column, ...
using QualifiedName = std::vector<std::string>;

// ---------------------------------------------------------------- expressions

struct Literal {
  enum class Kind { Null, Boolean, Integer, Decimal, Double, String, Binary, Date, Time, Timestamp, TimestampLtz };
  Kind kind = Kind::Null;
  // Exact source text for numbers ("-12", "1.50", "1.5E3"), the unescaped value for
  // strings and date/time literals, the hex digits of X'0AFF', "TRUE"/"FALSE" for booleans.
  std::string text;
};

// INTERVAL '<value>' <from>[(p)] [TO <to>[(p)]] with units folded to the singular.
struct IntervalLiteral {
  std::string value;        // the quoted text, e.g. "10", "1 2:03:04"
  bool negative = false;    // INTERVAL -'1' DAY
  std::string from_unit;    // YEAR MONTH WEEK DAY HOUR MINUTE SECOND MILLISECOND ...
  std::optional<int> from_precision;
  std::string to_unit;      // empty for a single unit
  std::optional<int> to_precision;  // the fractional second precision of "TO SECOND(p)"
};

struct ColumnRef {
  QualifiedName names;  // a | t.a | t.a.field (the binder resolves the prefix)
};

// `*` or `t.*` in a select list.
struct Star {
  QualifiedName qualifier;
};

struct Unary {
  std::string op;  // "-", "+", "NOT"
  ExprPtr operand;
};

struct Binary {
  // + - * / % = <> < <= > >= AND OR || and "IS DISTINCT FROM", "IS NOT DISTINCT FROM"
  std::string op;
  ExprPtr left;
  ExprPtr right;
};

struct IsTest {
  enum class What { Null, True, False, Unknown, Json };
  What what = What::Null;
  bool negated = false;
  ExprPtr operand;
  std::string json_kind;  // What::Json: VALUE (the default), SCALAR, ARRAY or OBJECT
};

struct Between {
  ExprPtr value, low, high;
  bool negated = false;
  bool symmetric = false;
};

struct InList {
  ExprPtr value;
  std::vector<ExprPtr> list;
  bool negated = false;
};

struct InSubquery {
  ExprPtr value;
  QueryPtr query;
  bool negated = false;
};

struct Exists {
  QueryPtr query;
};

struct ScalarSubquery {
  QueryPtr query;
};

struct Like {
  bool similar = false;  // SIMILAR TO instead of LIKE
  bool negated = false;
  ExprPtr value, pattern, escape;  // escape may be null
};

struct OrderItem;

// A window frame bound: UNBOUNDED PRECEDING, <offset> PRECEDING, CURRENT ROW, ...
struct FrameBound {
  enum class Kind { UnboundedPreceding, Preceding, CurrentRow, Following, UnboundedFollowing };
  Kind kind = Kind::CurrentRow;
  ExprPtr offset;  // for Preceding / Following
};

struct WindowFrame {
  enum class Mode { Rows, Range };
  Mode mode = Mode::Rows;
  FrameBound start;
  std::optional<FrameBound> end;  // absent without BETWEEN
};

struct WindowSpec {
  std::string ref;  // OVER w / OVER (w ...): a window of the query's WINDOW clause
  std::vector<ExprPtr> partition_by;
  std::vector<OrderItem> order_by;
  std::optional<WindowFrame> frame;
};

// WINDOW w AS (...) in a SELECT.
struct NamedWindow {
  std::string name;
  std::shared_ptr<const WindowSpec> spec;
  SourcePosition pos;
};

// The SQL/JSON clauses of JSON_VALUE / JSON_QUERY / JSON_EXISTS:
// JSON_VALUE(j, path [RETURNING type] [behavior ON EMPTY] [behavior ON ERROR]).
struct JsonBehavior {
  enum class Kind { Null, Error, Default, EmptyArray, EmptyObject, True, False, Unknown };
  Kind kind = Kind::Null;
  ExprPtr default_value;  // Kind::Default
};

struct JsonClauses {
  std::optional<TypeName> returning;
  enum class Wrapper { Unspecified, Without, Conditional, Unconditional };
  Wrapper wrapper = Wrapper::Unspecified;  // JSON_QUERY's [ARRAY] WRAPPER
  std::optional<JsonBehavior> on_empty;
  std::optional<JsonBehavior> on_error;
  // JSON_OBJECT / JSON_ARRAY: {NULL | ABSENT} ON NULL as written, and whether the members
  // were written `[KEY] k VALUE v` (printing only; the arguments are k, v, ...).
  std::optional<std::string> on_null;
  bool key_value = false;
};

struct FunctionCall {
  QualifiedName name;               // as written (case kept); built-ins resolve case-insensitively
  std::vector<ExprPtr> args;
  std::vector<std::string> arg_names;  // named arguments (`a => 1`, upper case); empty or one per arg
  bool distinct = false;
  bool star = false;                // COUNT(*)
  ExprPtr filter;                   // FILTER (WHERE ...)
  std::shared_ptr<const WindowSpec> over;
  std::shared_ptr<const JsonClauses> json;  // JSON_VALUE / JSON_QUERY / JSON_EXISTS clauses
  bool ignore_nulls = false;        // ARRAY_AGG(x IGNORE NULLS)
};

struct CaseWhen {
  ExprPtr when, then;
};

struct Case {
  ExprPtr operand;  // null for a searched CASE
  std::vector<CaseWhen> whens;
  ExprPtr otherwise;  // null when there is no ELSE
};

struct Cast {
  ExprPtr value;
  TypeName type;
  bool try_cast = false;
};

struct Extract {
  std::string unit;  // upper case: YEAR, MONTH, DOW, EPOCH, ...
  ExprPtr value;
};

struct Position {
  ExprPtr needle, haystack;  // POSITION(needle IN haystack)
};

struct Substring {
  ExprPtr value, from, length;  // length may be null
};

struct Trim {
  enum class Side { Both, Leading, Trailing };
  Side side = Side::Both;
  ExprPtr characters;  // null: spaces
  ExprPtr value;
};

struct Overlay {
  ExprPtr value, placing, from, length;  // length may be null
};

// FLOOR(x TO unit) / CEIL(x TO unit). Plain FLOOR(x) is a FunctionCall.
struct FloorCeil {
  bool ceil = false;
  ExprPtr value;
  std::string unit;
};

// CURRENT_TIMESTAMP, CURRENT_DATE, CURRENT_TIME, LOCALTIMESTAMP, LOCALTIME (no parentheses).
struct CurrentTime {
  std::string name;
  std::optional<int> precision;
};

struct ArrayConstructor {
  std::vector<ExprPtr> elements;
};

struct MapConstructor {
  std::vector<ExprPtr> keys_and_values;  // k1, v1, k2, v2, ...
};

struct RowConstructor {
  std::vector<ExprPtr> fields;
  bool explicit_row = true;  // ROW(a, b) vs (a, b)
};

struct Subscript {
  ExprPtr base, index;  // base[index]
};

struct FieldAccess {
  ExprPtr base;
  std::string field;  // (base).field
};

struct Expr {
  using Node = std::variant<Literal, IntervalLiteral, ColumnRef, Star, Unary, Binary, IsTest, Between,
                            InList, InSubquery, Exists, ScalarSubquery, Like, FunctionCall, Case, Cast,
                            Extract, Position, Substring, Trim, Overlay, FloorCeil, CurrentTime,
                            ArrayConstructor, MapConstructor, RowConstructor, Subscript, FieldAccess>;
  SourcePosition pos;
  Node node;

  template <class T>
  const T* as() const { return std::get_if<T>(&node); }
};

template <class T>
ExprPtr make_expr(SourcePosition pos, T node) {
  return std::make_shared<const Expr>(Expr{pos, Expr::Node(std::move(node))});
}

// ---------------------------------------------------------------- queries

struct OrderItem {
  ExprPtr expr;
  bool descending = false;
  std::optional<bool> nulls_first;  // absent: the default for the direction
  SourcePosition pos;
};

struct SelectItem {
  ExprPtr expr;  // a Star node for * and t.*
  std::optional<std::string> alias;
  SourcePosition pos;
};

// A `'key' = 'value'` pair: WITH options, table hints, PARTITION specs.
struct Property {
  std::string key;    // spelled exactly as written (without the quotes)
  std::string value;  // the unquoted value text
  SourcePosition pos;
};

// A table hint /*+ NAME(k = v, ...) */ after a table name (only OPTIONS is accepted).
struct TableHint {
  std::string name;  // upper case: OPTIONS
  std::vector<Property> options;
  SourcePosition pos;
};

struct NamedTable {
  QualifiedName name;
  std::vector<TableHint> hints;
  // `t FOR SYSTEM_TIME AS OF <expr>`: the right side of a temporal join (null: none).
  ExprPtr system_time;
};

struct DerivedTable {
  QueryPtr query;
  bool lateral = false;  // LATERAL (SELECT ...): it may read the FROM items on its left
};

// One argument of a window table-valued function.
struct TvfArg {
  enum class Kind { Table, Descriptor, Expression, Model };
  Kind kind = Kind::Expression;
  std::string name;                       // named argument, upper case (DATA, TIMECOL, SIZE, ...), else empty
  QualifiedName table;                    // Kind::Table: TABLE t; Kind::Model: MODEL m
  std::vector<QualifiedName> partition_by;  // Kind::Table: SESSION's PARTITION BY keys
  std::vector<QualifiedName> order_by;      // Kind::Table: a process table function's ORDER BY
  std::vector<bool> order_descending;       // per order_by column
  SourcePosition order_by_pos;
  std::vector<std::string> columns;       // Kind::Descriptor: DESCRIPTOR(c, ...)
  ExprPtr expr;                           // Kind::Expression (null: DEFAULT)
  SourcePosition pos;
};

// TABLE(TUMBLE(...)) / HOP / CUMULATE / SESSION in FROM; also a process table function
// call `f(TABLE t PARTITION BY k, ...)` (any other function name, as written).
struct WindowTvf {
  std::string function;  // TUMBLE, HOP, CUMULATE, SESSION, or the process table function
  std::vector<TvfArg> args;
};

// A table function in FROM: UNNEST(collection) [WITH ORDINALITY], or LATERAL TABLE(f(args))
// (a function of the registry). Its arguments may refer to the FROM items on its left
// (a correlation: Flink's Correlate).
struct TableFunction {
  QualifiedName name;  // UNNEST, or the user function as written
  std::vector<ExprPtr> args;
  bool with_ordinality = false;  // UNNEST ... WITH ORDINALITY: a 1-based INT column last
  bool lateral_table = false;    // written LATERAL TABLE(...)
};

struct Join {
  enum class Type { Inner, Left, Right, Full, Cross };
  Type type = Type::Inner;
  bool natural = false;
  TableRefPtr left, right;
  ExprPtr on;                       // null for CROSS / USING / NATURAL
  std::vector<std::string> using_columns;
};

// `input MATCH_RECOGNIZE (...)` (Flink's row pattern recognition). The PATTERN is a
// concatenation of variables, each with its quantifier (Flink's syntax; parenthesised
// groups and alternation are rejected by the clause parser).
struct MatchPatternTerm {
  std::string variable;
  int min = 1;
  int max = 1;             // -1: unbounded
  bool reluctant = false;  // B+? B*? B{n,}? ...
  std::string quantifier;  // as written ("", "+", "*?", "{2,3}")
  SourcePosition pos;
};

struct MatchDefine {
  std::string variable;
  ExprPtr condition;
  SourcePosition pos;
};

struct MatchRecognize {
  TableRefPtr input;
  std::vector<ExprPtr> partition_by;
  std::vector<OrderItem> order_by;
  std::vector<SelectItem> measures;  // each with its alias
  // ALL ROWS PER MATCH (a clink extension: Flink 2.3 rejects it). A measure's navigations,
  // aggregates and pattern column references are RUNNING then, but those written FINAL,
  // which the clause parser wraps in a call FINAL(x); ONE ROW PER MATCH: all are final.
  bool all_rows = false;
  enum class Skip { PastLastRow, ToNextRow, ToFirst, ToLast };
  Skip skip = Skip::PastLastRow;
  std::string skip_variable;  // ToFirst / ToLast
  SourcePosition skip_pos;
  std::vector<MatchPatternTerm> pattern;
  SourcePosition pattern_pos;
  ExprPtr within;  // an INTERVAL literal, or null
  std::vector<MatchDefine> define;
};

struct TableRef {
  using Node = std::variant<NamedTable, DerivedTable, WindowTvf, TableFunction, Join, MatchRecognize>;
  SourcePosition pos;
  Node node;
  std::optional<std::string> alias;
  std::vector<std::string> column_aliases;  // AS t(a, b)
};

struct GroupingElement {
  enum class Kind { Expression, Empty, Sets, Rollup, Cube, Row };  // Row: (a, b) inside SETS
  Kind kind = Kind::Expression;
  ExprPtr expr;                           // Kind::Expression
  std::vector<GroupingElement> children;  // Sets / Rollup / Cube / Row
  SourcePosition pos;
};

struct Select {
  bool distinct = false;
  std::vector<SelectItem> items;
  std::vector<TableRefPtr> from;  // comma-separated FROM items
  ExprPtr where;
  std::vector<GroupingElement> group_by;
  ExprPtr having;
  std::vector<NamedWindow> windows;  // the WINDOW clause
};

struct SetOperation {
  enum class Op { Union, Intersect, Except };
  Op op = Op::Union;
  bool all = false;
  QueryPtr left, right;
};

struct Values {
  std::vector<std::vector<ExprPtr>> rows;
};

struct CommonTableExpr {
  std::string name;
  std::vector<std::string> columns;
  QueryPtr query;
  SourcePosition pos;
};

struct Query {
  using Body = std::variant<Select, SetOperation, Values>;
  SourcePosition pos;
  std::vector<CommonTableExpr> with;
  Body body;
  std::vector<OrderItem> order_by;
  ExprPtr limit;   // LIMIT n or FETCH FIRST n ROWS ONLY
  ExprPtr offset;
};

// ---------------------------------------------------------------- DDL pieces

struct ColumnDef {
  enum class Kind { Physical, Computed, Metadata };
  Kind kind = Kind::Physical;
  std::string name;
  TypeName type;        // Physical, Metadata
  ExprPtr expr;         // Computed: c AS expr
  std::optional<std::string> metadata_key;  // METADATA FROM 'key'
  bool is_virtual = false;                  // METADATA ... VIRTUAL
  std::string comment;
  SourcePosition pos;
};

struct WatermarkDef {
  std::string column;  // may be a nested path "a.b" as written
  ExprPtr expr;
  SourcePosition pos;
};

struct PrimaryKey {
  std::string constraint_name;  // empty when unnamed
  std::vector<std::string> columns;
  SourcePosition pos;
};

// The column list body of CREATE TABLE and ALTER TABLE ADD / MODIFY.
struct SchemaElements {
  std::vector<ColumnDef> columns;
  std::vector<WatermarkDef> watermarks;
  std::optional<PrimaryKey> primary_key;
};

struct LikeOption {
  enum class Mode { Including, Excluding, Overwriting };
  Mode mode = Mode::Including;
  std::string feature;  // ALL CONSTRAINTS GENERATED METADATA OPTIONS PARTITIONS WATERMARKS
};

struct LikeClause {
  QualifiedName source;
  std::vector<LikeOption> options;
  SourcePosition pos;
};

// ---------------------------------------------------------------- statements

struct CreateTable {
  QualifiedName name;
  bool temporary = false;
  bool if_not_exists = false;
  SchemaElements schema;
  std::string comment;
  std::vector<std::string> partitioned_by;
  std::vector<Property> options;  // WITH (...) in the order written
  std::optional<LikeClause> like;
};

struct CreateView {
  QualifiedName name;
  bool or_replace = false;  // CREATE OR REPLACE VIEW (as the seed's catalog allows)
  bool temporary = false;
  bool if_not_exists = false;
  std::vector<std::string> columns;  // column aliases
  std::string comment;
  QueryPtr query;
};

struct FunctionParam {
  std::string name;
  TypeName type;
  SourcePosition pos;
};

// CREATE [TEMPORARY [SYSTEM]] FUNCTION [IF NOT EXISTS] f AS 'class' [LANGUAGE JAVA]
// CREATE [OR REPLACE] FUNCTION f(x T, ...) RETURNS T AS '<expr>' LANGUAGE SQL
struct CreateFunction {
  QualifiedName name;
  bool temporary = false;
  bool system = false;
  bool if_not_exists = false;
  bool or_replace = false;
  bool has_params = false;            // a parenthesised parameter list was written
  std::vector<FunctionParam> params;
  std::optional<TypeName> returns;
  std::vector<std::string> definitions;  // the AS strings (class name, body, module path...)
  SourcePosition definitions_pos;        // where the first AS definition starts
  std::string language;                  // upper case; JAVA when not written
  ExprPtr body;                          // LANGUAGE SQL: the parsed definition
};

// CREATE [TEMPORARY] MODEL [IF NOT EXISTS] m INPUT (c T, ...) OUTPUT (c T, ...)
// [COMMENT '...'] WITH ('provider' = '...', ...) (Flink 2.x; model_statements.cpp).
struct CreateModel {
  QualifiedName name;
  bool temporary = false;
  bool if_not_exists = false;
  std::vector<FunctionParam> input, output;
  std::string comment;
  std::vector<Property> options;
  SourcePosition options_pos;  // of WITH
};

struct Drop {
  enum class Kind { Table, View, Function, Model };
  Kind kind = Kind::Table;
  bool temporary = false;
  bool system = false;
  bool if_exists = false;
  std::vector<QualifiedName> names;
};

struct AlterAction {
  enum class Kind {
    Add, Modify, DropColumns, DropPrimaryKey, DropWatermark, AlterColumnType, SetOptions,
    ResetOptions, RenameColumn, RenameTable
  };
  Kind kind = Kind::Add;
  SchemaElements elements;            // Add, Modify
  std::vector<std::string> columns;   // DropColumns; AlterColumnType / RenameColumn: [column]
  TypeName type;                      // AlterColumnType
  std::vector<Property> options;      // SetOptions
  std::vector<std::string> keys;      // ResetOptions
  std::string new_name;               // RenameColumn
  QualifiedName new_table_name;       // RenameTable
  SourcePosition pos;
};

struct AlterTable {
  QualifiedName name;
  bool if_exists = false;
  std::vector<AlterAction> actions;  // applied in order
};

struct Show {
  enum class What {
    Tables, Views, Functions, UserFunctions, CreateTable, CreateView, Columns,
    Catalogs, Databases, CurrentCatalog, CurrentDatabase, Jobs, Jars,  // the SQL client's
    Models, CreateModel, MaterializedTables, CreateMaterializedTable
  };
  What what = What::Tables;
  QualifiedName object;  // CREATE TABLE / CREATE VIEW / COLUMNS
  std::optional<std::string> like;  // [NOT] LIKE '<pattern>' (SQL's % and _)
  bool not_like = false;
};

// USE CATALOG c / USE [c.]db: clink has Flink's default catalog and database only.
struct Use {
  bool catalog = false;
  QualifiedName name;
};

// STOP JOB 'id' [WITH SAVEPOINT] [WITH DRAIN]: a job of the cluster the client talks to.
struct StopJob {
  std::string job_id;
  bool with_savepoint = false;
  bool with_drain = false;
};

// ADD JAR 'path' / REMOVE JAR 'path': Java code, which clink does not load (answered by name).
struct Jar {
  bool add = true;
  std::string path;
};

struct Describe {
  QualifiedName table;
  bool extended = false;
};

struct AnalyzeTable {
  QualifiedName table;
  std::vector<Property> partition;
  bool for_all_columns = false;
  std::vector<std::string> columns;  // FOR COLUMNS a, b
};

struct Explain {
  std::vector<std::string> details;  // ESTIMATED_COST, CHANGELOG_MODE, ... (upper case)
  std::shared_ptr<const Statement> statement;
};

struct Set {
  std::optional<std::string> key;  // absent: SET lists the configuration
  std::optional<std::string> value;
};

struct Reset {
  std::optional<std::string> key;  // absent: reset everything
};

struct Insert {
  bool overwrite = false;
  QualifiedName table;
  std::vector<TableHint> hints;
  std::vector<Property> partition;
  std::vector<std::string> columns;
  QueryPtr query;
  SourcePosition pos;
};

struct StatementSet {
  std::vector<Insert> inserts;
};

struct QueryStatement {
  QueryPtr query;
};

// Flink 2.x materialized tables and the seed's materialized views (one mechanism, two
// spellings; src/sql/handler/materialized_table.cpp):
//   CREATE MATERIALIZED TABLE t [(PRIMARY KEY (..) NOT ENFORCED)] [COMMENT ..]
//     [PARTITIONED BY (..)] [WITH (..)] [FRESHNESS = INTERVAL ..] [REFRESH_MODE = ..] AS query
//   CREATE MATERIALIZED VIEW v [WITH (freshness = '5m', ..)] AS query
//   ALTER MATERIALIZED TABLE t SUSPEND | RESUME [WITH (..)] | REFRESH [PARTITION (k = 'v')]
//     | AS query | ADD | MODIFY (..) | DROP column(s) | WATERMARK | PRIMARY KEY | CONSTRAINT c
//   REFRESH MATERIALIZED VIEW v;  DROP MATERIALIZED TABLE | VIEW [IF EXISTS] t
struct MaterializedTable {
  // AlterQuery: ALTER ... AS <query> (and CREATE OR ALTER of an existing table).
  // AlterSchema: ALTER ... ADD / MODIFY / DROP (Flink 2.3's schema changes, in `schema_change`).
  enum class Action { Create, Suspend, Resume, Refresh, Drop, AlterQuery, AlterSchema };
  Action action = Action::Create;
  bool view = false;  // the MATERIALIZED VIEW spelling
  bool or_alter = false;  // CREATE OR ALTER: an existing table's query is altered
  QualifiedName name;
  bool if_exists = false;
  bool if_not_exists = false;
  std::optional<PrimaryKey> primary_key;
  std::string comment;
  std::vector<std::string> partitioned_by;
  std::vector<Property> options;  // WITH (...); RESUME WITH (...)
  std::optional<std::int64_t> freshness_ms;  // FRESHNESS = INTERVAL ...
  SourcePosition freshness_pos;
  std::string refresh_mode;  // CONTINUOUS / FULL (upper case), empty: derived
  SourcePosition refresh_mode_pos;
  QueryPtr query;
  std::string query_sql;  // the defining query as written
  SourcePosition query_pos;
  std::vector<Property> partition;  // REFRESH PARTITION (k = 'v', ...)
  std::optional<AlterAction> schema_change;  // AlterSchema (DropPrimaryKey with a name: DROP CONSTRAINT)
};

struct Statement {
  using Node = std::variant<CreateTable, CreateView, CreateFunction, Drop, AlterTable, Show, Describe,
                            AnalyzeTable, Explain, Set, Reset, Insert, StatementSet, QueryStatement, Use,
                            StopJob, Jar, MaterializedTable, CreateModel>;
  SourcePosition pos;
  size_t begin = 0;  // byte span [begin, end) in the original script, without the ';'
  size_t end = 0;
  std::string text;  // the statement's original text
  Node node;

  template <class T>
  const T* as() const { return std::get_if<T>(&node); }
};

struct Script {
  std::vector<Statement> statements;
};

// ---------------------------------------------------------------- printing

std::string to_string(const Expr& expr);
std::string to_string(const ExprPtr& expr);
std::string to_string(const Query& query);
std::string to_string(const TableRef& table);
std::string to_string(const Statement& statement);
std::string to_string(const Script& script);  // one statement per line, each ending in ';'
// An identifier as clink prints it: bare when it is a simple name, else in backticks.
std::string quote_identifier(const std::string& name);
std::string quote_string(const std::string& value);

}  // namespace clink::sql::ast
