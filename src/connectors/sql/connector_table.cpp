// The SQL connector table's rows: one per connector (the contract:
// include/clink/sql/spec/connector_table.hpp; the factories: register_sql_connectors.cpp).
// A new connector is one more row here and its factories there; the planner reads the row.
#include "clink/sql/spec/connector_table.hpp"

#include <fmt/format.h>

#include "clink/connectors/sql/lookup_source.hpp"
#include "clink/formats/record_format.hpp"

namespace clink::sql {

namespace {

// Each name's index in `input`; a name the input lacks fails with `what`.
std::vector<std::size_t> column_indices(const SinkParamsContext& ctx, const std::vector<std::string>& names) {
  std::vector<std::size_t> out;
  for (const auto& name : names) {
    auto idx = ctx.input.index_of(name);
    if (!idx)
      throw TranslationError(ctx.pos, fmt::format("INSERT INTO {}: the partition column `{}` is not a sink column",
                                                  ctx.table, name));
    out.push_back(*idx);
  }
  return out;
}

// Hive-style partition directories and INSERT OVERWRITE.
void filesystem_sink_params(const SinkParamsContext& ctx, nlohmann::json& p) {
  p["partition_by"] = column_indices(ctx, ctx.partition_columns);
  p["overwrite"] = ctx.overwrite;
}

// The snapshot sink: partition directories as the filesystem sink's, nets by the key.
void snapshot_sink_params(const SinkParamsContext& ctx, nlohmann::json& p) {
  p["partition_by"] = column_indices(ctx, ctx.partition_columns);
  std::vector<std::size_t> key;
  if (ctx.changelog == ChangelogKind::kUpsert)
    for (const auto& k : ctx.primary_key)
      if (auto idx = ctx.input.index_of(k)) key.push_back(*idx);
  p["primary_key"] = key;
}

// The in-process results the tests read: named by the 'name' option (else the table),
// upsert by the primary key's columns or retract.
void collect_sink_params(const SinkParamsContext& ctx, nlohmann::json& p) {
  p["name"] = find_option(ctx.options, "name").value_or(std::string(ctx.table));
  p["mode"] = ctx.changelog == ChangelogKind::kUpsert ? "upsert" : "retract";
  std::vector<std::size_t> key;
  for (const auto& k : ctx.primary_key)
    if (auto idx = ctx.input.index_of(k)) key.push_back(*idx);
  p["primary_key"] = key;
}

// The blackhole takes no options (Flink's has none); it discards whatever it is given.
void blackhole_sink_params(const SinkParamsContext&, nlohmann::json& p) { p = nlohmann::json::object(); }

// Kafka: a table in a changelog format (debezium-json, ...) reads and writes row kinds;
// so does one with the seed's 'mode' = 'cdc', and 'mode' = 'upsert' makes it upsert-kafka.
// The json format reads a ROW's fields by name and skips the others, so a narrowed ROW
// reads only what the query uses, as an unprojected column is never read. Not under
// fail-on-missing-field, which must see every declared field.
bool json_reads_nested_projection(const ConnectorOptions& o, const Schema&) {
  if (find_option(o, "format").value_or("") != "json") return false;
  auto fail_on_missing = find_option(o, "json.fail-on-missing-field");
  return !fail_on_missing || (*fail_on_missing != "true" && *fail_on_missing != "TRUE" && *fail_on_missing != "True");
}

bool nexmark_reads_nested_projection(const ConnectorOptions& o, const Schema& physical) {
  if (find_option(o, "bid.channel-url") == std::optional<std::string>("false")) return false;
  for (std::size_t i = 0; i < physical.size(); ++i)
    if (physical.name(i) == "bid" && physical.field(i).type.is(TypeKind::kRow))
      for (const auto& f : physical.field(i).type.fields())
        if (f.name == "channel") return true;
  return false;
}

bool kafka_changelog_format(const ConnectorOptions& o) {
  auto f = find_option(o, "value.format");
  if (!f) f = find_option(o, "format");
  return (f && record_format_is_changelog(*f)) || find_option(o, "mode") == std::optional<std::string>("cdc");
}
bool kafka_seed_upsert(const ConnectorOptions& o) { return find_option(o, "mode") == std::optional<std::string>("upsert"); }

bool kafka_bounded(const ConnectorOptions& o) {
  auto m = find_option(o, "scan.bounded.mode");
  return m && *m != "unbounded";
}

// The upsert-kafka sink's key: the PRIMARY KEY's columns (by name, as the table declares them).
// The messages hold the table's declared types (a format such as avro encodes
// nullability), not the query's, which may be stricter.
void kafka_sink_params(const SinkParamsContext& ctx, nlohmann::json& p) {
  p["table"] = std::string(ctx.table);
  p["primary_key"] = ctx.primary_key;
  if (ctx.table_schema && ctx.table_schema->size() == ctx.input.size()) {
    nlohmann::json types = nlohmann::json::array();
    for (std::size_t i = 0; i < ctx.input.size(); ++i) types.push_back(ctx.table_schema->type(i).to_string());
    p["message_types"] = types;
  }
}

// jdbc: the sink upserts by the PRIMARY KEY whenever the table declares one (Flink's
// JdbcOutputFormatBuilder picks the upsert executor by the key, not by the input's mode).
void jdbc_sink_params(const SinkParamsContext& ctx, nlohmann::json& p) {
  p["table"] = std::string(ctx.table);
  p["primary_key"] = ctx.primary_key;
}

// Flink's KafkaDynamicSource.ReadableMetadata.
const std::vector<std::pair<std::string, std::string>> kKafkaMetadata = {
    {"topic", "STRING NOT NULL"},
    {"partition", "INT NOT NULL"},
    {"headers", "MAP<STRING, BYTES> NOT NULL"},
    {"leader-epoch", "INT"},
    {"offset", "BIGINT NOT NULL"},
    {"timestamp", "TIMESTAMP_LTZ(3) NOT NULL"},
    {"timestamp-type", "STRING NOT NULL"}};

// Flink's KafkaDynamicSink.WritableMetadata.
const std::vector<std::pair<std::string, std::string>> kKafkaWritableMetadata = {
    {"headers", "MAP<STRING, BYTES> NOT NULL"}, {"timestamp", "TIMESTAMP_LTZ(3) NOT NULL"}};

std::vector<ConnectorDescriptor> make_table() {
  std::vector<ConnectorDescriptor> t;
  // Files (json / csv), read once unless the path is monitored; partitioned writes.
  t.push_back({.name = "filesystem",
               .source_factory = "sql_filesystem_source",
               .bounded = [](const ConnectorOptions& o) { return !find_option(o, "source.monitor-interval"); },
               .bounded_when = "without 'source.monitor-interval'",
               .projection_pushdown = true,
               .nested_projection_pushdown = json_reads_nested_projection,
               .partition_pushdown = true,
               .dead_letters = true,
               .watermark_bound = true,
               .sink_factory = "sql_filesystem_sink",
               .sink_changelog = {},
               .overwrite = true,
               .sink_params = filesystem_sink_params});
  // The whole table as one file per partition, replaced atomically at each checkpoint
  // (sql_snapshot_sink.hpp): an upsert / retract sink over files, whose files a
  // filesystem table reads (a materialized table's backing is one).
  t.push_back({.name = "filesystem-snapshot",
               .sink_factory = "sql_snapshot_sink",
               .sink_changelog = {.upsert = true, .retract = true},
               .sink_params = snapshot_sink_params});
  t.push_back({.name = "datagen",
               .source_factory = "sql_datagen_source",
               .bounded = [](const ConnectorOptions& o) { return find_option(o, "number-of-rows").has_value(); },
               .bounded_when = "with 'number-of-rows'"});
  // Unbounded to the planner even with 'events.num' (which ends the generator).
  // Generates only the ROW fields a query reads (sql_nexmark_source.hpp), but not for the
  // bid ROW without channel and url, whose narrowed form would not say which bid it is.
  t.push_back({.name = "nexmark",
               .source_factory = "sql_nexmark_source",
               .projection_pushdown = true,
               .nested_projection_pushdown = nexmark_reads_nested_projection});
  t.push_back({.name = "kafka",
               .source_factory = "sql_kafka_source",
               .bounded = kafka_bounded,
               .bounded_when = "with 'scan.bounded.mode'",
               .dead_letters = true,
               .source_changelog_of = [](const ConnectorOptions& o) {
                 if (kafka_seed_upsert(o)) return ChangelogKind::kUpsert;
                 return kafka_changelog_format(o) ? ChangelogKind::kRetract : ChangelogKind::kInsertOnly;
               },
               .readable_metadata = kKafkaMetadata,
               .watermark_pushdown = true,
               .sink_factory = "sql_kafka_sink",
               .sink_changelog_of = [](const ConnectorOptions& o) {
                 return SinkChangelogModes{.upsert = kafka_seed_upsert(o), .retract = kafka_changelog_format(o)};
               },
               .writable_metadata = kKafkaWritableMetadata,
               .sink_params = kafka_sink_params});
  // A compacted topic as a table keyed by its PRIMARY KEY.
  t.push_back({.name = "upsert-kafka",
               .source_factory = "sql_upsert_kafka_source",
               .bounded = kafka_bounded,
               .bounded_when = "with 'scan.bounded.mode'",
               .dead_letters = true,
               .source_changelog = ChangelogKind::kUpsert,
               .readable_metadata = kKafkaMetadata,
               .watermark_pushdown = true,
               .sink_factory = "sql_upsert_kafka_sink",
               .sink_changelog = {.upsert = true},
               .writable_metadata = kKafkaWritableMetadata,
               .sink_params = kafka_sink_params});
  // A database table (PostgreSQL): a bounded scan (projected columns and the filter
  // PostgreSQL can take go into its query); a sink as Flink's JdbcDynamicTableSink#
  // getChangelogMode: inserts, and updates and deletes by the PRIMARY KEY (-U deletes, as
  // -D; the +U after it replaces it); without a key, inserts only.
  t.push_back({.name = "jdbc",
               .source_factory = "sql_jdbc_source",
               .bounded = [](const ConnectorOptions&) { return true; },
               .bounded_when = "always",
               .projection_pushdown = true,
               .filter_pushdown = true,
               .sink_factory = "sql_jdbc_sink",
               .sink_changelog = {.upsert = true},
               .sink_params = jdbc_sink_params,
               .lookup_factory = "jdbc"});
  // A PostgreSQL table's snapshot, then its changes (Flink CDC's postgres-cdc): a retract
  // changelog (REPLICA IDENTITY FULL gives the old rows), or with 'changelog-mode' =
  // 'upsert' (or the seed's 'mode' = 'upsert') upserts normalised by the PRIMARY KEY.
  t.push_back({.name = "postgres-cdc",
               .source_factory = "sql_postgres_cdc_source",
               .source_changelog_of = [](const ConnectorOptions& o) {
                 const bool upsert = find_option(o, "changelog-mode") == std::optional<std::string>("upsert") ||
                                     find_option(o, "mode") == std::optional<std::string>("upsert");
                 return upsert ? ChangelogKind::kUpsert : ChangelogKind::kRetract;
               },
               .single_reader = true});
  t.push_back({.name = "print", .sink_factory = "sql_print_sink", .sink_changelog = {.retract = true}});
  t.push_back({.name = "blackhole",
               .sink_factory = "sql_blackhole_sink",
               .sink_changelog = {.retract = true},
               .sink_params = blackhole_sink_params});
  // The seed's enrichment table: lookups served by the function registered under its
  // 'lookup_function' option (connectors/sql/lookup_source.hpp).
  t.push_back({.name = "lookup", .lookup_factory = kLookupFunctionSource});
  t.push_back({.name = "collect",
               .sink_factory = "sql_collect_sink",
               .sink_changelog = {.upsert = true, .retract = true},
               .sink_params = collect_sink_params});
  return t;
}

}  // namespace

const std::vector<ConnectorDescriptor>& sql_connector_table() {
  static const std::vector<ConnectorDescriptor> table = make_table();
  return table;
}

}  // namespace clink::sql
