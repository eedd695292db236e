// DDL: CREATE TABLE / VIEW / FUNCTION, DROP, ALTER TABLE.
#include "clink/sql/handler/catalog_ddl.hpp"

#include "clink/sql/function/function_classes.hpp"
#include "catalog_ddl_wasm.hpp"
#include "clink/sql/function/process_table_function.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "clink/sql/parser/parser.hpp"

namespace clink::sql {

namespace {

[[noreturn]] void fail(SourcePosition pos, const std::string& message) { throw TranslationError(pos, message); }

std::string name_of(const ast::QualifiedName& n, SourcePosition pos) {
  if (n.empty()) fail(pos, "missing name");
  if (n.size() > 3) fail(pos, "invalid object name");
  return n.back();
}

CatalogColumn to_catalog_column(const ast::ColumnDef& c) {
  CatalogColumn out;
  out.name = c.name;
  out.comment = c.comment;
  switch (c.kind) {
    case ast::ColumnDef::Kind::Physical:
      out.kind = CatalogColumn::Kind::kPhysical;
      out.type = to_logical_type(c.type);
      break;
    case ast::ColumnDef::Kind::Computed:
      out.kind = CatalogColumn::Kind::kComputed;
      out.expr = c.expr;
      out.expr_sql = expression_sql(*c.expr);
      break;
    case ast::ColumnDef::Kind::Metadata:
      out.kind = CatalogColumn::Kind::kMetadata;
      out.type = to_logical_type(c.type);
      out.metadata_key = c.metadata_key;
      out.is_virtual = c.is_virtual;
      break;
  }
  return out;
}

WatermarkSpec to_watermark(const ast::WatermarkDef& w) {
  if (w.column.find('.') != std::string::npos)
    fail(w.pos, fmt::format("a watermark on the nested field `{}` is not supported", w.column));
  return {w.column, expression_sql(*w.expr), w.expr};
}

std::string interval_for_ms(std::int64_t ms) {
  if (ms % 1000 == 0) return fmt::format("INTERVAL '{}' SECOND", ms / 1000);
  return fmt::format("INTERVAL '{}.{:03}' SECOND", ms / 1000, ms % 1000);
}

// The seed's options: event_time_column + watermark_lag_ms -> a watermark.
void fold_seed_options(TableDef& def, SourcePosition pos) {
  auto col = def.option("event_time_column");
  auto lag = def.option("watermark_lag_ms");
  if (!col) {
    if (lag) fail(pos, "'watermark_lag_ms' needs 'event_time_column'");
    return;
  }
  if (def.watermark)
    fail(pos, fmt::format("table `{}` declares both WATERMARK FOR and 'event_time_column'", def.name));
  std::int64_t ms = 0;
  if (lag) {
    try {
      std::size_t used = 0;
      ms = std::stoll(*lag, &used);
      if (used != lag->size() || ms < 0) throw std::invalid_argument("");
    } catch (const std::exception&) {
      fail(pos, fmt::format("'watermark_lag_ms' must be a non-negative integer, got '{}'", *lag));
    }
  }
  WatermarkSpec w;
  w.rowtime_column = *col;
  w.expr_sql = ms == 0 ? ast::quote_identifier(*col) : fmt::format("{} - {}", ast::quote_identifier(*col), interval_for_ms(ms));
  w.expr = parse_expression(w.expr_sql);
  def.watermark = w;
  if (auto idle = def.option("idle_timeout_ms")) {
    if (!def.option("scan.watermark.idle-timeout")) def.set_option("scan.watermark.idle-timeout", *idle + " ms");
  }
}

enum class LikeMode { kIncluding, kExcluding, kOverwriting };

}  // namespace

std::string expression_sql(const ast::Expr& e) {
  std::string s = ast::to_string(e);
  if (s.size() < 2 || s.front() != '(' || s.back() != ')') return s;
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\'') in_string = !in_string;
    if (in_string) continue;
    if (c == '(') ++depth;
    if (c == ')' && --depth == 0 && i + 1 != s.size()) return s;  // "(a) + (b)"
  }
  return s.substr(1, s.size() - 2);
}

