// Canonical, fully parenthesised SQL text of AST nodes (see ast.hpp).
#include <cctype>

#include "clink/sql/parser/ast.hpp"
#include "clink/sql/parser/flink_sql_text.hpp"
#include "clink/sql/parser/preparse.hpp"

namespace clink::sql::ast {

namespace {

template <class T, class F>
std::string join(const std::vector<T>& items, F&& f, const char* sep = ", ") {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + f(items[i]);
  return out;
}

bool simple_name(const std::string& n) {
  bool simple = !n.empty() && (std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_');
  for (char c : n) simple = simple && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  return simple;
}

std::string name(const QualifiedName& n) { return join(n, quote_identifier, "."); }
std::string names(const std::vector<std::string>& n) { return join(n, quote_identifier); }
std::string expr_list(const std::vector<ExprPtr>& es) {
  return join(es, [](const ExprPtr& e) { return to_string(e); });
}
std::string properties(const std::vector<Property>& ps) {
  return "(" + join(ps, [](const Property& p) { return quote_string(p.key) + " = " + quote_string(p.value); }) + ")";
}
std::string hints(const std::vector<TableHint>& hs) {
  if (hs.empty()) return "";
  return " /*+ " + join(hs, [](const TableHint& h) { return h.name + properties(h.options); }) + " */";
}

std::string json_behavior(const JsonBehavior& b) {
  switch (b.kind) {
    case JsonBehavior::Kind::Null: return "NULL";
    case JsonBehavior::Kind::Error: return "ERROR";
    case JsonBehavior::Kind::Default: return "DEFAULT " + to_string(b.default_value);
    case JsonBehavior::Kind::EmptyArray: return "EMPTY ARRAY";
    case JsonBehavior::Kind::EmptyObject: return "EMPTY OBJECT";
    case JsonBehavior::Kind::True: return "TRUE";
    case JsonBehavior::Kind::False: return "FALSE";
    case JsonBehavior::Kind::Unknown: return "UNKNOWN";
  }
  return "";
}

std::string json_clauses(const JsonClauses& j) {
  std::string s;
  if (j.returning) s += " RETURNING " + to_string(*j.returning);
  if (j.wrapper == JsonClauses::Wrapper::Without) s += " WITHOUT ARRAY WRAPPER";
  if (j.wrapper == JsonClauses::Wrapper::Conditional) s += " WITH CONDITIONAL ARRAY WRAPPER";
  if (j.wrapper == JsonClauses::Wrapper::Unconditional) s += " WITH UNCONDITIONAL ARRAY WRAPPER";
  if (j.on_empty) s += " " + json_behavior(*j.on_empty) + " ON EMPTY";
  if (j.on_error) s += " " + json_behavior(*j.on_error) + " ON ERROR";
  if (j.on_null) s += " " + *j.on_null + " ON NULL";
  return s;
}

std::string order_items(const std::vector<OrderItem>& items) {
  return join(items, [](const OrderItem& o) {
    std::string s = to_string(o.expr);
    if (o.descending) s += " DESC";
    if (o.nulls_first) s += *o.nulls_first ? " NULLS FIRST" : " NULLS LAST";
    return s;
  });
}

std::string bound(const FrameBound& b) {
  switch (b.kind) {
    case FrameBound::Kind::UnboundedPreceding: return "UNBOUNDED PRECEDING";
    case FrameBound::Kind::UnboundedFollowing: return "UNBOUNDED FOLLOWING";
    case FrameBound::Kind::CurrentRow: return "CURRENT ROW";
    case FrameBound::Kind::Preceding: return to_string(b.offset) + " PRECEDING";
    case FrameBound::Kind::Following: return to_string(b.offset) + " FOLLOWING";
  }
  return "";
}

std::string window(const WindowSpec& w) {
  std::vector<std::string> parts;
  if (!w.ref.empty()) parts.push_back(quote_identifier(w.ref));
  if (!w.partition_by.empty()) parts.push_back("PARTITION BY " + expr_list(w.partition_by));
  if (!w.order_by.empty()) parts.push_back("ORDER BY " + order_items(w.order_by));
  if (w.frame) {
    std::string f = w.frame->mode == WindowFrame::Mode::Rows ? "ROWS " : "RANGE ";
    if (w.frame->end) {
      f += "BETWEEN " + bound(w.frame->start) + " AND " + bound(*w.frame->end);
    } else {
      f += bound(w.frame->start);
    }
    parts.push_back(f);
  }
  return "(" + join(parts, [](const std::string& s) { return s; }, " ") + ")";
}

std::string grouping(const GroupingElement& g) {
  auto children = [&] { return "(" + join(g.children, grouping) + ")"; };
  switch (g.kind) {
    case GroupingElement::Kind::Expression: return to_string(g.expr);
    case GroupingElement::Kind::Empty: return "()";
    case GroupingElement::Kind::Sets: return "GROUPING SETS " + children();
    case GroupingElement::Kind::Rollup: return "ROLLUP " + children();
    case GroupingElement::Kind::Cube: return "CUBE " + children();
    case GroupingElement::Kind::Row: return children();
  }
  return "";
}

std::string tvf_arg(const TvfArg& a) {
  std::string s = a.name.empty() ? "" : a.name + " => ";
  switch (a.kind) {
    case TvfArg::Kind::Table:
      s += "TABLE " + name(a.table);
      if (!a.partition_by.empty()) s += " PARTITION BY (" + join(a.partition_by, name) + ")";
      return s;
    case TvfArg::Kind::Descriptor: return s + "DESCRIPTOR(" + names(a.columns) + ")";
    case TvfArg::Kind::Expression: return s + to_string(a.expr);
    case TvfArg::Kind::Model: return s + "MODEL " + name(a.table);
  }
  return s;
}

struct ExprPrinter {
  std::string operator()(const Literal& l) const {
    switch (l.kind) {
      case Literal::Kind::Null: return "NULL";
      case Literal::Kind::String: return quote_string(l.text);
      case Literal::Kind::Binary: return "X" + quote_string(l.text);
      case Literal::Kind::Date: return "DATE " + quote_string(l.text);
      case Literal::Kind::Time: return "TIME " + quote_string(l.text);
      case Literal::Kind::Timestamp: return "TIMESTAMP " + quote_string(l.text);
      case Literal::Kind::TimestampLtz: return "TIMESTAMP_LTZ " + quote_string(l.text);
      default: return l.text;
    }
  }
  std::string operator()(const IntervalLiteral& i) const {
    std::string s = std::string("INTERVAL ") + (i.negative ? "-" : "") + quote_string(i.value) + " " + i.from_unit;
    if (i.from_precision) s += "(" + std::to_string(*i.from_precision) + ")";
    if (!i.to_unit.empty()) s += " TO " + i.to_unit;
    if (i.to_precision) s += "(" + std::to_string(*i.to_precision) + ")";
    return s;
  }
  std::string operator()(const ColumnRef& c) const { return name(c.names); }
  std::string operator()(const Star& s) const { return s.qualifier.empty() ? "*" : name(s.qualifier) + ".*"; }
  std::string operator()(const Unary& u) const { return "(" + u.op + " " + to_string(u.operand) + ")"; }
  std::string operator()(const Binary& b) const {
    return "(" + to_string(b.left) + " " + b.op + " " + to_string(b.right) + ")";
  }
  std::string operator()(const IsTest& t) const {
    static const char* kWhat[] = {"NULL", "TRUE", "FALSE", "UNKNOWN", "JSON"};
    std::string kind = t.what == IsTest::What::Json ? " " + t.json_kind : "";
    return "(" + to_string(t.operand) + (t.negated ? " IS NOT " : " IS ") + kWhat[static_cast<int>(t.what)] + kind + ")";
  }
  std::string operator()(const Between& b) const {
    return "(" + to_string(b.value) + (b.negated ? " NOT" : "") + " BETWEEN " + (b.symmetric ? "SYMMETRIC " : "") +
           to_string(b.low) + " AND " + to_string(b.high) + ")";
  }
  std::string operator()(const InList& i) const {
    return "(" + to_string(i.value) + (i.negated ? " NOT IN (" : " IN (") + expr_list(i.list) + "))";
  }
  std::string operator()(const InSubquery& i) const {
    return "(" + to_string(i.value) + (i.negated ? " NOT IN (" : " IN (") + to_string(*i.query) + "))";
  }
  std::string operator()(const Exists& e) const { return "(EXISTS (" + to_string(*e.query) + "))"; }
  std::string operator()(const ScalarSubquery& s) const { return "(" + to_string(*s.query) + ")"; }
  std::string operator()(const Like& l) const {
    std::string s = "(" + to_string(l.value) + (l.negated ? " NOT" : "") + (l.similar ? " SIMILAR TO " : " LIKE ") +
                    to_string(l.pattern);
    if (l.escape) s += " ESCAPE " + to_string(l.escape);
    return s + ")";
  }
  std::string operator()(const FunctionCall& f) const {
    // Function names are never keywords in need of quotes (COALESCE, GROUPING, ...).
    std::string s = join(f.name, [](const std::string& part) { return simple_name(part) ? part : quote_identifier(part); }, ".") + "(";
    if (f.distinct) s += "DISTINCT ";
    if (f.star) s += "*";
    const bool key_value = f.json && f.json->key_value;
    for (size_t i = 0; i < f.args.size(); ++i) {
      if (key_value) {  // JSON_OBJECT(KEY k VALUE v, ...)
        s += i % 2 == 0 ? (i ? ", KEY " : "KEY ") : " VALUE ";
      } else if (i) {
        s += ", ";
      }
      if (i < f.arg_names.size()) s += f.arg_names[i] + " => ";
      s += to_string(f.args[i]);
    }
    if (f.ignore_nulls) s += " IGNORE NULLS";
    if (f.json) {
      std::string clauses = json_clauses(*f.json);
      if (f.args.empty() && !clauses.empty()) clauses.erase(0, 1);  // JSON_OBJECT(NULL ON NULL)
      s += clauses;
    }
    s += ")";
    if (f.filter) s += " FILTER (WHERE " + to_string(f.filter) + ")";
    if (f.over) s += " OVER " + window(*f.over);
    return s;
  }
  std::string operator()(const Case& c) const {
    std::string s = "CASE";
    if (c.operand) s += " " + to_string(c.operand);
    for (const auto& w : c.whens) s += " WHEN " + to_string(w.when) + " THEN " + to_string(w.then);
    if (c.otherwise) s += " ELSE " + to_string(c.otherwise);
    return s + " END";
  }
  std::string operator()(const Cast& c) const {
    return std::string(c.try_cast ? "TRY_CAST(" : "CAST(") + to_string(c.value) + " AS " + to_string(c.type) + ")";
  }
  std::string operator()(const Extract& e) const { return "EXTRACT(" + e.unit + " FROM " + to_string(e.value) + ")"; }
  std::string operator()(const Position& p) const {
    return "POSITION(" + to_string(p.needle) + " IN " + to_string(p.haystack) + ")";
  }
  std::string operator()(const Substring& s) const {
    return "SUBSTRING(" + to_string(s.value) + " FROM " + to_string(s.from) +
           (s.length ? " FOR " + to_string(s.length) : "") + ")";
  }
  std::string operator()(const Trim& t) const {
    static const char* kSide[] = {"BOTH", "LEADING", "TRAILING"};
    return std::string("TRIM(") + kSide[static_cast<int>(t.side)] + " " +
           (t.characters ? to_string(t.characters) + " " : "") + "FROM " + to_string(t.value) + ")";
  }
  std::string operator()(const Overlay& o) const {
    return "OVERLAY(" + to_string(o.value) + " PLACING " + to_string(o.placing) + " FROM " + to_string(o.from) +
           (o.length ? " FOR " + to_string(o.length) : "") + ")";
  }
  std::string operator()(const FloorCeil& f) const {
    return std::string(f.ceil ? "CEIL(" : "FLOOR(") + to_string(f.value) + " TO " + f.unit + ")";
  }
  std::string operator()(const CurrentTime& c) const {
    return c.name + (c.precision ? "(" + std::to_string(*c.precision) + ")" : "");
  }
  std::string operator()(const ArrayConstructor& a) const { return "ARRAY[" + expr_list(a.elements) + "]"; }
  std::string operator()(const MapConstructor& m) const { return "MAP[" + expr_list(m.keys_and_values) + "]"; }
  std::string operator()(const RowConstructor& r) const {
    return (r.explicit_row ? "ROW(" : "(") + expr_list(r.fields) + ")";
  }
  std::string operator()(const Subscript& s) const { return to_string(s.base) + "[" + to_string(s.index) + "]"; }
  std::string operator()(const FieldAccess& f) const { return "(" + to_string(f.base) + ")." + quote_identifier(f.field); }
};

std::string schema(const SchemaElements& s) {
  std::vector<std::string> parts;
  for (const auto& c : s.columns) {
    std::string p = quote_identifier(c.name);
    if (c.kind == ColumnDef::Kind::Computed) {
      p += " AS " + to_string(c.expr);
    } else {
      p += " " + to_string(c.type);
      if (c.kind == ColumnDef::Kind::Metadata) {
        p += " METADATA";
        if (c.metadata_key) p += " FROM " + quote_string(*c.metadata_key);
        if (c.is_virtual) p += " VIRTUAL";
      }
    }
    if (!c.comment.empty()) p += " COMMENT " + quote_string(c.comment);
    parts.push_back(p);
  }
  for (const auto& w : s.watermarks) parts.push_back("WATERMARK FOR " + quote_identifier(w.column) + " AS " + to_string(w.expr));
  if (s.primary_key) {
    std::string p = s.primary_key->constraint_name.empty() ? "" : "CONSTRAINT " + quote_identifier(s.primary_key->constraint_name) + " ";
    parts.push_back(p + "PRIMARY KEY (" + names(s.primary_key->columns) + ") NOT ENFORCED");
  }
  return "(" + join(parts, [](const std::string& x) { return x; }) + ")";
}

std::string insert(const Insert& i) {
  std::string s = std::string("INSERT ") + (i.overwrite ? "OVERWRITE " : "INTO ") + name(i.table) + hints(i.hints);
  if (!i.partition.empty()) s += " PARTITION " + properties(i.partition);
  if (!i.columns.empty()) s += " (" + names(i.columns) + ")";
  return s + " " + to_string(*i.query);
}

std::string alter_action(const AlterAction& a) {
  switch (a.kind) {
    case AlterAction::Kind::Add: return "ADD " + schema(a.elements);
    case AlterAction::Kind::Modify: return "MODIFY " + schema(a.elements);
    case AlterAction::Kind::DropColumns: return "DROP (" + names(a.columns) + ")";
    case AlterAction::Kind::DropPrimaryKey:
      return a.new_name.empty() ? "DROP PRIMARY KEY" : "DROP CONSTRAINT " + quote_identifier(a.new_name);
    case AlterAction::Kind::DropWatermark: return "DROP WATERMARK";
    case AlterAction::Kind::AlterColumnType:
      return "ALTER COLUMN " + quote_identifier(a.columns.at(0)) + " TYPE " + to_string(a.type);
    case AlterAction::Kind::SetOptions: return "SET " + properties(a.options);
    case AlterAction::Kind::ResetOptions: return "RESET (" + join(a.keys, quote_string) + ")";
    case AlterAction::Kind::RenameColumn:
      return "RENAME " + quote_identifier(a.columns.at(0)) + " TO " + quote_identifier(a.new_name);
    case AlterAction::Kind::RenameTable: return "RENAME TO " + name(a.new_table_name);
  }
  return "";
}

struct StatementPrinter {
  std::string operator()(const CreateTable& t) const {
    std::string s = std::string("CREATE ") + (t.temporary ? "TEMPORARY " : "") + "TABLE " +
                    (t.if_not_exists ? "IF NOT EXISTS " : "") + name(t.name);
    if (!t.schema.columns.empty() || t.schema.primary_key || !t.schema.watermarks.empty()) s += " " + schema(t.schema);
    if (!t.comment.empty()) s += " COMMENT " + quote_string(t.comment);
    if (!t.partitioned_by.empty()) s += " PARTITIONED BY (" + names(t.partitioned_by) + ")";
    if (!t.options.empty()) s += " WITH " + properties(t.options);
    if (t.like) {
      s += " LIKE " + name(t.like->source);
      if (!t.like->options.empty())
        s += " (" + join(t.like->options, [](const LikeOption& o) {
               static const char* kMode[] = {"INCLUDING", "EXCLUDING", "OVERWRITING"};
               return std::string(kMode[static_cast<int>(o.mode)]) + " " + o.feature;
             }) + ")";
    }
    return s;
  }
  std::string operator()(const CreateView& v) const {
    std::string s = std::string("CREATE ") + (v.or_replace ? "OR REPLACE " : "") + (v.temporary ? "TEMPORARY " : "") + "VIEW " +
                    (v.if_not_exists ? "IF NOT EXISTS " : "") + name(v.name);
    if (!v.columns.empty()) s += " (" + names(v.columns) + ")";
    if (!v.comment.empty()) s += " COMMENT " + quote_string(v.comment);
    return s + " AS " + to_string(*v.query);
  }
  std::string operator()(const CreateFunction& f) const {
    std::string s = std::string("CREATE ") + (f.or_replace ? "OR REPLACE " : "") + (f.temporary ? "TEMPORARY " : "") +
                    (f.system ? "SYSTEM " : "") + "FUNCTION " + (f.if_not_exists ? "IF NOT EXISTS " : "") + name(f.name);
    if (f.has_params)
      s += "(" + join(f.params, [](const FunctionParam& p) { return quote_identifier(p.name) + " " + to_string(p.type); }) + ")";
    if (f.returns) s += " RETURNS " + to_string(*f.returns);
    return s + " AS " + join(f.definitions, quote_string) + " LANGUAGE " + f.language;
  }
  std::string operator()(const CreateModel& m) const {
    auto columns = [](const std::vector<FunctionParam>& cs) {
      return "(" + join(cs, [](const FunctionParam& p) { return quote_identifier(p.name) + " " + to_string(p.type); }) + ")";
    };
    std::string s = std::string("CREATE ") + (m.temporary ? "TEMPORARY " : "") + "MODEL " +
                    (m.if_not_exists ? "IF NOT EXISTS " : "") + name(m.name) + " INPUT " + columns(m.input) + " OUTPUT " +
                    columns(m.output);
    if (!m.comment.empty()) s += " COMMENT " + quote_string(m.comment);
    return s + " WITH " + properties(m.options);
  }
  std::string operator()(const Drop& d) const {
    static const char* kKind[] = {"TABLE", "VIEW", "FUNCTION", "MODEL"};
    return std::string("DROP ") + (d.temporary ? "TEMPORARY " : "") + (d.system ? "SYSTEM " : "") +
           kKind[static_cast<int>(d.kind)] + (d.if_exists ? " IF EXISTS " : " ") + join(d.names, name);
  }
  std::string operator()(const AlterTable& a) const {
    return std::string("ALTER TABLE ") + (a.if_exists ? "IF EXISTS " : "") + name(a.name) + " " +
           join(a.actions, alter_action);
  }
  std::string operator()(const Show& s) const {
    // For the listings: FROM the database, [NOT] LIKE.
    const std::string like = (s.object.empty() ? "" : " FROM " + name(s.object)) +
                             (s.like ? std::string(s.not_like ? " NOT" : "") + " LIKE " + quote_string(*s.like) : "");
    switch (s.what) {
      case Show::What::Tables: return "SHOW TABLES" + like;
      case Show::What::Views: return "SHOW VIEWS" + like;
      case Show::What::MaterializedTables: return "SHOW MATERIALIZED TABLES" + like;
      case Show::What::CreateMaterializedTable: return "SHOW CREATE MATERIALIZED TABLE " + name(s.object);
      case Show::What::Functions: return "SHOW FUNCTIONS" + like;
      case Show::What::UserFunctions: return "SHOW USER FUNCTIONS" + like;
      case Show::What::CreateTable: return "SHOW CREATE TABLE " + name(s.object);
      case Show::What::CreateView: return "SHOW CREATE VIEW " + name(s.object);
      case Show::What::Columns: return "SHOW COLUMNS FROM " + name(s.object);
      case Show::What::Catalogs: return "SHOW CATALOGS";
      case Show::What::Databases: return "SHOW DATABASES";
      case Show::What::CurrentCatalog: return "SHOW CURRENT CATALOG";
      case Show::What::CurrentDatabase: return "SHOW CURRENT DATABASE";
      case Show::What::Jobs: return "SHOW JOBS";
      case Show::What::Jars: return "SHOW JARS";
      case Show::What::Models: return "SHOW MODELS" + like;
      case Show::What::CreateModel: return "SHOW CREATE MODEL " + name(s.object);
    }
    return "";
  }
  std::string operator()(const Use& u) const { return std::string("USE ") + (u.catalog ? "CATALOG " : "") + name(u.name); }
  std::string operator()(const StopJob& s) const {
    return "STOP JOB " + quote_string(s.job_id) + (s.with_savepoint ? " WITH SAVEPOINT" : "") +
           (s.with_drain ? " WITH DRAIN" : "");
  }
  std::string operator()(const Jar& j) const { return (j.add ? "ADD JAR " : "REMOVE JAR ") + quote_string(j.path); }
  std::string operator()(const MaterializedTable& m) const {
    const std::string kind = m.view ? "MATERIALIZED VIEW " : "MATERIALIZED TABLE ";
    switch (m.action) {
      case MaterializedTable::Action::Create: {
        std::string s = std::string(m.or_alter ? "CREATE OR ALTER " : "CREATE ") + kind +
                        (m.if_not_exists ? "IF NOT EXISTS " : "") + name(m.name);
        if (m.primary_key) s += " (PRIMARY KEY (" + join(m.primary_key->columns, quote_identifier) + ") NOT ENFORCED)";
        if (!m.comment.empty()) s += " COMMENT " + quote_string(m.comment);
        if (!m.partitioned_by.empty()) s += " PARTITIONED BY (" + join(m.partitioned_by, quote_identifier) + ")";
        if (!m.options.empty())
          s += " WITH (" + join(m.options, [](const Property& p) { return quote_string(p.key) + " = " + quote_string(p.value); }) + ")";
        if (m.freshness_ms) s += " FRESHNESS = INTERVAL '" + std::to_string(*m.freshness_ms / 1000) + "' SECOND";
        if (!m.refresh_mode.empty()) s += " REFRESH_MODE = " + m.refresh_mode;
        return s + " AS " + (m.query ? to_string(*m.query) : m.query_sql);
      }
      case MaterializedTable::Action::Suspend: return "ALTER " + kind + name(m.name) + " SUSPEND";
      case MaterializedTable::Action::Resume: return "ALTER " + kind + name(m.name) + " RESUME";
      case MaterializedTable::Action::Refresh: return "ALTER " + kind + name(m.name) + " REFRESH";
      case MaterializedTable::Action::Drop: return "DROP " + kind + (m.if_exists ? "IF EXISTS " : "") + name(m.name);
      case MaterializedTable::Action::AlterQuery:
        return "ALTER " + kind + name(m.name) + " AS " + (m.query ? to_string(*m.query) : m.query_sql);
      case MaterializedTable::Action::AlterSchema:
        return "ALTER " + kind + name(m.name) + " " + (m.schema_change ? alter_action(*m.schema_change) : "");
    }
    return "";
  }
  std::string operator()(const Describe& d) const {
    return std::string("DESCRIBE ") + (d.extended ? "EXTENDED " : "") + name(d.table);
  }
  std::string operator()(const AnalyzeTable& a) const {
    std::string s = "ANALYZE TABLE " + name(a.table);
    if (!a.partition.empty()) s += " PARTITION " + properties(a.partition);
    s += " COMPUTE STATISTICS";
    if (a.for_all_columns) s += " FOR ALL COLUMNS";
    if (!a.columns.empty()) s += " FOR COLUMNS " + names(a.columns);
    return s;
  }
  std::string operator()(const Explain& e) const {
    std::string s = "EXPLAIN ";
    if (!e.details.empty()) s += join(e.details, [](const std::string& d) { return d; }) + " ";
    return s + to_string(*e.statement);
  }
  std::string operator()(const Set& s) const {
    std::string out = "SET";
    if (s.key) out += " " + quote_string(*s.key);
    if (s.value) out += " = " + quote_string(*s.value);
    return out;
  }
  std::string operator()(const Reset& r) const { return r.key ? "RESET " + quote_string(*r.key) : "RESET"; }
  std::string operator()(const Insert& i) const { return insert(i); }
  std::string operator()(const StatementSet& s) const {
    return "EXECUTE STATEMENT SET BEGIN " + join(s.inserts, insert, "; ") + "; END";
  }
  std::string operator()(const QueryStatement& q) const { return to_string(*q.query); }
};

}  // namespace

std::string quote_identifier(const std::string& n) {
  if (simple_name(n) && !preparse::is_reserved_keyword(n)) return n;
  return backquoted_identifier(n);
}

std::string quote_string(const std::string& v) {
  std::string out = "'";
  for (char c : v) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string to_string(const Expr& e) { return std::visit(ExprPrinter{}, e.node); }
std::string to_string(const ExprPtr& e) { return e ? to_string(*e) : "<null>"; }

std::string match_recognize_text(const MatchRecognize& m) {
  std::vector<std::string> parts;
  if (!m.partition_by.empty()) parts.push_back("PARTITION BY " + expr_list(m.partition_by));
  if (!m.order_by.empty()) parts.push_back("ORDER BY " + order_items(m.order_by));
  if (!m.measures.empty())
    parts.push_back("MEASURES " + join(m.measures, [](const SelectItem& i) {
                      return to_string(i.expr) + " AS " + quote_identifier(i.alias.value_or(""));
                    }));
  parts.push_back(m.all_rows ? "ALL ROWS PER MATCH" : "ONE ROW PER MATCH");
  static const char* kSkip[] = {"PAST LAST ROW", "TO NEXT ROW", "TO FIRST ", "TO LAST "};
  parts.push_back(std::string("AFTER MATCH SKIP ") + kSkip[static_cast<int>(m.skip)] +
                  (m.skip_variable.empty() ? "" : quote_identifier(m.skip_variable)));
  parts.push_back("PATTERN (" + join(m.pattern, [](const MatchPatternTerm& p) {
                    return quote_identifier(p.variable) + p.quantifier;
                  }, " ") + ")");
  if (m.within) parts.push_back("WITHIN " + to_string(m.within));
  parts.push_back("DEFINE " + join(m.define, [](const MatchDefine& d) {
                    return quote_identifier(d.variable) + " AS " + to_string(d.condition);
                  }));
  std::string s = to_string(*m.input) + " MATCH_RECOGNIZE (";
  for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? " " : "") + parts[i];
  return s + ")";
}

std::string to_string(const TableRef& t) {
  std::string s;
  if (auto* n = std::get_if<NamedTable>(&t.node)) {
    s = name(n->name) + hints(n->hints);
    if (n->system_time) s += " FOR SYSTEM_TIME AS OF " + to_string(n->system_time);
  } else if (auto* d = std::get_if<DerivedTable>(&t.node)) {
    s = "(" + to_string(*d->query) + ")";
  } else if (auto* w = std::get_if<WindowTvf>(&t.node)) {
    s = w->function == "ML_PREDICT" ? w->function + "(" + join(w->args, tvf_arg) + ")"
                                    : "TABLE(" + w->function + "(" + join(w->args, tvf_arg) + "))";
  } else if (auto* f = std::get_if<TableFunction>(&t.node)) {
    std::string call = name(f->name) + "(" + join(f->args, [](const ExprPtr& a) { return to_string(a); }) + ")";
    s = f->lateral_table ? "LATERAL TABLE(" + call + ")" : call;
    if (f->with_ordinality) s += " WITH ORDINALITY";
  } else if (auto* m = std::get_if<MatchRecognize>(&t.node)) {
    s = match_recognize_text(*m);
  } else if (auto* j = std::get_if<Join>(&t.node)) {
    static const char* kType[] = {"JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "CROSS JOIN"};
    s = "(" + to_string(*j->left) + (j->natural ? " NATURAL " : " ") + kType[static_cast<int>(j->type)] + " " +
        to_string(*j->right);
    if (j->on) s += " ON " + to_string(j->on);
    if (!j->using_columns.empty()) s += " USING (" + names(j->using_columns) + ")";
    s += ")";
  }
  if (t.alias) s += " AS " + quote_identifier(*t.alias);
  if (!t.column_aliases.empty()) s += "(" + names(t.column_aliases) + ")";
  return s;
}

std::string to_string(const Query& q) {
  std::string s;
  if (!q.with.empty()) {
    s = "WITH " + join(q.with, [](const CommonTableExpr& c) {
          return quote_identifier(c.name) + (c.columns.empty() ? "" : " (" + names(c.columns) + ")") + " AS (" +
                 to_string(*c.query) + ")";
        }) + " ";
  }
  if (auto* sel = std::get_if<Select>(&q.body)) {
    s += sel->distinct ? "SELECT DISTINCT " : "SELECT ";
    s += join(sel->items, [](const SelectItem& i) {
      return to_string(i.expr) + (i.alias ? " AS " + quote_identifier(*i.alias) : "");
    });
    if (!sel->from.empty()) s += " FROM " + join(sel->from, [](const TableRefPtr& t) { return to_string(*t); });
    if (sel->where) s += " WHERE " + to_string(sel->where);
    if (!sel->group_by.empty()) s += " GROUP BY " + join(sel->group_by, grouping);
    if (sel->having) s += " HAVING " + to_string(sel->having);
    if (!sel->windows.empty())
      s += " WINDOW " + join(sel->windows, [](const NamedWindow& w) { return quote_identifier(w.name) + " AS " + window(*w.spec); });
  } else if (auto* op = std::get_if<SetOperation>(&q.body)) {
    static const char* kOp[] = {"UNION", "INTERSECT", "EXCEPT"};
    s += "(" + to_string(*op->left) + ") " + kOp[static_cast<int>(op->op)] + (op->all ? " ALL (" : " (") +
         to_string(*op->right) + ")";
  } else if (auto* v = std::get_if<Values>(&q.body)) {
    s += "VALUES " + join(v->rows, [](const std::vector<ExprPtr>& r) { return "(" + expr_list(r) + ")"; });
  }
  if (!q.order_by.empty()) s += " ORDER BY " + order_items(q.order_by);
  if (q.limit) s += " LIMIT " + to_string(q.limit);
  if (q.offset) s += " OFFSET " + to_string(q.offset);
  return s;
}

std::string to_string(const Statement& s) { return std::visit(StatementPrinter{}, s.node); }

std::string to_string(const Script& script) {
  std::string out;
  for (const auto& s : script.statements) out += to_string(s) + ";\n";
  return out;
}

}  // namespace clink::sql::ast
