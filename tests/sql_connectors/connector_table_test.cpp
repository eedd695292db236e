// The SQL connector table's rows: their predicates, their hooks and their factories.
#include "clink/registry/builtin_registry.hpp"
#include "clink/sql/spec/connector_table.hpp"

#include <gtest/gtest.h>

#include "clink/connectors/sql/register_sql_connectors.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

const ConnectorDescriptor& row(const std::string& name) {
  const ConnectorDescriptor* d = find_sql_connector(name);
  if (!d) throw std::runtime_error("no row " + name);
  return *d;
}

TEST(ConnectorTable, EveryRowNamesRegisteredFactories) {
  const OperatorRegistry& registry = builtin_registry();
  std::vector<std::string> names;
  for (const auto& d : sql_connector_table()) {
    names.push_back(d.name);
    EXPECT_TRUE(d.is_source() || d.is_sink() || d.is_lookup()) << d.name;
    if (d.is_source()) {
      EXPECT_TRUE(registry.contains(d.source_factory)) << d.source_factory;
      EXPECT_EQ(registry.get(d.source_factory).num_inputs, 0) << d.source_factory;
    }
    if (d.is_sink()) {
      EXPECT_TRUE(registry.contains(d.sink_factory)) << d.sink_factory;
      EXPECT_EQ(registry.get(d.sink_factory).num_inputs, 1) << d.sink_factory;
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"filesystem", "filesystem-snapshot", "datagen", "nexmark", "kafka",
                                               "upsert-kafka", "jdbc", "postgres-cdc", "print", "blackhole", "lookup",
                                               "collect"}));
}

TEST(ConnectorTable, LookupByName) {
  EXPECT_EQ(find_sql_connector("filesystem")->source_factory, "sql_filesystem_source");
  EXPECT_EQ(find_sql_connector("filesystem")->sink_factory, "sql_filesystem_sink");
  EXPECT_EQ(find_sql_connector("kafka")->sink_factory, "sql_kafka_sink");
  EXPECT_EQ(find_sql_connector("upsert-kafka")->source_factory, "sql_upsert_kafka_source");
  EXPECT_EQ(find_sql_connector("jdbc")->sink_factory, "sql_jdbc_sink");
  EXPECT_EQ(find_sql_connector("mongodb"), nullptr);
  EXPECT_EQ(find_sql_connector(""), nullptr);
  EXPECT_EQ(find_sql_connector("Print"), nullptr);  // names are case-sensitive, as Flink's identifiers
  EXPECT_FALSE(row("print").is_source());
  EXPECT_FALSE(row("datagen").is_sink());
}

TEST(ConnectorTable, Boundedness) {
  const ConnectorOptions none;
  const ConnectorOptions monitored = {{"path", "/d"}, {"source.monitor-interval", "10 s"}};
  const ConnectorOptions rows = {{"number-of-rows", "100"}};
  EXPECT_TRUE(row("filesystem").bounded_for({{"path", "/d"}, {"format", "json"}}));
  EXPECT_FALSE(row("filesystem").bounded_for(monitored));
  EXPECT_TRUE(row("datagen").bounded_for(rows));
  EXPECT_FALSE(row("datagen").bounded_for(none));
  EXPECT_FALSE(row("datagen").bounded_for({{"rows-per-second", "5"}}));
  EXPECT_FALSE(row("nexmark").bounded_for({{"events.num", "1000"}}));
  for (const char* sink : {"print", "blackhole", "collect"}) {
    EXPECT_FALSE(row(sink).bounded_for(none)) << sink;
  }
  EXPECT_TRUE(sql_source_bounded("datagen", rows));
  EXPECT_FALSE(sql_source_bounded("print", rows));
  EXPECT_FALSE(sql_source_bounded("kafka", rows));
}

TEST(ConnectorTable, Pushdowns) {
  EXPECT_TRUE(row("filesystem").projection_pushdown);
  EXPECT_TRUE(row("nexmark").projection_pushdown);
  EXPECT_FALSE(row("datagen").projection_pushdown);
  EXPECT_TRUE(row("filesystem").partition_pushdown);
  EXPECT_FALSE(row("nexmark").partition_pushdown);
  EXPECT_TRUE(row("filesystem").dead_letters);
  EXPECT_FALSE(row("datagen").dead_letters);
  const ConnectorOptions json = {{"format", "json"}};
  const ConnectorOptions debezium = {{"value.format", "debezium-json"}};
  for (const auto& d : sql_connector_table()) {
    if (d.is_source() && d.name != "upsert-kafka" && d.name != "postgres-cdc") {
      EXPECT_EQ(d.source_changelog_for(json), ChangelogKind::kInsertOnly) << d.name;
    }
  }
  // A kafka table's format decides; upsert-kafka reads upserts.
  EXPECT_EQ(row("kafka").source_changelog_for(debezium), ChangelogKind::kRetract);
  EXPECT_EQ(row("upsert-kafka").source_changelog_for(json), ChangelogKind::kUpsert);
  // postgres-cdc: a retract changelog, or upserts with changelog-mode upsert (the seed's mode too);
  // one reader (one replication slot).
  EXPECT_EQ(row("postgres-cdc").source_changelog_for({}), ChangelogKind::kRetract);
  EXPECT_EQ(row("postgres-cdc").source_changelog_for({{"changelog-mode", "upsert"}}), ChangelogKind::kUpsert);
  EXPECT_EQ(row("postgres-cdc").source_changelog_for({{"mode", "upsert"}}), ChangelogKind::kUpsert);
  EXPECT_TRUE(row("postgres-cdc").single_reader);
  EXPECT_FALSE(row("kafka").single_reader);
  EXPECT_TRUE(row("kafka").metadata_type("offset"));
  EXPECT_EQ(*row("kafka").metadata_type("timestamp"), "TIMESTAMP_LTZ(3) NOT NULL");
  EXPECT_FALSE(row("filesystem").metadata_type("offset"));
}