// ------------------------------------------------------------------ validation

void CatalogDdl::validate_table(TableDef& def, SourcePosition pos, const TablePositions& where) const {
  auto at_column = [&](const std::string& c) {
    auto it = where.columns.find(c);
    return it == where.columns.end() ? pos : it->second;
  };
  SourcePosition wm_pos = where.watermark.known() ? where.watermark : pos;
  SourcePosition pk_pos = where.primary_key.known() ? where.primary_key : pos;
  std::set<std::string> names;
  for (const auto& c : def.columns)
    if (!names.insert(c.name).second) fail(pos, fmt::format("table `{}`: duplicate column `{}`", def.name, c.name));
  if (def.columns.empty()) fail(pos, fmt::format("table `{}` has no columns", def.name));
  Binder binder(catalog_, registry_, session_);
  Schema physical = def.physical_schema();
  for (auto& c : def.columns) {
    if (c.kind != CatalogColumn::Kind::kComputed) continue;
    try {
      c.type = binder.bind_scalar(*c.expr, physical)->type;
    } catch (const SqlError& e) {
      fail(e.position().known() ? e.position() : at_column(c.name),
           fmt::format("table `{}`: computed column `{}`: {}", def.name, c.name, e.detail()));
    }
  }
  for (const auto& k : def.primary_key) {
    auto idx = def.column_index(k);
    if (!idx) fail(pk_pos, fmt::format("table `{}`: the primary key column `{}` does not exist", def.name, k));
    auto& c = def.columns[*idx];
    if (c.kind != CatalogColumn::Kind::kPhysical)
      fail(pk_pos, fmt::format("table `{}`: the primary key column `{}` must be a physical column", def.name, k));
    c.type = c.type.not_null();  // Flink: primary key columns are NOT NULL
  }
  if (!def.primary_key.empty() && def.primary_key_name.empty()) {
    std::string n = "PK";
    for (const auto& k : def.primary_key) n += "_" + k;
    def.primary_key_name = n;
  }
  for (const auto& p : def.partitioned_by)
    if (!def.column(p)) fail(pos, fmt::format("table `{}`: the partition column `{}` does not exist", def.name, p));
  if (def.watermark) {
    const auto* rc = def.column(def.watermark->rowtime_column);
    if (!rc)
      fail(wm_pos, fmt::format("table `{}`: the rowtime column `{}` of the watermark does not exist", def.name,
                            def.watermark->rowtime_column));
    const LogicalType& t = rc->type;
    if (!(t.is(TypeKind::kTimestamp) || t.is(TypeKind::kTimestampLtz)) || t.precision() > 3)
      fail(wm_pos, fmt::format("table `{}`: the rowtime column `{}` must be TIMESTAMP(p) or TIMESTAMP_LTZ(p) with p "
                            "from 0 to 3, got {}",
                            def.name, rc->name, t.to_string()));
    ExprPtr w;
    try {
      w = binder.bind_scalar(*def.watermark->expr, def.schema());
    } catch (const SqlError& e) {
      fail(e.position().known() ? e.position() : wm_pos,
           fmt::format("table `{}`: watermark expression: {}", def.name, e.detail()));
    }
    if (w->type.kind() != t.kind())
      fail(wm_pos, fmt::format("table `{}`: the watermark expression must return {} like the rowtime column, got {}",
                            def.name, t.to_string(), w->type.to_string()));
  }
}

// ------------------------------------------------------------------ CREATE

