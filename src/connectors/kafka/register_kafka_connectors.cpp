// The `kafka` and `upsert-kafka` SQL connectors' factories: Flink's table options read
// into the source and sink configurations (sql_kafka_source.hpp, sql_kafka_sink.hpp).
#include "clink/connectors/kafka/register_kafka_connectors.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "clink/api/two_phase_commit_sink.hpp"
#include "clink/connectors/dead_letter.hpp"
#include "clink/connectors/kafka/sql_kafka_sink.hpp"
#include "clink/connectors/kafka/sql_kafka_source.hpp"
#include "clink/connectors/sql/sql_connector_params.hpp"
#include "clink/core/duration.hpp"
#include "clink/core/error.hpp"
#include "clink/sql/common/time_zone.hpp"
#include "clink/sql/spec/expr_json.hpp"

namespace clink::sql {

namespace {

std::string sql_row(const OperatorSpecContext&) { return kSqlRowType; }

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    auto end = s.find(sep, start);
    if (end == std::string::npos) end = s.size();
    std::string part = s.substr(start, end - start);
    auto b = part.find_first_not_of(' ');
    auto e = part.find_last_not_of(' ');
    if (b != std::string::npos) out.push_back(part.substr(b, e - b + 1));
    start = end + 1;
  }
  return out;
}

// The options both factories take (a table may be read and written).
const std::vector<std::string>& kafka_option_keys() {
  static const std::vector<std::string> keys = {
      "topic", "topic-pattern", "format", "key.format", "value.format", "key.fields", "key.fields-prefix",
      "value.fields-include", "scan.startup.mode", "scan.startup.specific-offsets", "scan.startup.timestamp-millis",
      "scan.bounded.mode", "scan.bounded.specific-offsets", "scan.bounded.timestamp-millis",
      "scan.topic-partition-discovery.interval", "scan.parallelism", "sink.delivery-guarantee",
      "sink.transactional-id-prefix", "sink.partitioner", "sink.parallelism", "sink.buffer-flush.max-rows",
      "sink.buffer-flush.interval", "delivery_guarantee", "mode"};
  return keys;
}

// The seed's spelling of upsert-kafka: a kafka table with 'mode' = 'upsert' (and a PRIMARY KEY).
bool seed_upsert(const SqlConnectorParams& p) { return p.option("mode") == std::optional<std::string>("upsert"); }

void check_seed_mode(const SqlConnectorParams& p) {
  auto mode = p.option("mode");
  if (mode && *mode != "append" && *mode != "upsert" && *mode != "cdc")
    p.fail("option 'mode' must be append, upsert or cdc, got '" + *mode + "'");
}


// A format's options from the table's: `<format>.x` (with 'format') or `value.<format>.x`
// / `key.<format>.x`, each given to the format as `<format>.x`.
FormatOptions format_options(const SqlConnectorParams& p, const std::string& format, const std::string& role,
                             bool plain_prefix) {
  FormatOptions out;
  for (const auto& [k, v] : p.options()) {
    if (k.starts_with(role + format + ".")) out[k.substr(role.size())] = v;
    else if (plain_prefix && k.starts_with(format + ".")) out[k] = v;
  }
  return out;
}

bool is_format_key(const SqlConnectorParams& p, const std::string& key) {
  for (const char* role : {"format", "key.format", "value.format"}) {
    auto f = p.option(role);
    if (!f) continue;
    std::string prefix = std::string(role) == "format" ? "" : std::string(role).substr(0, std::string(role).find('.') + 1);
    if (key.starts_with(prefix + *f + ".")) return true;
  }
  return false;
}

