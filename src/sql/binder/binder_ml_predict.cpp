// Binder: ML_PREDICT(TABLE t, MODEL m, DESCRIPTOR(c, ...) [, MAP['k', 'v', ...]]) in FROM
// (Flink 2.x's model inference table function). The output is t's columns followed by the
// model's OUTPUT columns, one row per input row.
//
// It binds to the asynchronous lookup join (LogicalLookupJoin, run by sql_lookup_join)
// whose "table" is the model: columns INPUT ++ OUTPUT, looked up with the DESCRIPTOR
// columns as the keys of the INPUT columns, through the model lookup source
// ('connector' = 'lookup', src/connectors/ml), then projected to t ++ OUTPUT. So ML_PREDICT
// has that op's bound on rows in flight ('table.exec.async-lookup.buffer-capacity'), its
// ORDERED (or ALLOW_UNORDERED) output, its timeout and its checkpointed in-flight rows.
// It is a LEFT lookup: a row with a NULL feature is not sent and gets NULL outputs.
//
// The config map takes Flink's ML_PREDICT keys ('async', 'max-concurrent-operations',
// 'output-mode', 'timeout') and the model's runtime options (on_error, max_batch_size,
// max-retries, retry-backoff), which override the model's WITH options for this call.
#include <set>

#include "binder_internal.hpp"
#include "clink/core/duration.hpp"
#include "clink/sql/planner/lookup_join_plan.hpp"
#include "clink/sql/spec/model_provider.hpp"