void CatalogDdl::create_table(const ast::CreateTable& stmt, SourcePosition pos) {
  std::string name = name_of(stmt.name, pos);
  if (auto kind = catalog_.kind_of(name); kind && *kind != ObjectKind::kFunction) {
    if (stmt.if_not_exists && *kind == ObjectKind::kTable) return;
    fail(pos, fmt::format("{} `{}` already exists", to_string(*kind), name));
  }
  TableDef def;
  def.name = name;
  def.temporary = stmt.temporary;
  def.comment = stmt.comment;
  std::vector<CatalogColumn> new_columns;
  TablePositions where;
  for (const auto& c : stmt.schema.columns) {
    if (where.columns.count(c.name)) fail(c.pos, fmt::format("table `{}`: duplicate column `{}`", name, c.name));
    where.columns[c.name] = c.pos;
    new_columns.push_back(to_catalog_column(c));
  }
  if (!stmt.schema.watermarks.empty()) where.watermark = stmt.schema.watermarks[0].pos;
  if (stmt.schema.primary_key) where.primary_key = stmt.schema.primary_key->pos;
  if (stmt.schema.watermarks.size() > 1) fail(stmt.schema.watermarks[1].pos, "only one WATERMARK is supported");
  std::optional<WatermarkSpec> new_watermark;
  if (!stmt.schema.watermarks.empty()) new_watermark = to_watermark(stmt.schema.watermarks[0]);
  OptionList new_options;
  for (const auto& p : stmt.options) {
    for (const auto& [k, v] : new_options)
      if (k == p.key) fail(p.pos, fmt::format("option '{}' is given twice", p.key));
    new_options.emplace_back(p.key, p.value);
  }
  if (stmt.like) {
    const auto& like = *stmt.like;
    std::string src_name = name_of(like.source, like.pos);
    const TableDef* src = catalog_.table(src_name);
    if (!src) {
      if (catalog_.view(src_name)) fail(like.pos, fmt::format("LIKE `{}`: a view cannot be the source of LIKE", src_name));
      fail(like.pos, fmt::format("LIKE: source table `{}` not found", src_name));
    }
    // Flink's default: INCLUDING ALL OVERWRITING OPTIONS.
    std::map<std::string, LikeMode> mode = {{"CONSTRAINTS", LikeMode::kIncluding}, {"GENERATED", LikeMode::kIncluding},
                                            {"METADATA", LikeMode::kIncluding}, {"OPTIONS", LikeMode::kOverwriting},
                                            {"PARTITIONS", LikeMode::kIncluding}, {"WATERMARKS", LikeMode::kIncluding}};
    for (const auto& o : like.options) {
      LikeMode m = o.mode == ast::LikeOption::Mode::Including ? LikeMode::kIncluding
                   : o.mode == ast::LikeOption::Mode::Excluding ? LikeMode::kExcluding
                                                                : LikeMode::kOverwriting;
      if (o.feature == "ALL") {
        if (m == LikeMode::kOverwriting) fail(like.pos, "OVERWRITING ALL is not allowed (Flink)");
        for (auto& [f, v] : mode) v = m;
      } else if (mode.count(o.feature)) {
        if (m == LikeMode::kOverwriting && (o.feature == "CONSTRAINTS" || o.feature == "PARTITIONS"))
          fail(like.pos, fmt::format("OVERWRITING {} is not allowed (Flink)", o.feature));
        mode[o.feature] = m;
      } else {
        fail(like.pos, fmt::format("unknown LIKE option {}", o.feature));
      }
    }
    auto keep = [&](const CatalogColumn& c) {
      if (c.kind == CatalogColumn::Kind::kComputed) return mode["GENERATED"] != LikeMode::kExcluding;
      if (c.kind == CatalogColumn::Kind::kMetadata) return mode["METADATA"] != LikeMode::kExcluding;
      return true;
    };
    for (const auto& c : src->columns) {
      if (!keep(c)) continue;
      auto dup = std::find_if(new_columns.begin(), new_columns.end(), [&](const auto& n) { return n.name == c.name; });
      if (dup != new_columns.end()) {
        LikeMode m = c.kind == CatalogColumn::Kind::kComputed   ? mode["GENERATED"]
                     : c.kind == CatalogColumn::Kind::kMetadata ? mode["METADATA"]
                                                                : LikeMode::kIncluding;
        if (m != LikeMode::kOverwriting || c.kind == CatalogColumn::Kind::kPhysical)
          fail(like.pos, fmt::format("a column named `{}` already exists in the base table `{}`", c.name, src_name));
        continue;  // the new definition wins
      }
      def.columns.push_back(c);
    }
    // New columns come after the source's (Flink appends them).
    if (mode["WATERMARKS"] != LikeMode::kExcluding && src->watermark) {
      if (new_watermark && mode["WATERMARKS"] == LikeMode::kIncluding)
        fail(like.pos, fmt::format("a watermark is defined in both `{}` and the new table (use OVERWRITING WATERMARKS)", src_name));
      if (!new_watermark) def.watermark = src->watermark;
    }
    if (mode["CONSTRAINTS"] == LikeMode::kIncluding && !src->primary_key.empty()) {
      if (stmt.schema.primary_key) fail(like.pos, fmt::format("the base table `{}` already has a primary key", src_name));
      def.primary_key = src->primary_key;
      def.primary_key_name = src->primary_key_name;
    }
    if (mode["PARTITIONS"] == LikeMode::kIncluding) {
      if (!src->partitioned_by.empty() && !stmt.partitioned_by.empty())
        fail(like.pos, fmt::format("the base table `{}` is already partitioned", src_name));
      def.partitioned_by = src->partitioned_by;
    }
    if (mode["OPTIONS"] != LikeMode::kExcluding) {
      def.options = src->options;
      for (const auto& [k, v] : new_options) {
        if (def.option(k) && mode["OPTIONS"] == LikeMode::kIncluding)
          fail(like.pos, fmt::format("option '{}' is defined in both `{}` and the new table (use OVERWRITING OPTIONS)",
                                     k, src_name));
        def.set_option(k, v);
      }
      new_options.clear();
    }
  }
  for (auto& c : new_columns) def.columns.push_back(std::move(c));
  if (new_watermark) def.watermark = new_watermark;
  if (stmt.schema.primary_key) {
    def.primary_key = stmt.schema.primary_key->columns;
    def.primary_key_name = stmt.schema.primary_key->constraint_name;
  }
  if (!stmt.partitioned_by.empty()) def.partitioned_by = stmt.partitioned_by;
  for (auto& o : new_options) def.options.push_back(std::move(o));
  fold_seed_options(def, pos);
  validate_table(def, pos, where);
  catalog_.add_table(std::move(def));
}