// The key and value formats and the columns each holds, as Flink's KafkaConnectorOptionsUtil:
// key.fields (or, for upsert-kafka, the primary key) go to the key; the value holds every
// physical column (value.fields-include ALL) or those not in the key (EXCEPT_KEY).
KafkaMessageFormats read_formats(const SqlConnectorParams& p, const Schema& physical, const std::vector<std::string>& primary_key,
                     bool upsert) {
  KafkaMessageFormats f;
  auto format = p.option("format");
  auto value_format = p.option("value.format");
  if (format && value_format) p.fail("options 'format' and 'value.format' both set: use one");
  if (!format && !value_format) p.fail("missing required option 'value.format' (or 'format')");
  f.value_format = value_format ? *value_format : *format;
  // The seed's 'mode' = 'cdc': the JSON messages are Debezium change events.
  if (p.option("mode") == std::optional<std::string>("cdc") && f.value_format == "json") f.value_format = "debezium-json";
  if (!record_format_known(f.value_format))
    p.fail("unknown format '" + f.value_format + "' (formats: " + record_format_names() + ")");
  f.value_options = format_options(p, f.value_format, "value.", format.has_value());

  std::vector<std::string> key_names;
  if (upsert) {
    if (primary_key.empty())
      p.fail("'upsert-kafka' tables require to define a PRIMARY KEY constraint. The PRIMARY KEY specifies which "
             "columns should be read from or write to the Kafka message key.");
    if (p.option("key.fields")) p.fail("option 'key.fields' is not allowed for upsert-kafka: the PRIMARY KEY is the key");
    key_names = primary_key;
    if (!p.option("key.format") && !seed_upsert(p)) p.fail("missing required option 'key.format'");
  } else if (auto kf = p.option("key.fields")) {
    key_names = split(*kf, ';');
    if (!p.option("key.format"))
      p.fail("option 'key.fields' needs 'key.format' (the format of the message key)");
  } else if (p.option("key.format")) {
    p.fail("A key format 'key.format' requires the declaration of one or more of key fields using 'key.fields'.");
  }
  const std::string prefix = p.option_or("key.fields-prefix", "");
  const std::string include = p.option_or("value.fields-include", "ALL");
  if (include != "ALL" && include != "EXCEPT_KEY")
    p.fail("option 'value.fields-include' must be ALL or EXCEPT_KEY, got '" + include + "'");
  if (!prefix.empty() && include != "EXCEPT_KEY")
    p.fail("A key prefix ('key.fields-prefix') is not allowed if the key and value fields overlap: set "
           "'value.fields-include' = 'EXCEPT_KEY'.");
  if (!key_names.empty()) {
    f.key_format = p.option_or("key.format", f.value_format);  // the seed's upsert: the key as the value
    if (!record_format_known(f.key_format))
      p.fail("unknown key format '" + f.key_format + "' (formats: " + record_format_names() + ")");
    if (record_format_is_changelog(f.key_format))
      p.fail("key format '" + f.key_format + "' holds row kinds; a message key must be insert-only");
    f.key_options = format_options(p, f.key_format, "key.", false);
    std::vector<RowField> fields;
    for (const auto& name : key_names) {
      auto idx = physical.index_of(name);
      if (!idx) p.fail("key field '" + name + "' is not a physical column of the table");
      if (!name.starts_with(prefix))
        p.fail("key field '" + name + "' does not start with 'key.fields-prefix' '" + prefix + "'");
      f.key_columns.push_back(*idx);
      fields.push_back({name.substr(prefix.size()), physical.field(*idx).type});
    }
    f.key_fields = make_schema(std::move(fields));
  }
  std::vector<RowField> fields;
  for (std::size_t i = 0; i < physical.size(); ++i) {
    bool in_key = std::find(f.key_columns.begin(), f.key_columns.end(), i) != f.key_columns.end();
    if (include == "EXCEPT_KEY" && in_key) continue;
    f.value_columns.push_back(i);
    fields.push_back(physical.field(i));
  }
  if (fields.empty()) p.fail("the value holds no column ('value.fields-include' = 'EXCEPT_KEY' and every column is in the key)");
  f.value_fields = make_schema(std::move(fields));
  return f;
}

std::map<std::string, std::string> client_properties(const SqlConnectorParams& p) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : p.options())
    if (k.starts_with("properties.")) out[k.substr(11)] = v;
  if (!out.count("bootstrap.servers")) p.fail("missing required option 'properties.bootstrap.servers'");
  return out;
}

void check_kafka_options(const SqlConnectorParams& p) {
  p.check_options(kafka_option_keys(),
                  [&](const std::string& k) { return k.starts_with("properties.") || is_format_key(p, k); });
}

// "partition:0,offset:42;partition:1,offset:300" for every topic of the table.
std::map<KafkaTopicPartition, std::int64_t> specific_offsets(const SqlConnectorParams& p, const std::string& key,
                                                             const std::vector<std::string>& topics) {
  std::map<KafkaTopicPartition, std::int64_t> out;
  auto v = p.option(key);
  if (!v) p.fail("option '" + key + "' is required by its mode 'specific-offsets'");
  for (const auto& part : split(*v, ';')) {
    auto fields = split(part, ',');
    std::int64_t partition = -1, offset = -1;
    bool ok = fields.size() == 2;
    for (const auto& fld : fields) {
      auto colon = fld.find(':');
      if (colon == std::string::npos) { ok = false; break; }
      std::string name = fld.substr(0, colon), val = fld.substr(colon + 1);
      try {
        if (name == "partition") partition = std::stoll(val);
        else if (name == "offset") offset = std::stoll(val);
        else ok = false;
      } catch (const std::exception&) {
        ok = false;
      }
    }
    if (!ok || partition < 0 || offset < 0)
      p.fail("Invalid properties '" + key + "' should follow the format 'partition:0,offset:42;partition:1,offset:300', "
             "but is '" + *v + "'.");
    for (const auto& t : topics) out[{t, static_cast<std::int32_t>(partition)}] = offset;
  }
  return out;
}

