// The physical planner's sources and sinks (plan_compiler.hpp): a scan with what the
// connector takes pushed into it (projection, partitions, filter, watermark), VALUES, a
// sink with its changelog and parallelism, and the dead-letter sink.
#include <algorithm>
#include <numeric>
#include <set>

#include "../optimizer/nested_projection.hpp"
#include "../planner/plan_rewrite.hpp"
#include "clink/connectors/sql/sql_dead_letters.hpp"
#include "clink/sql/spec/connector_table.hpp"
#include "clink/sql/spec/expr_json.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"
#include "plan_compiler.hpp"

namespace clink::sql::physical {

std::vector<std::string> Compiler::partition_columns(const TableDef& t) {
  std::vector<std::string> parts = t.partitioned_by;
  if (parts.empty())
    if (auto opt = t.option("partition_by")) {
      std::string cur;
      for (char c : *opt + ",") {
        if (c == ',') {
          if (!cur.empty()) parts.push_back(cur);
          cur.clear();
        } else if (c != ' ') {
          cur += c;
        }
      }
    }
  return parts;
}

json Compiler::pushed_down_watermark(const LogicalWatermarkAssigner& w) const {
  if (!w.alignment_group.empty()) return nullptr;
  const LogicalNode* in = &w.input();
  const LogicalProject* project = nullptr;
  if (in->kind == LogicalKind::kProject) {
    project = static_cast<const LogicalProject*>(in);
    in = &in->input();
  }
  if (in->kind != LogicalKind::kScan) return nullptr;
  const ConnectorDescriptor* d = find_sql_connector(static_cast<const LogicalScan&>(*in).table.connector());
  if (!d || !(d->watermark_pushdown || d->watermark_bound)) return nullptr;
  ExprPtr watermark = project ? rewrite::substitute(w.watermark, project->exprs) : w.watermark;
  if (d->watermark_bound) return {{"watermark", expr_to_json(*watermark)}, {"bounds_assigner", true}};
  ExprPtr rowtime = project ? project->exprs[w.rowtime]
                            : expr::column(w.rowtime, w.schema.type(w.rowtime), w.schema.name(w.rowtime));
  return {{"watermark", expr_to_json(*watermark)}, {"rowtime", expr_to_json(*rowtime)},
          {"interval_ms", w.emit == "on-event" ? 0 : w.interval_ms}, {"idle_timeout_ms", w.idle_timeout_ms}};
}

std::string Compiler::scan(const LogicalScan& s, const ExprPtr& filter) {
  std::string connector = s.table.connector();
  if (connector.empty()) fail(s.pos, fmt::format("table `{}` has no 'connector' option", s.table.name));
  const ConnectorDescriptor* d = find_sql_connector(connector);
  if (!d || !d->is_source()) {
    if (d && d->is_sink())
      fail(s.pos, fmt::format("table `{}`: the {} connector can only be written to", s.table.name, connector));
    fail(s.pos, fmt::format("table `{}`: unknown connector '{}' (sources: {})", s.table.name, connector,
                            sql_source_names()));
  }
  if (batch && !sql_source_bounded(connector, s.table.options))  // Flink's message
    fail(s.pos, fmt::format("Querying an unbounded table 'default_catalog.default_database.{}' in batch mode is not "
                            "allowed. The table source is unbounded.",
                            s.table.name));
  json p = connector_params(s.table);
  const Schema read = scan_read_schema(s);
  p["schema"] = schema_to_json(read);  // physical columns as read; output: the `projected`
  // ROWs narrowed by nested projection push-down: the declared ones too (the nexmark
  // source tells its table's shape by them).
  if (const Schema declared = s.table.physical_schema(); !(read == declared))
    p["declared_schema"] = schema_to_json(declared);
  if (d->projection_pushdown) p["projected"] = s.projected;
  if (d->partition_pushdown) add_partitions(s, filter, p);
  if (d->filter_pushdown && filter) add_filter(filter, p);
  // Metadata columns, which the scan's schema has after the physical ones.
  json metadata = json::array();
  for (const auto& c : s.table.columns)
    if (c.kind == CatalogColumn::Kind::kMetadata)
      metadata.push_back({{"key", c.metadata_key.value_or(c.name)}, {"name", c.name}, {"type", c.type.to_string()}});
  if (!metadata.empty()) p["metadata"] = metadata;
  if (!scan_watermark.is_null()) {
    p["watermark"] = scan_watermark;
    json session = session_json();
    if (!session.empty()) p["session"] = session;
  }
  const bool upsert = d->source_changelog_for(s.table.options) == ChangelogKind::kUpsert;
  if (upsert) p["primary_key"] = s.table.primary_key;
  const auto scan_parallelism = parallelism_option(s.table, "scan.parallelism", s.pos);
  // Equal scans of one table (same params: options, projection, filter, watermark) share a
  // source, as Flink reuses them (reuse-source-enabled): a self-join reads its input once.
  std::string reuse_key = s.table.name + "|" + p.dump() + "|" + std::to_string(scan_parallelism.value_or(0));
  if (auto it = reused_scans.find(reuse_key); it != reused_scans.end()) return it->second;
  std::string id = add(d->source_factory, {}, p, nullptr, d->single_reader);
  if (scan_parallelism) ops.back()["parallelism"] = *scan_parallelism;
  if (d->dead_letters) {
    dead_letter_producers.push_back(id);
    dead_letter_sources.push_back(ops.size() - 1);
  }
  if (upsert) {
    // Flink's ChangelogNormalize: the upserts, keyed by the primary key, into retractions.
    std::vector<std::size_t> keys;
    for (const auto& k : s.table.primary_key)
      if (auto idx = s.schema.index_of(k)) keys.push_back(*idx);
    json n = {{"keys", keys}, {"schema", schema_to_json(s.schema)}};
    id = add("sql_changelog_normalize", {id}, n, &keys, false, &s.schema);
  }
  reused_scans.emplace(std::move(reuse_key), id);
  return id;
}

void Compiler::add_partitions(const LogicalScan& s, const ExprPtr& filter, json& p) {
  const Schema physical = s.table.physical_schema();
  std::vector<std::size_t> keys;
  for (const auto& name : partition_columns(s.table)) {
    auto idx = physical.index_of(name);
    if (!idx) fail(s.pos, fmt::format("table `{}`: the partition column `{}` is not a physical column", s.table.name, name));
    keys.push_back(*idx);
  }
  if (keys.empty()) return;
  p["partition_keys"] = keys;
  if (!filter) return;
  std::vector<ExprPtr> pruning;
  for (const auto& c : rewrite::conjuncts(filter)) {
    std::set<std::size_t> cols;
    rewrite::collect_columns(c, cols);
    bool on_keys = !cols.empty() && rewrite::is_deterministic(c);
    for (std::size_t col : cols)
      on_keys = on_keys && col < s.projected.size() &&
                std::find(keys.begin(), keys.end(), s.projected[col]) != keys.end();
    if (on_keys) pruning.push_back(c);
  }
  if (!pruning.empty()) {
    p["partition_filter"] = expr_to_json(*rewrite::conjunction(pruning));
    json session_params = session_json();
    if (!session_params.empty()) p["session"] = session_params;
  }
}

void Compiler::add_filter(const ExprPtr& filter, json& p) {
  std::vector<ExprPtr> pushed;
  for (const auto& c : rewrite::conjuncts(filter))
    if (rewrite::is_deterministic(c)) pushed.push_back(c);
  if (pushed.empty()) return;
  p["filter"] = expr_to_json(*rewrite::conjunction(pushed));
  json session_params = session_json();
  if (!session_params.empty()) p["session"] = session_params;
}

std::string Compiler::values(const LogicalValues& v) {
  json rows = json::array();
  for (const auto& r : v.rows) {
    json row = json::array();
    for (const auto& e : r) row.push_back(expr_to_json(*e));
    rows.push_back(std::move(row));
  }
  json p = {{"schema", schema_to_json(v.schema)}, {"rows", std::move(rows)}};
  json s = session_json();
  if (!s.empty()) p["session"] = s;
  return add("sql_values_source", {}, p, nullptr, true);
}

std::string Compiler::sink(const LogicalSink& s) {
  std::string connector = s.table.connector();
  if (connector.empty()) fail(s.pos, fmt::format("table `{}` has no 'connector' option", s.table.name));
  const ConnectorDescriptor* d = find_sql_connector(connector);
  if (!d || !d->is_sink()) {
    if (d && d->is_source())
      fail(s.pos, fmt::format("INSERT INTO {}: the {} connector can only be read", s.table.name, connector));
    fail(s.pos, fmt::format("INSERT INTO {}: unknown connector '{}' (sinks: {})", s.table.name, connector,
                            sql_sink_names()));
  }
  if (s.overwrite && !d->overwrite)
    fail(s.pos, fmt::format("INSERT OVERWRITE {}: only {} can overwrite", s.table.name, sql_overwrite_sinks_text()));
  auto in = compile(s.input());
  // check_sink_changelog accepted the input's mode, so the sink takes some mode of it.
  ChangelogKind input_kind = props.changelog(s.input()).kind;
  if (batch && input_kind != ChangelogKind::kInsertOnly) {  // the final table, as inserts at the end
    std::vector<std::size_t> all(s.input().schema.size());
    std::iota(all.begin(), all.end(), std::size_t{0});
    in = {add("sql_final_table", in, {{"schema", schema_to_json(s.input().schema)}}, &all, false, &s.input().schema)};
    input_kind = ChangelogKind::kInsertOnly;
  }
  const std::vector<std::string> parts = partition_columns(s.table);
  // The written columns as declared: physical and persisted metadata ones (the input's order).
  std::vector<RowField> declared_fields;
  for (const auto& c : s.table.columns)
    if (c.kind == CatalogColumn::Kind::kPhysical || (c.kind == CatalogColumn::Kind::kMetadata && !c.is_virtual))
      declared_fields.push_back({c.name, c.type});
  const Schema declared(std::move(declared_fields));
  SinkParamsContext ctx{.table = s.table.name,
                        .options = s.table.options,
                        .input = s.input().schema,
                        .table_schema = &declared,
                        .partition_columns = parts,
                        .primary_key = s.table.primary_key,
                        .overwrite = s.overwrite,
                        .changelog = sink_changelog_kind(*d, s.table.options, input_kind, !s.table.primary_key.empty())
                                         .value_or(ChangelogKind::kRetract),
                        .pos = s.pos};
  json p = connector_params(s.table);
  if (d->sink_params) d->sink_params(ctx, p);
  // A sink's schema is its input schema; the binder's final Calc already names the
  // columns as the table does (JSON fields, CSV headers).
  p["schema"] = schema_to_json(s.input().schema);
  // Persisted metadata columns the sink writes (columns of its input, by name).
  json written = json::array();
  for (const auto& c : s.table.columns)
    if (c.kind == CatalogColumn::Kind::kMetadata && !c.is_virtual)
      written.push_back({{"key", c.metadata_key.value_or(c.name)}, {"name", c.name}});
  if (!written.empty()) p["metadata"] = written;
  // An overwriting filesystem sink replaces the old files once, in one subtask (it
  // refuses to run at parallelism > 1): at any default parallelism it runs at 1.
  // 'sink.parallelism' (Flink's): the sink's own parallelism; an upsert sink then gets
  // its rows hashed by the primary key, so each key's changes stay in order.
  const auto parallelism = parallelism_option(s.table, "sink.parallelism", s.pos);
  std::vector<std::size_t> key;
  if (parallelism && ctx.changelog == ChangelogKind::kUpsert)
    for (const auto& k : s.table.primary_key)
      if (auto idx = s.input().schema.index_of(k)) key.push_back(*idx);
  std::string id = add(d->sink_factory, in, p, key.empty() ? nullptr : &key, s.overwrite, &s.input().schema);
  if (parallelism) ops.back()["parallelism"] = *parallelism;
  return id;
}

void Compiler::wire_dead_letters() {
  auto it = session.find("sql.dead-letter");
  if (it == session.end() || dead_letter_producers.empty()) return;
  const Schema& schema = *dead_letter_schema();
  for (auto i : dead_letter_sources) ops[i]["params"]["dead_letter"] = true;
  json p;
  std::string factory;
  if (const TableDef* t = catalog.table(it->second)) {
    Schema ts = t->physical_schema();
    if (ts.size() != 4)
      fail({}, fmt::format("'sql.dead-letter' table `{}` must have the columns (reason STRING, origin STRING, "
                           "position STRING, payload STRING)", t->name));
    std::string connector = t->connector();
    const ConnectorDescriptor* d = find_sql_connector(connector);
    if (!d || !d->is_sink())
      fail({}, fmt::format("'sql.dead-letter' table `{}`: the {} connector cannot be written", t->name, connector));
    factory = d->sink_factory;
    p = connector_params(*t);
    // Dead letters are inserts into the table's columns: no partitions, key or overwrite.
    const std::vector<std::string> none;
    SinkParamsContext ctx{.table = t->name, .options = t->options, .input = schema, .partition_columns = none,
                          .primary_key = none};
    if (d->sink_params) d->sink_params(ctx, p);
  } else {
    factory = "sql_dead_letter_sink";
    p = {{"path", it->second}};
  }
  p["schema"] = schema_to_json(schema);
  p["input_schemas"] = json::array({schema_to_json(schema)});
  std::string id = next_id(factory);
  json in = json::array();
  for (const auto& from : dead_letter_producers) in.push_back({{"from", from}, {"side_output", "dead-letter"}});
  ops.push_back({{"id", id}, {"type", factory}, {"params", p}, {"inputs", in}});
}

}  // namespace clink::sql::physical