ViewDef CatalogDdl::bind_view_def(const std::string& name, ast::QueryPtr query, const std::vector<std::string>& aliases,
                                  SourcePosition pos, bool reuse_bound_views) const {
  Binder binder(catalog_, registry_, session_);
  ViewDef v;
  LogicalPtr plan = binder.bind_view_query(*query, reuse_bound_views, v.depth);
  v.bound = plan;
  v.bound_generation = catalog_.generation();
  v.name = name;
  v.query = query;
  v.query_sql = ast::to_string(*query);
  v.column_aliases = aliases;
  std::vector<RowField> fields = plan->schema.fields();
  if (!aliases.empty()) {
    if (aliases.size() != fields.size())
      fail(pos, fmt::format("view `{}`: {} column aliases for a query of {} columns", name, aliases.size(), fields.size()));
    for (std::size_t i = 0; i < aliases.size(); ++i) fields[i].name = aliases[i];
  }
  std::set<std::string> seen;
  for (const auto& f : fields)
    if (!seen.insert(f.name).second)
      fail(pos, fmt::format("view `{}`: duplicate column name `{}` (give the columns aliases)", name, f.name));
  v.schema = Schema(std::move(fields));
  return v;
}

void CatalogDdl::create_view(const ast::CreateView& stmt, SourcePosition pos) {
  std::string name = name_of(stmt.name, pos);
  if (auto kind = catalog_.kind_of(name); kind && *kind != ObjectKind::kFunction) {
    if (stmt.if_not_exists && *kind == ObjectKind::kView) return;
    fail(pos, fmt::format("{} `{}` already exists", to_string(*kind), name));
  }
  // Cycle check: the new view must not be reachable from the objects it references. A view
  // bound at the current generation needs no walk: every name it reaches existed when it
  // was bound and none was removed since, so none is this new name (walking every chain
  // made defining a chain of views quadratic).
  std::vector<std::string> stack = referenced_tables(*stmt.query);
  std::set<std::string> seen;
  while (!stack.empty()) {
    std::string n = stack.back();
    stack.pop_back();
    if (n == name) fail(pos, fmt::format("view `{}` would reference itself (a cycle through its query)", name));
    if (!seen.insert(n).second) continue;
    if (const ViewDef* v = catalog_.view(n); v && !(v->bound && v->bound_generation == catalog_.generation()))
      for (const auto& r : referenced_tables(*v->query)) stack.push_back(r);
  }
  ViewDef v = bind_view_def(name, stmt.query, stmt.columns, pos, true);
  v.temporary = stmt.temporary;
  v.comment = stmt.comment;
  catalog_.add_view(std::move(v));
}

