#include "clink/connectors/sql/register_sql_connectors.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "clink/api/two_phase_commit_sink.hpp"
#include "clink/connectors/dead_letter.hpp"
#include "clink/connectors/sql/bounded_sql_source.hpp"
#include "clink/connectors/sql/sql_connector_params.hpp"
#include "clink/connectors/sql/sql_datagen_source.hpp"
#include "clink/connectors/sql/sql_dead_letters.hpp"
#include "clink/connectors/sql/sql_filesystem_sink.hpp"
#include "clink/connectors/sql/sql_filesystem_source.hpp"
#include "clink/connectors/sql/sql_nexmark_source.hpp"
#include "clink/connectors/sql/sql_sinks.hpp"
#include "clink/connectors/sql/sql_snapshot_sink.hpp"
#include "clink/core/duration.hpp"
#include "clink/core/error.hpp"
#include "clink/sql/common/time_zone.hpp"
#include "clink/sql/spec/expr_json.hpp"

namespace clink::sql {

namespace {

std::string sql_row(const OperatorSpecContext&) { return kSqlRowType; }

// The input schema ("input_schemas": [[...]]) must equal the op's "schema" (a sink's
// output is its input), and the input edge must carry sql_row.
SchemaPtr sink_schema(const SqlConnectorParams& p, const OperatorSpecContext& ctx) {
  if (ctx.input_types.size() != 1 || ctx.input_types[0] != kSqlRowType)
    p.fail(std::string("input record type must be ") + kSqlRowType +
           (ctx.input_types.empty() ? std::string() : ", got '" + ctx.input_types[0] + "'"));
  SchemaPtr schema = p.schema();
  if (p.has("input_schemas")) {
    const auto& in = p.raw("input_schemas");
    if (!in.is_array() || in.size() != 1) p.fail("param 'input_schemas' must hold one schema");
    nlohmann::json one = {{"schema", in[0]}};
    OperatorSpecContext tmp{ctx.id, one, {}};
    SqlConnectorParams inner(tmp, "input_schemas", {"schema"});
    if (!(*inner.schema() == *schema))
      p.fail("input schema " + inner.schema()->to_string() + " differs from the sink's schema " + schema->to_string());
  }
  return schema;
}

RowFormat row_format(const SqlConnectorParams& p) {
  auto f = p.option("format");
  if (!f) p.fail("missing required option 'format' (json or csv)");
  if (*f == "json") return RowFormat::kJson;
  if (*f == "csv") return RowFormat::kCsv;
  p.fail("option 'format' must be json or csv, got '" + *f + "'");
}

// Format options: only the chosen format's prefix is allowed.
void read_format_options(const SqlConnectorParams& p, RowFormat format, JsonFormatOptions& json, CsvFormatOptions& csv) {
  try {
    if (format == RowFormat::kJson) json = JsonFormatOptions::from(p.options());
    else csv = CsvFormatOptions::from(p.options());
  } catch (const ClinkError& e) {
    p.fail(e.what());
  }
}

bool format_key(RowFormat f, const std::string& key) {
  return key.starts_with(f == RowFormat::kJson ? "json." : "csv.");
}

void referenced_columns(const Expr& e, std::vector<std::size_t>& out) {
  if (e.kind == ExprKind::kColumnRef) out.push_back(e.column_index);
  for (const auto& a : e.args) referenced_columns(*a, out);
}

// Flink's `partition.default-name`: the directory name of a NULL or empty partition value.
std::string default_partition_name(const SqlConnectorParams& p) {
  std::string name = p.option_or("partition.default-name", kDefaultPartitionName);
  if (name.empty() || name.find('/') != std::string::npos)
    p.fail("option 'partition.default-name' must be a non-empty directory name, got '" + name + "'");
  return name;
}

// ---- sql_filesystem_source ------------------------------------------------------------

// `watermarks`, when given, gets the pushed-down WATERMARK (source_watermarks.hpp).
std::shared_ptr<FilesystemSqlSource> filesystem_source(const OperatorSpecContext& ctx,
                                                       std::shared_ptr<const SourceWatermarkSpec>* watermarks) {
  SqlConnectorParams p(ctx, "sql_filesystem_source",
                       {"schema", "projected", "declared_schema", "dead_letter", "partition_keys", "partition_filter",
                        "watermark"});
  FilesystemSourceConfig c;
  c.format = row_format(p);
  p.check_options({"path", "format", "partition.default-name", "source.monitor-interval"},
                  [&](const std::string& k) { return format_key(c.format, k); });
  auto path = p.option("path");
  if (!path) p.fail("missing required option 'path'");
  c.path = *path;
  c.table_schema = p.schema();
  if (auto interval = p.option("source.monitor-interval")) {
    auto ms = parse_duration_ms(*interval);
    if (!ms || *ms <= 0)
      p.fail("option 'source.monitor-interval' must be a positive duration ('10 s', '1 min'), got '" + *interval + "'");
    c.monitor_interval_ms = *ms;
  }
  c.projected = p.projected(c.table_schema->size());
  if (p.has("dead_letter")) {
    if (!p.raw("dead_letter").is_boolean()) p.fail("param 'dead_letter' must be true or false");
    c.dead_letter_wired = p.raw("dead_letter").get<bool>();
  }
  read_format_options(p, c.format, c.json, c.csv);
  c.partitions.keys = p.indices("partition_keys", c.table_schema->size());
  c.partitions.default_name = default_partition_name(p);
  if (p.has("partition_filter") && !p.raw("partition_filter").is_null()) {
    if (c.partitions.keys.empty()) p.fail("param 'partition_filter' needs 'partition_keys'");
    std::vector<RowField> out;
    for (std::size_t i : c.projected) out.push_back(c.table_schema->field(i));
    Schema output(std::move(out));
    try {
      c.partitions.filter = expr_from_json(p.raw("partition_filter"), output);
    } catch (const std::exception& e) {
      p.fail(std::string("param 'partition_filter': ") + e.what());
    }
    if (!c.partitions.filter->type.is(TypeKind::kBoolean))
      p.fail("param 'partition_filter' is " + c.partitions.filter->type.to_string() + ", it must be a BOOLEAN");
    std::vector<std::size_t> used;
    referenced_columns(*c.partitions.filter, used);
    for (std::size_t col : used)
      if (std::find(c.partitions.keys.begin(), c.partitions.keys.end(), c.projected[col]) == c.partitions.keys.end())
        p.fail("param 'partition_filter' references `" + output.name(col) + "`, which is not a partition column");
    c.partitions.session.time_zone = TimeZone::of(p.local_time_zone());
  }
  std::shared_ptr<FilesystemSqlSource> source;
  try {
    source = std::make_shared<FilesystemSqlSource>(std::move(c));
  } catch (const ClinkError& e) {
    p.fail(e.what());
  }
  if (watermarks) *watermarks = source_watermark_spec(p, *source->output_schema());
  return source;
}

// ---- sql_datagen_source ---------------------------------------------------------------

std::shared_ptr<DatagenSqlSource> datagen_source(const OperatorSpecContext& ctx) {
  SqlConnectorParams p(ctx, "sql_datagen_source", {"schema"});
  DatagenSqlConfig c;
  c.schema = p.schema();
  static const std::vector<std::string> kFieldOptions = {"kind", "min", "max", "max-past", "length", "var-len",
                                                         "start", "end", "null-rate"};
  p.check_options({"rows-per-second", "number-of-rows"}, [&](const std::string& k) {
    if (!k.starts_with("fields.")) return false;
    auto dot = k.rfind('.');
    std::string field = k.substr(7, dot - 7), opt = k.substr(dot + 1);
    if (!c.schema->index_of(field) || dot <= 7) p.fail("option '" + k + "' names no field of " + c.schema->to_string());
    for (const auto& o : kFieldOptions)
      if (o == opt) return true;
    return false;
  });
  c.rows_per_second = p.double_option("rows-per-second", 10000, 0, 1e12);
  c.number_of_rows = p.int_option("number-of-rows", -1, 0, INT64_MAX);
  for (std::size_t i = 0; i < c.schema->size(); ++i) {
    const std::string& name = c.schema->name(i);
    const LogicalType& t = c.schema->type(i);
    auto key = [&](const char* o) { return "fields." + name + "." + o; };
    DatagenFieldSpec f;
    std::string kind = p.option_or(key("kind"), "random");
    if (kind == "sequence") f.kind = DatagenFieldSpec::Kind::kSequence;
    else if (kind != "random") p.fail("option '" + key("kind") + "' must be random or sequence, got '" + kind + "'");
    if (f.kind == DatagenFieldSpec::Kind::kSequence) {
      if (!(t.is_integer() || t.is_approx_numeric() || t.is(TypeKind::kDecimal) || t.is_character_string()))
        p.fail("option '" + key("kind") + "': a sequence cannot generate " + t.to_string());
      if (!p.option(key("start")) || !p.option(key("end")))
        p.fail("options '" + key("start") + "' and '" + key("end") + "' are required for a sequence");
      f.start = p.int_option(key("start"), 0, INT64_MIN, INT64_MAX);
      f.end = p.int_option(key("end"), 0, f.start, INT64_MAX);
      for (const char* o : {"min", "max", "length", "max-past", "var-len"})
        if (p.option(key(o))) p.fail("option '" + key(o) + "' applies to kind random only");
    } else {
      for (const char* o : {"start", "end"})
        if (p.option(key(o))) p.fail("option '" + key(o) + "' applies to kind sequence only");
      if (auto v = p.option(key("min"))) {
        f.has_min = true;
        f.min = p.double_option(key("min"), 0, -1.7976931348623157e308, 1.7976931348623157e308);
        f.min_text = *v;
      }
      if (auto v = p.option(key("max"))) {
        f.has_max = true;
        f.max = p.double_option(key("max"), 0, -1.7976931348623157e308, 1.7976931348623157e308);
        f.max_text = *v;
      }
      if (f.has_min && f.has_max && f.min > f.max)
        p.fail("option '" + key("min") + "' = '" + f.min_text + "' is above '" + key("max") + "' = '" + f.max_text + "'");
      f.length = p.int_option(key("length"), -1, 0, INT32_MAX);
      f.var_len = p.bool_option(key("var-len"), false);
      f.max_past_ms = p.int_option(key("max-past"), 0, 0, INT64_MAX);
    }
    f.null_rate = p.double_option(key("null-rate"), 0, 0, 1);
    c.fields.push_back(f);
  }
  return std::make_shared<DatagenSqlSource>(std::move(c));
}

// ---- sql_nexmark_source --------------------------------------------------------------

std::shared_ptr<NexmarkSqlSource> nexmark_source(const OperatorSpecContext& ctx) {
  SqlConnectorParams p(ctx, "sql_nexmark_source", {"schema", "projected", "declared_schema"});
  SchemaPtr schema = p.has("schema") ? p.schema() : nexmark_table_schema();
  SchemaPtr declared = p.has("declared_schema") ? p.schema("declared_schema") : nullptr;
  const std::vector<std::size_t> projected = p.projected(schema->size());
  try {
    // Nexmark's own option parser checks the names and values (unknown ones are errors).
    return std::make_shared<NexmarkSqlSource>(p.options(), schema, projected, declared);
  } catch (const ClinkError& e) {
    std::string message = e.what();
    if (message.rfind("nexmark: ", 0) == 0) message.erase(0, 9);
    p.fail(message);
  }
}

// ---- sinks ----------------------------------------------------------------------------

OperatorBuilder make_filesystem_sink(const OperatorSpecContext& ctx) {
  SqlConnectorParams p(ctx, "sql_filesystem_sink", {"schema", "input_schemas", "partition_by", "overwrite"});
  FilesystemSinkConfig c;
  c.schema = sink_schema(p, ctx);
  c.format = row_format(p);
  const auto& policy_names = file_sink_policy_option_names();
  p.check_options({"path", "format", "partition.default-name"}, [&](const std::string& k) {
    return format_key(c.format, k) || std::find(policy_names.begin(), policy_names.end(), k) != policy_names.end();
  });
  c.default_partition_name = default_partition_name(p);
  auto path = p.option("path");
  if (!path) p.fail("missing required option 'path'");
  c.path = *path;
  // Flink's paths are URIs: a local file:// one is the directory itself.
  if (c.path.rfind("file://", 0) == 0) c.path.erase(0, 7);
  else if (auto scheme = c.path.find("://"); scheme != std::string::npos)
    p.fail("option 'path' = '" + *path + "': only local paths (or file:// URIs) are supported");
  c.partition_by = p.indices("partition_by", c.schema->size());
  try {
    c.rolling = parse_rolling_policy(p.options());
    c.commit = parse_partition_commit_policy(p.options(), !c.partition_by.empty());
  } catch (const ClinkError& e) {
    p.fail(e.what());
  }
  if (p.has("overwrite")) {
    if (!p.raw("overwrite").is_boolean()) p.fail("param 'overwrite' must be true or false");
    c.overwrite = p.raw("overwrite").get<bool>();
  }
  read_format_options(p, c.format, c.json, c.csv);
  std::shared_ptr<const TransactionalSink<ColumnBatch>> sink;
  try {
    sink = std::make_shared<FilesystemSqlSink>(std::move(c));
  } catch (const ClinkError& e) {
    p.fail(e.what());
  }
  return [sink] { return std::make_unique<TwoPhaseCommitSinkOperator<ColumnBatch>>(sink); };
}

OperatorBuilder make_dead_letter_sink(const OperatorSpecContext& ctx) {
  SqlConnectorParams p(ctx, "sql_dead_letter_sink", {"schema", "input_schemas"});
  p.check_options({"path"}, [](const std::string&) { return false; });
  FilesystemSinkConfig c;
  if (p.has("schema")) c.schema = sink_schema(p, ctx);
  else c.schema = dead_letter_schema();
  if (!(*c.schema == *dead_letter_schema()))
    p.fail("input schema must be the dead-letter schema " + dead_letter_schema()->to_string() + ", got " +
           c.schema->to_string());
  auto path = p.option("path");
  if (!path) p.fail("missing required option 'path'");
  c.path = *path;
  c.format = RowFormat::kJson;
  std::shared_ptr<const TransactionalSink<ColumnBatch>> sink = std::make_shared<FilesystemSqlSink>(std::move(c));
  return [sink] { return std::make_unique<TwoPhaseCommitSinkOperator<ColumnBatch>>(sink); };
}

OperatorBuilder make_print_sink(const OperatorSpecContext& ctx) {
  SqlConnectorParams p(ctx, "sql_print_sink", {"schema", "input_schemas"});
  sink_schema(p, ctx);
  p.check_options({"print-identifier", "standard-error"}, [](const std::string&) { return false; });
  std::string id = p.option_or("print-identifier", "");
  bool err = p.bool_option("standard-error", false);
  TimeZonePtr zone = TimeZone::of(p.local_time_zone());
  return [id, err, zone] { return std::make_unique<SqlPrintSinkOperator>(id, err, zone); };
}

OperatorBuilder make_blackhole_sink(const OperatorSpecContext& ctx) {
  SqlConnectorParams p(ctx, "sql_blackhole_sink", {"schema", "input_schemas"});
  sink_schema(p, ctx);
  p.check_options({}, [](const std::string&) { return false; });
  return [] { return std::make_unique<SqlBlackholeSinkOperator>(); };
}

OperatorBuilder make_collect_sink(const OperatorSpecContext& ctx) {
  SqlConnectorParams p(ctx, "sql_collect_sink", {"schema", "input_schemas", "name", "mode", "primary_key"});
  SchemaPtr schema = sink_schema(p, ctx);
  p.check_options({}, [](const std::string&) { return false; });
  if (!p.has("name") || !p.raw("name").is_string()) p.fail("missing required param 'name' (a string)");
  std::string name = p.raw("name").get<std::string>();
  std::string mode = p.has("mode") && p.raw("mode").is_string() ? p.raw("mode").get<std::string>() : "retract";
  if (mode != "retract" && mode != "upsert") p.fail("param 'mode' must be retract or upsert, got '" + mode + "'");
  auto key = p.indices("primary_key", schema->size());
  if (mode == "upsert" && key.empty()) p.fail("mode upsert needs param 'primary_key'");
  auto results = SqlCollectResults::get(name);
  results->configure(mode == "upsert" ? SqlCollectResults::Mode::kUpsert : SqlCollectResults::Mode::kRetract, key);
  TimeZonePtr zone = TimeZone::of(p.local_time_zone());
  std::shared_ptr<const TransactionalSink<ColumnBatch>> sink = std::make_shared<SqlCollectSink>(results, zone);
  return [sink] { return std::make_unique<TwoPhaseCommitSinkOperator<ColumnBatch>>(sink); };
}

}  // namespace

void register_sql_connectors(OperatorRegistry& r) {
  // Read whole inside an op (VECTOR_SEARCH's vector table): the same sources as the scans.
  register_sql_source_maker("sql_filesystem_source",
                            [](const OperatorSpecContext& ctx) { return filesystem_source(ctx, nullptr); });
  register_sql_source_maker("sql_datagen_source", datagen_source);
  r.add(OperatorFactoryInfo{
      .name = "sql_filesystem_source",
      .description = "SQL table source reading json or csv lines from a file or a directory (one split per file); "
                     "params: schema, projected, dead_letter, watermark (bounds the assigner), and the DDL options path, "
                     "format, json.*/csv.*",
      .num_inputs = 0,
      .out_type = sql_row,
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        std::shared_ptr<const SourceWatermarkSpec> watermarks;
        std::shared_ptr<const SqlSource> s = filesystem_source(ctx, &watermarks);
        return [s, watermarks] { return std::make_unique<SqlSourceOperator>(s, kDefaultBatchSize, watermarks); };
      },
      .side_outputs = {{kDeadLetterTag, kSqlRowType}}});
  r.add(OperatorFactoryInfo{
      .name = "sql_datagen_source",
      .description = "SQL table source generating rows with Flink's datagen options (rows-per-second, "
                     "number-of-rows, fields.<f>.kind/min/max/max-past/length/var-len/start/end/null-rate)",
      .num_inputs = 0,
      .out_type = sql_row,
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        std::shared_ptr<const SqlSource> s = datagen_source(ctx);
        return [s] { return std::make_unique<SqlSourceOperator>(s); };
      }});
  r.add(OperatorFactoryInfo{
      .name = "sql_nexmark_source",
      .description = "SQL table source of Nexmark's events as Nexmark's Flink DDL table (event_type, person, auction, "
                     "bid); params: schema (default: that table), projected, and Nexmark's options by their names",
      .num_inputs = 0,
      .out_type = sql_row,
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        std::shared_ptr<const SqlSource> s = nexmark_source(ctx);
        return [s] { return std::make_unique<SqlSourceOperator>(s); };
      }});
  r.add(OperatorFactoryInfo{.name = "sql_filesystem_sink",
                            .description = "exactly-once SQL table sink writing json or csv part files, "
                                           "partition_by as col=value/ directories, overwrite; insert-only",
                            .num_inputs = 1,
                            .out_type = sql_row,
                            .make = make_filesystem_sink});
  r.add(OperatorFactoryInfo{.name = "sql_dead_letter_sink",
                            .description = "exactly-once sink writing dead letters (reason, origin, position, "
                                           "payload) as JSON lines into the directory `path`",
                            .num_inputs = 1,
                            .out_type = sql_row,
                            .make = make_dead_letter_sink});
  r.add(OperatorFactoryInfo{.name = "sql_print_sink",
                            .description = "prints rows as Flink does (+I[1, abc]); print-identifier, standard-error",
                            .num_inputs = 1,
                            .out_type = sql_row,
                            .make = make_print_sink});
  r.add(OperatorFactoryInfo{.name = "sql_blackhole_sink",
                            .description = "discards rows",
                            .num_inputs = 1,
                            .out_type = sql_row,
                            .make = make_blackhole_sink});
  r.add(OperatorFactoryInfo{.name = "sql_collect_sink",
                            .description = "collects rows into the in-process results named `name` (tests); mode "
                                           "retract (changelog) or upsert (by primary_key)",
                            .num_inputs = 1,
                            .out_type = sql_row,
                            .make = make_collect_sink});
  register_snapshot_sink(r);
}

}  // namespace clink::sql
