// Binder: VECTOR_SEARCH in FROM (docs/vector-search.md), in both spellings:
//
//   the seed's   VECTOR_SEARCH(TABLE t, query_col, vector_table, DESCRIPTOR(index_col), top_k [, metric] [, options])
//   Flink 2.x's  FROM t, LATERAL TABLE(VECTOR_SEARCH(TABLE vt, t.query_col, DESCRIPTOR(index_col), top_k [, MAP[...]]))
//                (DESCRIPTOR and the query may come in either order, as Flink's docs and its
//                planner tests write them; arguments may be named as Flink's).
//
// Both bind to a LogicalVectorSearch whose output is the input's columns, the vector
// table's physical columns and `score DOUBLE`. The options (metric, index, m,
// ef_construction, ef_search, corpus_refresh_ms) come as a trailing MAP['k', 'v', ...],
// `k => 'v'` named arguments, or the seed's positional metric string.
#include <algorithm>

#include "binder_internal.hpp"

namespace clink::sql {
namespace {

bool is_vector_type(const LogicalType& t) {
  return t.is(TypeKind::kArray) && (t.element_type().is(TypeKind::kFloat) || t.element_type().is(TypeKind::kDouble));
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Flink's VECTOR_SEARCH runtime config keys: accepted (its scripts pass them) and without
// effect here, where the search runs inside the operator (never an async external call).
bool is_flink_runtime_key(const std::string& k) {
  return k == "async" || k == "max-concurrent-operations" || k == "output-mode" || k == "timeout";
}

const std::string* string_literal(const ast::Expr& e) {
  const auto* l = e.as<ast::Literal>();
  return l && l->kind == ast::Literal::Kind::String ? &l->text : nullptr;
}

// What the call's arguments say, whatever the spelling.
struct Args {
  const ast::TvfArg* input = nullptr;         // the seed's TABLE t
  const ast::TvfArg* vector_table = nullptr;  // Flink's TABLE vt / the seed's bare name
  std::string vector_table_name;
  const ast::TvfArg* query = nullptr;
  const ast::TvfArg* descriptor = nullptr;
  const ast::TvfArg* top_k = nullptr;
  std::vector<const ast::TvfArg*> options;    // MAP[...], k => 'v', the seed's metric string
  bool flink = false;
};

Args classify(const ast::WindowTvf& tvf, SourcePosition pos) {
  Args a;
  const auto& v = tvf.args;
  const bool named = std::any_of(v.begin(), v.end(), [](const ast::TvfArg& x) {
    return x.name == "SEARCH_TABLE" || x.name == "COLUMN_TO_QUERY" || x.name == "COLUMN_TO_SEARCH" || x.name == "TOP_K";
  });
  if (named) {
    // Flink's named arguments: SEARCH_TABLE, COLUMN_TO_QUERY, COLUMN_TO_SEARCH, TOP_K, CONFIG.
    a.flink = true;
    for (const auto& x : v) {
      if (x.name == "SEARCH_TABLE") a.vector_table = &x;
      else if (x.name == "COLUMN_TO_QUERY") a.query = &x;
      else if (x.name == "COLUMN_TO_SEARCH") a.descriptor = &x;
      else if (x.name == "TOP_K") a.top_k = &x;
      else if (x.name == "CONFIG" || !x.name.empty()) a.options.push_back(&x);
      else fail(x.pos, "VECTOR_SEARCH: a positional argument after named ones");
    }
    if (!a.vector_table) fail(pos, "VECTOR_SEARCH needs the SEARCH_TABLE argument");
    if (!a.query) fail(pos, "VECTOR_SEARCH needs the COLUMN_TO_QUERY argument");
    if (!a.descriptor) fail(pos, "VECTOR_SEARCH needs the COLUMN_TO_SEARCH argument");
    if (!a.top_k) fail(pos, "VECTOR_SEARCH needs the TOP_K argument");
  } else if (v.size() >= 5 && v[3].kind == ast::TvfArg::Kind::Descriptor) {
    // The seed's: TABLE t, query, vector_table, DESCRIPTOR(index_col), top_k [, metric] [, options].
    a.input = &v[0];
    a.query = &v[1];
    a.vector_table = &v[2];
    a.descriptor = &v[3];
    a.top_k = &v[4];
    for (std::size_t i = 5; i < v.size(); ++i) a.options.push_back(&v[i]);
    const auto* ref = a.vector_table->kind == ast::TvfArg::Kind::Expression && a.vector_table->expr
                          ? a.vector_table->expr->as<ast::ColumnRef>() : nullptr;
    if (!ref || ref->names.size() != 1) fail(a.vector_table->pos, "VECTOR_SEARCH: the third argument must name the vector table");
    a.vector_table_name = ref->names[0];
  } else if (v.size() >= 4 && (v[1].kind == ast::TvfArg::Kind::Descriptor || v[2].kind == ast::TvfArg::Kind::Descriptor)) {
    // Flink's: TABLE vt, query | DESCRIPTOR(col), DESCRIPTOR(col) | query, top_k [, config].
    a.flink = true;
    a.vector_table = &v[0];
    a.descriptor = v[1].kind == ast::TvfArg::Kind::Descriptor ? &v[1] : &v[2];
    a.query = v[1].kind == ast::TvfArg::Kind::Descriptor ? &v[2] : &v[1];
    a.top_k = &v[3];
    for (std::size_t i = 4; i < v.size(); ++i) a.options.push_back(&v[i]);
  } else {
    fail(pos, "VECTOR_SEARCH takes (TABLE t, query_column, vector_table, DESCRIPTOR(index_column), top_k [, metric]) "
              "or Flink's (TABLE vector_table, query_column, DESCRIPTOR(index_column), top_k [, config])");
  }
  if (a.input && a.input->kind != ast::TvfArg::Kind::Table)
    fail(a.input->pos, "VECTOR_SEARCH: the first argument must be TABLE <input table>");
  if (a.flink) {
    if (a.vector_table->kind != ast::TvfArg::Kind::Table)
      fail(a.vector_table->pos, "VECTOR_SEARCH: the search table must be written TABLE <vector table>");
    if (a.vector_table->table.empty()) fail(a.vector_table->pos, "VECTOR_SEARCH: missing the vector table's name");
    a.vector_table_name = a.vector_table->table.back();
  }
  if (a.query->kind != ast::TvfArg::Kind::Expression)
    fail(a.query->pos, "VECTOR_SEARCH: the query must be an ARRAY<FLOAT> or ARRAY<DOUBLE> expression");
  if (a.descriptor->kind != ast::TvfArg::Kind::Descriptor)
    fail(a.descriptor->pos, "VECTOR_SEARCH: the index column must be written DESCRIPTOR(column)");
  if (a.descriptor->columns.size() != 1) fail(a.descriptor->pos, "VECTOR_SEARCH: DESCRIPTOR takes exactly one index column");
  return a;
}

}  // namespace

bool Binder::Impl::is_vector_search(const ast::TableRef& ref) {
  const auto* w = std::get_if<ast::WindowTvf>(&ref.node);
  return w && upper_name(w->function) == "VECTOR_SEARCH";
}

Bound Binder::Impl::bind_vector_search(const ast::WindowTvf& tvf, const ast::TableRef& ref, const Bound* left) {
  const Args a = classify(tvf, ref.pos);
  if (a.flink && !left)
    fail(ref.pos, "VECTOR_SEARCH with TABLE <vector table> first (Flink's form) searches for the rows on its left: "
                  "write FROM t, LATERAL TABLE(VECTOR_SEARCH(TABLE vt, t.query_column, DESCRIPTOR(c), k))");
  if (!a.flink && left)
    fail(ref.pos, "VECTOR_SEARCH(TABLE t, ...) names its input: write it as a FROM item of its own, not after a comma");
  // The input.
  Bound in;
  if (a.flink) {
    in = *left;
  } else {
    in = bind_table_argument(*a.input);  // TABLE t, or a query in parentheses
  }
  // The vector table: a catalog table whose connector can be read whole.
  if (catalog.view(a.vector_table_name))
    fail(a.vector_table->pos, fmt::format("VECTOR_SEARCH: `{}` is a view; the vector table must be a catalog table",
                                          a.vector_table_name));
  const TableDef* table = catalog.table(a.vector_table_name);
  if (!table) fail(a.vector_table->pos, fmt::format("Object '{}' not found", a.vector_table_name));
  const Schema physical = table->physical_schema();
  const std::string& index_name = a.descriptor->columns[0];
  auto index_column = physical.index_of(index_name);
  if (!index_column)
    fail(a.descriptor->pos, fmt::format("VECTOR_SEARCH: table `{}` has no column `{}`", table->name, index_name));
  const LogicalType& index_type = physical.type(*index_column);
  if (!is_vector_type(index_type))
    fail(a.descriptor->pos, fmt::format("VECTOR_SEARCH: the index column `{}` is {}, it must be ARRAY<FLOAT> or ARRAY<DOUBLE>",
                                        index_name, index_type.to_string()));
  // The query vector, over the input's rows.
  ExprContext ctx;
  ctx.scope = &in.scope;
  ctx.clause = "VECTOR_SEARCH";
  ExprPtr query = bind_expr(*a.query->expr, ctx);
  if (!is_vector_type(query->type))
    fail(a.query->pos, fmt::format("VECTOR_SEARCH: the query is {}, it must be ARRAY<FLOAT> or ARRAY<DOUBLE>",
                                   query->type.to_string()));
  if (query->type.element_type().kind() != index_type.element_type().kind())
    fail(a.query->pos, fmt::format("VECTOR_SEARCH: the query is {} but the index column `{}` is {}; their element types "
                                   "must match (CAST one of them)",
                                   query->type.to_string(), index_name, index_type.to_string()));
  // top_k: a positive integer literal.
  const auto* k = a.top_k->kind == ast::TvfArg::Kind::Expression ? a.top_k->expr->as<ast::Literal>() : nullptr;
  if (!k || k->kind != ast::Literal::Kind::Integer)
    fail(a.top_k->pos, "VECTOR_SEARCH: top_k must be a positive integer literal");
  std::int64_t top_k = 0;
  try {
    top_k = std::stoll(k->text);
  } catch (const std::exception&) {
    top_k = 0;
  }
  if (top_k < 1 || top_k > (1 << 20)) fail(a.top_k->pos, fmt::format("VECTOR_SEARCH: top_k must be between 1 and 1048576, got {}", k->text));
  // Options.
  auto node = std::make_shared<LogicalVectorSearch>();
  auto set_option = [&](std::string key, const std::string& value, SourcePosition pos) {
    key = lower(key);
    if (is_flink_runtime_key(key)) return;
    if (key == "metric") {
      std::string m = lower(value);
      if (m != "cosine" && m != "l2" && m != "dot")
        fail(pos, fmt::format("VECTOR_SEARCH: unknown metric '{}' (metrics: cosine, l2, dot)", value));
      node->metric = m;
      return;
    }
    if (key == "index") {
      std::string i = lower(value);
      if (i != "flat" && i != "hnsw") fail(pos, fmt::format("VECTOR_SEARCH: unknown index '{}' (indexes: flat, hnsw)", value));
      node->options.emplace_back(key, i);
      return;
    }
    if (key == "m" || key == "ef_construction" || key == "ef_search" || key == "corpus_refresh_ms") {
      const std::int64_t min = key == "m" ? 2 : key == "corpus_refresh_ms" ? 0 : 1;
      bool ok = !value.empty() && value.find_first_not_of("0123456789") == std::string::npos && value.size() < 12;
      if (!ok || std::stoll(value) < min)
        fail(pos, fmt::format("VECTOR_SEARCH: option '{}' must be an integer >= {}, got '{}'", key, min, value));
      node->options.emplace_back(key, value);
      return;
    }
    fail(pos, fmt::format("VECTOR_SEARCH: unknown option '{}' (options: metric, index, m, ef_construction, ef_search, "
                          "corpus_refresh_ms)",
                          key));
  };
  for (std::size_t i = 0; i < a.options.size(); ++i) {
    const ast::TvfArg& o = *a.options[i];
    if (o.kind != ast::TvfArg::Kind::Expression) fail(o.pos, "VECTOR_SEARCH: unexpected table or descriptor argument");
    if (const auto* map = o.expr->as<ast::MapConstructor>()) {
      for (std::size_t j = 0; j + 1 < map->keys_and_values.size(); j += 2) {
        const std::string* key = string_literal(*map->keys_and_values[j]);
        const std::string* value = string_literal(*map->keys_and_values[j + 1]);
        if (!key || !value) fail(map->keys_and_values[key ? j + 1 : j]->pos, "VECTOR_SEARCH: the config MAP takes string literals");
        set_option(*key, *value, map->keys_and_values[j]->pos);
      }
      continue;
    }
    const std::string* value = string_literal(*o.expr);
    if (!value) {
      // The numbers of `ef_search => 64` are fine unquoted too.
      const auto* lit = o.expr->as<ast::Literal>();
      if (!o.name.empty() && lit && lit->kind == ast::Literal::Kind::Integer) value = &lit->text;
    }
    if (!value) fail(o.pos, "VECTOR_SEARCH: an option must be a string literal, `name => 'value'` or MAP['name', 'value', ...]");
    if (!o.name.empty()) set_option(o.name, *value, o.pos);
    else if (!a.flink && i == 0) set_option("metric", *value, o.pos);
    else fail(o.pos, "VECTOR_SEARCH: name this option (`name => 'value'`)");
  }
  // The output: the input's columns, the vector table's, score.
  std::vector<RowField> fields = in.plan->schema.fields();
  for (const auto& f : physical.fields()) fields.push_back(f);
  fields.push_back({"score", LogicalType::double_type()});
  std::vector<std::string> names;
  for (const auto& f : fields) names.push_back(f.name);
  names = unique_names(names);
  for (std::size_t i = 0; i < fields.size(); ++i) fields[i].name = names[i];
  node->table = *table;
  node->query = query;
  node->index_column = *index_column;
  node->top_k = top_k;
  node->schema = Schema(std::move(fields));
  node->inputs = {in.plan};
  node->pos = ref.pos;
  Bound out;
  out.plan = node;
  out.scope = in.scope;
  // Without an alias the columns keep their tables' names as qualifiers (t.id, vt.id).
  const std::string qualifier = ref.alias && a.flink ? *ref.alias : a.vector_table_name;
  for (const auto& f : physical.fields()) out.scope.columns.push_back({qualifier, f.name, f.type});
  out.scope.columns.push_back({qualifier, "score", LogicalType::double_type()});
  if (a.flink) {
    if (!ref.column_aliases.empty()) fail(ref.pos, "VECTOR_SEARCH: column aliases are not supported after LATERAL TABLE(...)");
    return out;
  }
  if (!ref.alias && ref.column_aliases.empty()) return out;
  return with_aliases(std::move(out), ref.column_aliases, ref.alias.value_or(""), ref.pos);
}

}  // namespace clink::sql