void CatalogDdl::create_function(const ast::CreateFunction& stmt, SourcePosition pos) {
  std::string name = name_of(stmt.name, pos);
  if (stmt.language == "JAVA") return create_class_function(stmt, name, pos);
  if (stmt.language == "WASM" || stmt.language == kWasmAggregateLanguage)
    return create_wasm_function(catalog_, registry_, stmt, name, pos);
  if (stmt.language != "SQL")
    fail(pos, fmt::format("CREATE FUNCTION {}: LANGUAGE {} is not supported (only LANGUAGE SQL, LANGUAGE WASM, or a "
                          "class implemented in clink)", name, stmt.language));
  if (!stmt.has_params || !stmt.returns || !stmt.body)
    fail(pos, fmt::format("CREATE FUNCTION {}: a SQL function needs (parameters), RETURNS and AS '<expression>'", name));
  if (stmt.definitions.size() != 1)
    fail(pos, fmt::format("CREATE FUNCTION {}: LANGUAGE SQL takes exactly one AS definition", name));
  if (registry_.has_scalar(name) || registry_.has_aggregate(name))
    fail(pos, fmt::format("CREATE FUNCTION {}: a built-in function has this name", name));
  if (catalog_.function(name)) {
    if (stmt.if_not_exists) return;
    if (!stmt.or_replace) fail(pos, fmt::format("function `{}` already exists", name));
  }
  FunctionDef f;
  f.name = name;
  f.temporary = stmt.temporary;
  std::set<std::string> seen;
  for (const auto& p : stmt.params) {
    if (p.name.empty()) fail(p.pos, fmt::format("CREATE FUNCTION {}: every parameter needs a name", name));
    if (!seen.insert(p.name).second) fail(p.pos, fmt::format("CREATE FUNCTION {}: duplicate parameter `{}`", name, p.name));
    f.params.push_back({p.name, to_logical_type(p.type)});
  }
  f.return_type = to_logical_type(*stmt.returns);
  f.body = stmt.body;
  f.body_sql = stmt.definitions[0];
  std::vector<RowField> params;
  for (const auto& p : f.params) params.push_back({p.name, p.type});
  Binder binder(catalog_, registry_, session_);
  ExprPtr body;
  try {
    body = binder.bind_scalar(*stmt.body, Schema(params));
  } catch (const SqlError& e) {
    fail(pos, fmt::format("CREATE FUNCTION {}: {}", name, e.detail()));
  }
  if (!supports_implicit_cast(body->type, f.return_type))
    fail(pos, fmt::format("CREATE FUNCTION {}: the body returns {}, not the declared {}", name, body->type.to_string(),
                          f.return_type.to_string()));
  catalog_.add_function(std::move(f), true);
}