KafkaOffsetSpec offset_spec(const SqlConnectorParams& p, const std::string& what, const std::string& dflt,
                            const std::vector<std::string>& topics) {
  const std::string mode = p.option_or("scan." + what + ".mode", dflt);
  KafkaOffsetSpec s;
  using M = KafkaOffsetSpec::Mode;
  if (mode == "earliest-offset" && what == "startup") s.mode = M::kEarliest;
  else if (mode == "latest-offset") s.mode = M::kLatest;
  else if (mode == "group-offsets") s.mode = M::kGroupOffsets;
  else if (mode == "unbounded" && what == "bounded") s.mode = M::kUnbounded;
  else if (mode == "timestamp") {
    s.mode = M::kTimestamp;
    std::string key = "scan." + what + ".timestamp-millis";
    if (!p.option(key)) p.fail("option '" + key + "' is required by its mode 'timestamp'");
    s.timestamp_ms = p.int_option(key, 0, 0, INT64_MAX);
  } else if (mode == "specific-offsets") {
    s.mode = M::kSpecificOffsets;
    s.specific = specific_offsets(p, "scan." + what + ".specific-offsets", topics);
  } else {
    p.fail("option 'scan." + what + ".mode' must be one of " +
           (what == "startup" ? std::string("earliest-offset, latest-offset, group-offsets, timestamp, specific-offsets")
                              : std::string("unbounded, latest-offset, group-offsets, timestamp, specific-offsets")) +
           ", got '" + mode + "'");
  }
  return s;
}

OperatorBuilder kafka_source(const OperatorSpecContext& ctx, bool upsert) {
  const char* factory = upsert ? "sql_upsert_kafka_source" : "sql_kafka_source";
  SqlConnectorParams p(ctx, factory, {"schema", "metadata", "primary_key", "dead_letter", "table", "watermark"});
  check_kafka_options(p);
  check_seed_mode(p);
  upsert = upsert || seed_upsert(p);
  KafkaSourceConfig c;
  c.upsert = upsert;
  c.reader.what = p.has("table") ? "kafka source of table `" + p.raw("table").get<std::string>() + "`"
                                 : "kafka source '" + std::string(ctx.id) + "'";
  c.reader.client = client_properties(p);
  auto topic = p.option("topic");
  auto pattern = p.option("topic-pattern");
  if (topic && pattern) p.fail("options 'topic' and 'topic-pattern' both set: use one");
  if (!topic && !pattern) p.fail("missing required option 'topic' (or 'topic-pattern')");
  if (upsert && pattern) p.fail("upsert-kafka reads one topic: 'topic-pattern' is not supported");
  if (topic) c.reader.topics = split(*topic, ';');
  if (pattern) c.reader.topic_pattern = *pattern;
  if (upsert) {
    c.reader.startup.mode = KafkaOffsetSpec::Mode::kEarliest;  // upsert-kafka always reads the whole topic
    if (p.option("scan.startup.mode")) p.fail("upsert-kafka always reads from the earliest offset: 'scan.startup.mode' is not supported");
  } else {
    c.reader.startup = offset_spec(p, "startup", "group-offsets", c.reader.topics);
  }
  c.reader.bounded = offset_spec(p, "bounded", "unbounded", c.reader.topics);
  if (auto interval = p.option("scan.topic-partition-discovery.interval")) {
    auto ms = parse_duration_ms(*interval);
    if (!ms) p.fail("option 'scan.topic-partition-discovery.interval' is not a duration: '" + *interval + "'");
    c.reader.discovery_interval_ms = *ms;
  }
  SchemaPtr physical = p.schema();
  std::vector<std::string> pk;
  if (p.has("primary_key"))
    for (const auto& k : p.raw("primary_key")) pk.push_back(k.get<std::string>());
  c.formats = read_formats(p, *physical, pk, upsert);
  if (upsert && record_format_is_changelog(c.formats.value_format))
    p.fail("upsert-kafka's value format must be insert-only, got '" + c.formats.value_format + "'");
  std::vector<RowField> out = physical->fields();
  if (p.has("metadata")) {
    for (const auto& m : p.raw("metadata")) {
      std::string key = m.at("key").get<std::string>();
      static const std::map<std::string, KafkaMetadata> kKeys = {
          {"topic", KafkaMetadata::kTopic}, {"partition", KafkaMetadata::kPartition},
          {"offset", KafkaMetadata::kOffset}, {"timestamp", KafkaMetadata::kTimestamp},
          {"timestamp-type", KafkaMetadata::kTimestampType}, {"headers", KafkaMetadata::kHeaders},
          {"leader-epoch", KafkaMetadata::kLeaderEpoch}};
      auto it = kKeys.find(key);
      if (it == kKeys.end()) p.fail("unknown metadata key '" + key + "'");
      c.metadata.push_back(it->second);
      out.push_back({m.at("name").get<std::string>(), parse_logical_type(m.at("type").get<std::string>())});
    }
  }
  c.output_schema = make_schema(std::move(out));
  if (p.has("dead_letter")) c.dead_letter_wired = p.raw("dead_letter").get<bool>();
  // Validate the formats' options now, not in the first reader.
  make_record_decoder(c.formats.value_format, c.formats.value_fields, c.formats.value_options);
  if (!c.formats.key_format.empty()) make_record_decoder(c.formats.key_format, c.formats.key_fields, c.formats.key_options);
  std::shared_ptr<const SqlSource> source = std::make_shared<KafkaSqlSource>(std::move(c));
  auto watermarks = source_watermark_spec(p, *source->output_schema());
  return [source, watermarks] { return std::make_unique<SqlSourceOperator>(source, kDefaultBatchSize, watermarks); };
}