namespace clink::sql {

namespace {

const std::set<std::string> kConfigKeys = {
    "async", "max-concurrent-operations", "output-mode", "timeout", "on_error", "on-error", "max_batch_size",
    "max-batch-size", "max-retries", "max_retries", "retry-backoff", "retry_backoff_ms", "request-timeout"};

// Feature column type -> INPUT column type: the same type, or a number cast to another.
bool feature_fits(const LogicalType& from, const LogicalType& to) {
  if (from.kind() == to.kind()) return true;
  if (from.is_numeric() && to.is_numeric()) return true;
  return from.is_character_string() && to.is_character_string();
}

}  // namespace

Bound Binder::Impl::bind_ml_predict(const ast::WindowTvf& tvf, const ast::TableRef& ref) {
  const ast::TvfArg *table = nullptr, *model = nullptr, *descriptor = nullptr, *config = nullptr;
  for (const auto& a : tvf.args) {
    const ast::TvfArg** slot = a.kind == ast::TvfArg::Kind::Table        ? &table
                               : a.kind == ast::TvfArg::Kind::Model      ? &model
                               : a.kind == ast::TvfArg::Kind::Descriptor ? &descriptor
                                                                          : &config;
    if (*slot) fail(a.pos, "ML_PREDICT takes one TABLE, one MODEL, one DESCRIPTOR and one config argument");
    *slot = &a;
  }
  if (!table) fail(ref.pos, "ML_PREDICT needs a TABLE argument: ML_PREDICT(TABLE t, MODEL m, DESCRIPTOR(c, ...))");
  if (!model) fail(ref.pos, "ML_PREDICT needs a MODEL argument: ML_PREDICT(TABLE t, MODEL m, DESCRIPTOR(c, ...))");
  if (!descriptor)
    fail(ref.pos, "ML_PREDICT needs a DESCRIPTOR of the input columns: ML_PREDICT(TABLE t, MODEL m, DESCRIPTOR(c, ...))");
  const std::string model_name = model->table.back();
  const ModelDef* def = catalog.model(model_name);
  if (!def) fail(model->pos, fmt::format("Model `{}` not found", model_name));

  Bound in = bind_table_argument(*table);  // TABLE t, or a query in parentheses

  if (descriptor->columns.size() != def->input.size())
    fail(descriptor->pos, fmt::format("ML_PREDICT: the DESCRIPTOR has {} column{} but model `{}` has {} INPUT column{}",
                                      descriptor->columns.size(), descriptor->columns.size() == 1 ? "" : "s",
                                      model_name, def->input.size(), def->input.size() == 1 ? "" : "s"));
  const std::size_t nl = in.plan->schema.size();
  std::vector<std::pair<std::size_t, LogicalType>> features;
  for (std::size_t i = 0; i < descriptor->columns.size(); ++i) {
    ast::ColumnRef cref;
    cref.names = {descriptor->columns[i]};
    const std::size_t col = resolve_column(cref, in.scope, descriptor->pos);
    const LogicalType& type = in.scope.columns[col].type;
    const SqlFunctionParam& want = def->input[i];
    if (!feature_fits(type, want.type))
      fail(descriptor->pos, fmt::format("ML_PREDICT: the DESCRIPTOR column `{}` is {}, model `{}`'s INPUT column `{}` "
                                        "is {}",
                                        descriptor->columns[i], type.to_string(), model_name, want.name,
                                        want.type.to_string()));
    features.emplace_back(col, type);
  }

  TableDef t;
  t.name = model_name;
  t.options = {{"connector", "lookup"}, {"lookup_function", kMlPredictLookupFunction}, {kMlModelNameOption, model_name},
               {"lookup.max-retries", "0"}};  // the provider retries (max-retries, with backoff)
  for (const auto& kv : def->options) t.options.push_back(kv);
  std::set<std::string> output_names;
  for (const auto& c : def->output) output_names.insert(c.name);
  for (const auto& c : def->input) {
    CatalogColumn col;
    col.name = output_names.count(c.name) ? "$input$" + c.name : c.name;
    col.type = c.type;
    t.columns.push_back(col);
  }
  for (const auto& c : def->output) {
    CatalogColumn col;
    col.name = c.name;
    col.type = c.type;
    t.columns.push_back(col);
  }

  auto node = std::make_shared<LogicalLookupJoin>();
  node->alias = model_name;
  node->left_outer = true;
  node->inputs = {in.plan};
  node->pos = ref.pos;
  try {
    node->async = async_lookup_options(session);
  } catch (const ClinkError& e) {
    fail(ref.pos, e.what());
  }
  if (config) {
    const auto* map = config->expr ? std::get_if<ast::MapConstructor>(&config->expr->node) : nullptr;
    if (!map) fail(config->pos, "ML_PREDICT's config argument must be a MAP['key', 'value', ...] of string literals");
    for (std::size_t i = 0; i + 1 < map->keys_and_values.size(); i += 2) {
      const auto* k = std::get_if<ast::Literal>(&map->keys_and_values[i]->node);
      const auto* v = std::get_if<ast::Literal>(&map->keys_and_values[i + 1]->node);
      if (!k || !v || k->kind != ast::Literal::Kind::String || v->kind != ast::Literal::Kind::String)
        fail(map->keys_and_values[i]->pos, "ML_PREDICT's config map takes string literal keys and values");
      if (!kConfigKeys.count(k->text))
        fail(map->keys_and_values[i]->pos,
             fmt::format("Unsupported ML_PREDICT config option '{}' (supported: async, max-concurrent-operations, "
                         "output-mode, timeout, on_error, max_batch_size, max-retries, retry-backoff, "
                         "request-timeout)",
                         k->text));
      if (k->text == "output-mode") {
        if (v->text != "ORDERED" && v->text != "ALLOW_UNORDERED")
          fail(map->keys_and_values[i + 1]->pos,
               fmt::format("ML_PREDICT's 'output-mode' must be ORDERED or ALLOW_UNORDERED, got '{}'", v->text));
        node->async.ordered = v->text == "ORDERED";
      } else if (k->text == "timeout") {
        auto ms = parse_duration_ms(v->text);
        if (!ms || *ms <= 0)
          fail(map->keys_and_values[i + 1]->pos, fmt::format("ML_PREDICT's 'timeout' must be a duration, got '{}'", v->text));
        node->async.timeout_ms = *ms;
      } else if (k->text != "async") {
        t.options.emplace_back(k->text, v->text);
      }
      node->async.configured = true;
    }
  }
  node->table = std::move(t);
  const Schema physical = node->table.physical_schema();
  for (std::size_t i = 0; i < physical.size(); ++i) node->columns.push_back(i);
  node->schema = lookup_join_schema(in.plan->schema, *node);
  // ON fetched.input_i = <feature i> (cast to the INPUT type): the lookup keys.
  std::vector<ExprPtr> keys;
  for (std::size_t i = 0; i < features.size(); ++i) {
    const LogicalType& want = node->schema.type(nl + i);
    ExprPtr value = expr::cast_if_needed(expr::column(features[i].first, features[i].second), want.with_nullable(true));
    keys.push_back(expr::call(registry, "=", {expr::column(nl + i, want), value}));
  }
  node->condition = keys.size() == 1 ? keys[0] : expr::and_(keys);

  // t's columns, then the OUTPUT columns.
  std::vector<std::size_t> keep;
  for (std::size_t i = 0; i < nl; ++i) keep.push_back(i);
  for (std::size_t i = 0; i < def->output.size(); ++i) keep.push_back(nl + def->input.size() + i);
  Bound out;
  out.plan = make_column_project(node, keep, ref.pos);
  out.scope.columns = in.scope.columns;
  for (std::size_t i = nl; i < keep.size(); ++i)
    out.scope.columns.push_back({model_name, out.plan->schema.name(i), out.plan->schema.type(i)});
  return out;
}

}  // namespace clink::sql