// Flink's class-style CREATE FUNCTION f AS 'com.example.F': the class must be one clink
// implements in C++ (function_classes.hpp); there is no JVM to load others.
void CatalogDdl::create_class_function(const ast::CreateFunction& stmt, const std::string& name, SourcePosition pos) {
  if (stmt.has_params || stmt.returns)
    fail(pos, fmt::format("CREATE FUNCTION {}: a function created AS a class takes no parameter list or RETURNS "
                          "(its class defines them)", name));
  if (stmt.definitions.size() != 1)
    fail(stmt.definitions_pos, fmt::format("CREATE FUNCTION {}: AS names exactly one class", name));
  const std::string& cls = stmt.definitions[0];
  // A process table function class (process_table_function.hpp) is a class too.
  if (!is_known_function_class(cls) && !ProcessTableFunctionRegistry::process().find(cls)) {
    std::vector<std::string> classes = function_class_names();
    for (const auto& n : ProcessTableFunctionRegistry::process().names())
      if (n.find('.') != std::string::npos) classes.push_back(n);
    fail(stmt.definitions_pos, fmt::format("CREATE FUNCTION {}: unknown function class '{}' (clink runs no JVM; the "
                                           "classes implemented in clink: {})",
                                           name, cls, fmt::join(classes, ", ")));
  }
  if (registry_.has_scalar(name) || registry_.has_aggregate(name))
    fail(pos, fmt::format("CREATE FUNCTION {}: a built-in function has this name", name));
  if (catalog_.function(name)) {
    if (stmt.if_not_exists) return;
    if (!stmt.or_replace) fail(pos, fmt::format("function `{}` already exists", name));
  }
  FunctionDef f;
  f.name = name;
  f.temporary = stmt.temporary;
  f.language = "JAVA";
  f.class_name = cls;
  catalog_.add_function(std::move(f), true);
}

// ------------------------------------------------------------------ DROP