std::function<OperatorBuilder(const OperatorSpecContext&)> kafka_sink(bool upsert) {
  return [upsert](const OperatorSpecContext& ctx) -> OperatorBuilder {
    const char* factory = upsert ? "sql_upsert_kafka_sink" : "sql_kafka_sink";
    SqlConnectorParams p(ctx, factory, {"schema", "input_schemas", "primary_key", "table", "message_types", "metadata"});
    check_kafka_options(p);
    check_seed_mode(p);
    const bool as_upsert = upsert || seed_upsert(p);
    KafkaSinkConfig c;
    c.upsert = as_upsert;
    const std::string table = p.has("table") ? p.raw("table").get<std::string>() : std::string(ctx.id);
    c.writer.what = "kafka sink of table `" + table + "`";
    c.writer.client = client_properties(p);
    auto topic = p.option("topic");
    if (!topic || topic->find(';') != std::string::npos || p.option("topic-pattern"))
      p.fail("the kafka sink writes one topic: set 'topic' to a single name");
    c.writer.topic = *topic;
    c.input_schema = p.schema();
    std::vector<std::string> pk;
    if (p.has("primary_key"))
      for (const auto& k : p.raw("primary_key")) pk.push_back(k.get<std::string>());
    // The formats write the table's declared types (nullability: avro encodes it).
    SchemaPtr declared = c.input_schema;
    if (p.has("message_types")) {
      std::vector<RowField> fields = c.input_schema->fields();
      const auto& types = p.raw("message_types");
      if (!types.is_array() || types.size() != fields.size())
        p.fail("param 'message_types' must hold one type per column, got " + types.dump());
      for (std::size_t i = 0; i < fields.size(); ++i) fields[i].type = parse_logical_type(types[i].get<std::string>());
      declared = make_schema(std::move(fields));
    }
    // Metadata columns are written as the record's timestamp / headers, not in a format:
    // the formats see the other columns (their indices mapped back to the input's).
    std::vector<std::size_t> physical_at;  // physical column -> input column
    {
      std::vector<bool> is_metadata(declared->size(), false);
      if (p.has("metadata"))
        for (const auto& m : p.raw("metadata")) {
          const std::string key = m.at("key").get<std::string>(), name = m.at("name").get<std::string>();
          auto idx = declared->index_of(name);
          if (!idx) p.fail("param 'metadata': `" + name + "` is not an input column");
          is_metadata[*idx] = true;
          if (key == "timestamp") c.timestamp_column = *idx;
          else if (key == "headers") c.headers_column = *idx;
          else p.fail("the kafka sink cannot write metadata '" + key + "' (it writes: headers, timestamp)");
        }
      std::vector<RowField> fields;
      for (std::size_t i = 0; i < declared->size(); ++i)
        if (!is_metadata[i]) {
          physical_at.push_back(i);
          fields.push_back(declared->field(i));
        }
      declared = make_schema(std::move(fields));
    }
    c.formats = read_formats(p, *declared, pk, as_upsert);
    for (auto& i : c.formats.key_columns) i = physical_at[i];
    for (auto& i : c.formats.value_columns) i = physical_at[i];
    std::string guarantee = p.option_or("sink.delivery-guarantee", p.option_or("delivery_guarantee", "at-least-once"));
    std::replace(guarantee.begin(), guarantee.end(), '_', '-');
    if (guarantee == "none") c.writer.delivery = KafkaSinkConfig::Delivery::kNone;
    else if (guarantee == "at-least-once") c.writer.delivery = KafkaSinkConfig::Delivery::kAtLeastOnce;
    else if (guarantee == "exactly-once") c.writer.delivery = KafkaSinkConfig::Delivery::kExactlyOnce;
    else p.fail("option 'sink.delivery-guarantee' must be none, at-least-once or exactly-once, got '" + guarantee + "'");
    c.writer.transactional_id_prefix = p.option_or("sink.transactional-id-prefix", "");
    // The seed's 'delivery_guarantee' needs no prefix: the table's name is one.
    if (c.writer.transactional_id_prefix.empty() && p.option("delivery_guarantee")) c.writer.transactional_id_prefix = "clink-" + table;
    if (c.writer.delivery == KafkaSinkConfig::Delivery::kExactlyOnce && c.writer.transactional_id_prefix.empty())
      p.fail("'sink.transactional-id-prefix' must be specified when using DeliveryGuarantee.EXACTLY_ONCE.");
    std::string partitioner = p.option_or("sink.partitioner", "default");
    if (partitioner == "default") c.writer.partitioner = KafkaSinkConfig::Partitioner::kDefault;
    else if (partitioner == "fixed") c.writer.partitioner = KafkaSinkConfig::Partitioner::kFixed;
    else if (partitioner == "round-robin") c.writer.partitioner = KafkaSinkConfig::Partitioner::kRoundRobin;
    else p.fail("option 'sink.partitioner' must be default, fixed or round-robin, got '" + partitioner + "'");
    if (as_upsert) {
      c.buffer_flush_max_rows = p.int_option("sink.buffer-flush.max-rows", 0, 0, INT32_MAX);
      if (auto interval = p.option("sink.buffer-flush.interval")) {
        auto ms = parse_duration_ms(*interval);
        if (!ms || *ms < 0) p.fail("option 'sink.buffer-flush.interval' is not a duration: '" + *interval + "'");
        c.buffer_flush_interval_ms = *ms;
      }
      if ((c.buffer_flush_max_rows > 0) != (c.buffer_flush_interval_ms > 0))
        p.fail("'sink.buffer-flush.max-rows' and 'sink.buffer-flush.interval' must be set to be greater than zero "
               "together to enable sink buffer flushing.");
    }
    make_record_encoder(c.formats.value_format, c.formats.value_fields, c.formats.value_options);
    if (!c.formats.key_format.empty()) make_record_encoder(c.formats.key_format, c.formats.key_fields, c.formats.key_options);
    std::shared_ptr<const TransactionalSink<ColumnBatch>> sink = std::make_shared<KafkaSqlSink>(std::move(c));
    return [sink] { return std::make_unique<TwoPhaseCommitSinkOperator<ColumnBatch>>(sink); };
  };
}

}  // namespace