TEST(ConnectorTable, MessagesListTheRows) {
  EXPECT_EQ(sql_source_names(), "datagen, filesystem, jdbc, kafka, nexmark, postgres-cdc, upsert-kafka");
  EXPECT_EQ(sql_sink_names(), "blackhole, collect, filesystem, filesystem-snapshot, jdbc, kafka, print, upsert-kafka");
  EXPECT_EQ(sql_overwrite_sinks_text(), "the filesystem sink");
  EXPECT_EQ(sql_bounded_sources_text(),
            "filesystem without 'source.monitor-interval', datagen with 'number-of-rows', kafka with "
            "'scan.bounded.mode', upsert-kafka with 'scan.bounded.mode', jdbc always");
}

TEST(ConnectorTable, SinkChangelogModes) {
  using K = ChangelogKind;
  // Insert-only input goes anywhere, as inserts.
  for (const char* sink : {"filesystem", "print", "blackhole", "collect"}) {
    EXPECT_EQ(sink_changelog_kind(row(sink), {}, K::kInsertOnly, true), K::kInsertOnly) << sink;
  }
  EXPECT_EQ(sink_changelog_kind(row("filesystem"), {}, K::kRetract, false), std::nullopt);
  EXPECT_EQ(sink_changelog_kind(row("filesystem"), {}, K::kRetract, true), std::nullopt);
  EXPECT_EQ(sink_changelog_kind(row("print"), {}, K::kRetract, true), K::kRetract);
  EXPECT_EQ(sink_changelog_kind(row("blackhole"), {}, K::kRetract, false), K::kRetract);
  EXPECT_EQ(sink_changelog_kind(row("collect"), {}, K::kRetract, true), K::kUpsert);
  EXPECT_EQ(sink_changelog_kind(row("collect"), {}, K::kRetract, false), K::kRetract);
  // upsert-kafka takes updates only by a key; kafka only in a changelog format.
  EXPECT_EQ(sink_changelog_kind(row("upsert-kafka"), {}, K::kRetract, true), K::kUpsert);
  EXPECT_EQ(sink_changelog_kind(row("upsert-kafka"), {}, K::kRetract, false), std::nullopt);
  EXPECT_EQ(sink_changelog_kind(row("kafka"), {{"format", "json"}}, K::kRetract, true), std::nullopt);
  EXPECT_EQ(sink_changelog_kind(row("kafka"), {{"format", "debezium-json"}}, K::kRetract, false), K::kRetract);
}

struct SinkCase {
  ConnectorOptions options;
  Schema input{std::vector<RowField>{{"k", LogicalType::bigint()}, {"day", LogicalType::string()}}};
  std::vector<std::string> partitions;
  std::vector<std::string> key;
  nlohmann::json params(const std::string& connector, ChangelogKind kind, bool overwrite = false) const {
    SinkParamsContext ctx{.table = "t", .options = options, .input = input, .partition_columns = partitions,
                          .primary_key = key, .overwrite = overwrite, .changelog = kind, .pos = {2, 1}};
    nlohmann::json p = {{"opt", "v"}};
    if (row(connector).sink_params) row(connector).sink_params(ctx, p);
    return p;
  }
};

TEST(ConnectorTable, SinkParams) {
  SinkCase c;
  c.partitions = {"day"};
  EXPECT_EQ(c.params("filesystem", ChangelogKind::kInsertOnly, true).dump(),
            R"({"opt":"v","overwrite":true,"partition_by":[1]})");
  EXPECT_EQ(c.params("print", ChangelogKind::kRetract).dump(), R"({"opt":"v"})");
  EXPECT_EQ(c.params("blackhole", ChangelogKind::kRetract).dump(), "{}");
  EXPECT_EQ(c.params("collect", ChangelogKind::kRetract).dump(),
            R"({"mode":"retract","name":"t","opt":"v","primary_key":[]})");
  c.key = {"k"};
  c.options = {{"name", "results"}};
  EXPECT_EQ(c.params("collect", ChangelogKind::kUpsert).dump(),
            R"({"mode":"upsert","name":"results","opt":"v","primary_key":[0]})");
  c.partitions = {"month"};
  try {
    c.params("filesystem", ChangelogKind::kInsertOnly);
    FAIL() << "no error";
  } catch (const TranslationError& e) {
    EXPECT_STREQ(e.what(), "line 2, column 1: INSERT INTO t: the partition column `month` is not a sink column");
  }
}

}  // namespace
}  // namespace clink::test