void CatalogDdl::drop(const ast::Drop& stmt, SourcePosition pos) {
  if (stmt.kind == ast::Drop::Kind::Model) return drop_models(stmt, pos);
  ObjectKind want = stmt.kind == ast::Drop::Kind::Table  ? ObjectKind::kTable
                    : stmt.kind == ast::Drop::Kind::View ? ObjectKind::kView
                                                         : ObjectKind::kFunction;
  std::string want_text = to_string(want);
  for (auto& c : want_text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const auto& qn : stmt.names) {
    std::string name = name_of(qn, pos);
    std::optional<ObjectKind> kind;
    if (want == ObjectKind::kFunction) {
      if (catalog_.function(name)) kind = ObjectKind::kFunction;
    } else if (catalog_.table(name)) {
      kind = ObjectKind::kTable;
    } else if (catalog_.view(name)) {
      kind = ObjectKind::kView;
    }
    if (!kind) {
      if (stmt.if_exists) continue;
      if (want == ObjectKind::kFunction && registry_.has_scalar(name))
        fail(pos, fmt::format("DROP FUNCTION {}: a built-in function cannot be dropped", name));
      fail(pos, fmt::format("{} `{}` does not exist", to_string(want), name));
    }
    if (*kind != want) {
      std::string actual = to_string(*kind);
      std::string actual_upper = actual;
      for (auto& c : actual_upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      fail(pos, fmt::format("DROP {} {}: `{}` is a {}, not a {} (use DROP {} {})", want_text, name, name, actual,
                            to_string(want), actual_upper, name));
    }
    if (want == ObjectKind::kView) {
      auto users = catalog_.views_referencing(name);
      if (!users.empty())
        fail(pos, fmt::format("DROP VIEW {}: the view `{}` depends on it", name, users[0]));
    }
    if (const FunctionDef* f = want == ObjectKind::kFunction ? catalog_.function(name) : nullptr;
        f && f->language == "WASM")
      drop_wasm_function(*f);
    catalog_.remove(want, name);
  }
}

// ------------------------------------------------------------------ ALTER

std::optional<std::string> CatalogDdl::rebind_dependents(const std::string& name) {
  std::vector<std::string> queue = catalog_.views_referencing(name);
  std::set<std::string> done;
  while (!queue.empty()) {
    std::string v = queue.front();
    queue.erase(queue.begin());
    if (!done.insert(v).second) continue;
    const ViewDef* def = catalog_.view(v);
    try {
      // Expanded in full: a view over this one may be rebound before one it reads.
      ViewDef rebound = bind_view_def(v, def->query, def->column_aliases, {}, false);
      rebound.temporary = def->temporary;
      rebound.comment = def->comment;
      if (rebound.schema.size() != def->schema.size())
        return fmt::format("the view `{}` would change its column count", v);
      catalog_.replace_view(std::move(rebound));
    } catch (const SqlError& e) {
      return fmt::format("the view `{}` no longer binds: {}", v, e.detail());
    }
    for (const auto& u : catalog_.views_referencing(v)) queue.push_back(u);
  }
  return std::nullopt;
}

void CatalogDdl::alter_table(const ast::AlterTable& stmt, SourcePosition pos) {
  std::string name = name_of(stmt.name, pos);
  const TableDef* current = catalog_.table(name);
  if (!current) {
    if (catalog_.view(name)) fail(pos, fmt::format("ALTER TABLE {}: `{}` is a view, not a table", name, name));
    if (stmt.if_exists) return;
    fail(pos, fmt::format("table `{}` does not exist", name));
  }
  const TableDef before = *current;
  TableDef def = before;
  for (const auto& a : stmt.actions) {
    using K = ast::AlterAction::Kind;
    auto find = [&](const std::string& col) -> CatalogColumn& {
      auto it = std::find_if(def.columns.begin(), def.columns.end(), [&](const auto& c) { return c.name == col; });
      if (it == def.columns.end()) fail(a.pos, fmt::format("ALTER TABLE {}: column `{}` does not exist", name, col));
      return *it;
    };
    switch (a.kind) {
      case K::Add:
      case K::Modify: {
        bool add = a.kind == K::Add;
        for (const auto& c : a.elements.columns) {
          CatalogColumn nc = to_catalog_column(c);
          if (add) {
            if (def.column(c.name)) fail(a.pos, fmt::format("ALTER TABLE {}: column `{}` already exists", name, c.name));
            def.columns.push_back(std::move(nc));
          } else {
            find(c.name) = std::move(nc);
          }
        }
        if (!a.elements.watermarks.empty()) {
          if (add && def.watermark) fail(a.pos, fmt::format("ALTER TABLE {}: the table already has a watermark", name));
          if (!add && !def.watermark) fail(a.pos, fmt::format("ALTER TABLE {}: the table has no watermark to modify", name));
          def.watermark = to_watermark(a.elements.watermarks[0]);
        }
        if (a.elements.primary_key) {
          if (add && !def.primary_key.empty())
            fail(a.pos, fmt::format("ALTER TABLE {}: the table already has a primary key", name));
          def.primary_key = a.elements.primary_key->columns;
          def.primary_key_name = a.elements.primary_key->constraint_name;
        }
        break;
      }
      case K::DropColumns:
        for (const auto& col : a.columns) {
          find(col);
          if (std::find(def.primary_key.begin(), def.primary_key.end(), col) != def.primary_key.end())
            fail(a.pos, fmt::format("ALTER TABLE {}: column `{}` is part of the primary key", name, col));
          if (def.watermark && def.watermark->rowtime_column == col)
            fail(a.pos, fmt::format("ALTER TABLE {}: column `{}` is the watermark's rowtime column", name, col));
          def.columns.erase(std::find_if(def.columns.begin(), def.columns.end(), [&](const auto& c) { return c.name == col; }));
        }
        if (def.columns.empty()) fail(a.pos, fmt::format("ALTER TABLE {}: cannot drop every column", name));
        break;
      case K::DropPrimaryKey:
        if (def.primary_key.empty()) fail(a.pos, fmt::format("ALTER TABLE {}: the table has no primary key", name));
        for (const auto& k : def.primary_key) find(k).type = find(k).type.with_nullable(true);
        def.primary_key.clear();
        def.primary_key_name.clear();
        break;
      case K::DropWatermark:
        if (!def.watermark) fail(a.pos, fmt::format("ALTER TABLE {}: the table has no watermark", name));
        def.watermark.reset();
        def.reset_option("event_time_column");
        def.reset_option("watermark_lag_ms");
        break;
      case K::AlterColumnType: {
        auto& c = find(a.columns.at(0));
        if (c.kind == CatalogColumn::Kind::kComputed)
          fail(a.pos, fmt::format("ALTER TABLE {}: `{}` is a computed column (MODIFY its expression)", name, c.name));
        c.type = to_logical_type(a.type);
        break;
      }
      case K::SetOptions:
        for (const auto& p : a.options) def.set_option(p.key, p.value);
        break;
      case K::ResetOptions:
        for (const auto& k : a.keys) def.reset_option(k);
        break;
      case K::RenameColumn: {
        const std::string& old = a.columns.at(0);
        if (def.column(a.new_name)) fail(a.pos, fmt::format("ALTER TABLE {}: column `{}` already exists", name, a.new_name));
        find(old).name = a.new_name;
        for (auto& k : def.primary_key)
          if (k == old) k = a.new_name;
        for (auto& p : def.partitioned_by)
          if (p == old) p = a.new_name;
        if (def.option("event_time_column") == old) {
          def.set_option("event_time_column", a.new_name);
          def.watermark.reset();  // regenerated from the options below
        } else if (def.watermark && def.watermark->rowtime_column == old) {
          def.watermark->rowtime_column = a.new_name;
        }
        break;
      }
      case K::RenameTable: {
        std::string nn = name_of(a.new_table_name, a.pos);
        if (catalog_.has(nn) && nn != name) fail(a.pos, fmt::format("ALTER TABLE {}: the name `{}` is taken", name, nn));
        def.name = nn;
        break;
      }
    }
  }
  if (!def.watermark) fold_seed_options(def, pos);
  // ANALYZE results describe the old columns: a change of columns or types drops them.
  bool same_columns = before.columns.size() == def.columns.size();
  for (std::size_t i = 0; same_columns && i < def.columns.size(); ++i)
    same_columns = before.columns[i].name == def.columns[i].name && before.columns[i].type == def.columns[i].type;
  if (!same_columns) def.analyzed_statistics = TableStatistics{};
  try {
    validate_table(def, pos);
  } catch (const TranslationError& e) {
    fail(pos, fmt::format("ALTER TABLE {}: {}", name, e.detail()));
  }
  catalog_.replace_table(name, def);
  std::string broken;
  if (def.name != name) {
    auto users = catalog_.views_referencing(name);
    if (!users.empty()) broken = fmt::format("the view `{}` references `{}` by name", users[0], name);
  } else if (auto err = rebind_dependents(name)) {
    broken = *err;
  }
  if (!broken.empty()) {
    catalog_.replace_table(def.name, before);  // roll back (also the persisted file)
    rebind_dependents(name);
    fail(pos, fmt::format("ALTER TABLE {} rolled back: {}; drop or recreate the view first", name, broken));
  }
}

}  // namespace clink::sql