void register_kafka_connectors(OperatorRegistry& r) {
  for (bool upsert : {false, true}) {
    std::string name = upsert ? "upsert_kafka" : "kafka";
    r.add(OperatorFactoryInfo{
        .name = "sql_" + name + "_source",
        .description = upsert ? "SQL table source reading a compacted Kafka topic as upserts by the PRIMARY KEY "
                                "(a tombstone deletes); Flink's upsert-kafka options"
                              : "SQL table source reading Kafka topics (one split per partition); Flink's kafka "
                                "options; params: schema, metadata, dead_letter",
        .num_inputs = 0,
        .out_type = sql_row,
        .make = [upsert](const OperatorSpecContext& ctx) { return kafka_source(ctx, upsert); },
        .side_outputs = {{kDeadLetterTag, kSqlRowType}}});
    r.add(OperatorFactoryInfo{.name = "sql_" + name + "_sink",
                              .description = upsert ? "SQL table sink writing upserts and tombstones keyed by the "
                                                      "PRIMARY KEY to a Kafka topic"
                                                    : "SQL table sink writing a Kafka topic; sink.delivery-guarantee "
                                                      "none, at-least-once or exactly-once (Kafka transactions)",
                              .num_inputs = 1,
                              .out_type = sql_row,
                              .make = kafka_sink(upsert)});
  }
}

}  // namespace clink::sql
