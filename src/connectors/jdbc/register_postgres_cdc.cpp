// The `postgres-cdc` SQL connector's factory: the Flink CDC project's table options read
// into the source's configuration (sql_postgres_cdc_source.hpp).
#include "clink/connectors/jdbc/register_postgres_cdc.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "clink/connectors/jdbc/sql_postgres_cdc_source.hpp"
#include "clink/connectors/sql/sql_connector_params.hpp"
#include "clink/core/duration.hpp"
#include "clink/core/error.hpp"

namespace clink::sql {

namespace {

std::string sql_row(const OperatorSpecContext&) { return kSqlRowType; }

const std::vector<std::string>& option_keys() {
  static const std::vector<std::string> keys = {
      "hostname", "port", "username", "password", "database-name", "schema-name", "table-name", "slot.name",
      "decoding.plugin.name", "changelog-mode", "scan.startup.mode", "scan.snapshot.fetch.size",
      "scan.lsn-commit.checkpoints-num-delay", "heartbeat.interval.ms", "heartbeat.interval", "connect.timeout",
      "mode",
      // Flink CDC's incremental snapshot framework: accepted, without effect here (one
      // reader takes the snapshot, as Flink CDC's legacy source).
      "scan.incremental.snapshot.enabled", "scan.incremental.snapshot.chunk.size",
      "scan.incremental.snapshot.chunk.key-column", "scan.incremental.close-idle-reader.enabled",
      "scan.incremental.snapshot.backfill.skip", "scan.incremental.snapshot.unbounded-chunk-first.enabled",
      "scan.newly-added-table.enabled", "chunk-meta.group.size", "split-key.even-distribution.factor.upper-bound",
      "split-key.even-distribution.factor.lower-bound", "connect.max-retries", "connection.pool.size"};
  return keys;
}

std::int64_t duration_option(const SqlConnectorParams& p, const std::string& key, std::int64_t def) {
  auto v = p.option(key);
  if (!v) return def;
  auto ms = parse_duration_ms(*v);
  if (!ms || *ms <= 0) p.fail("option '" + key + "' is not a positive duration: '" + *v + "'");
  return *ms;
}

OperatorBuilder postgres_cdc_source(const OperatorSpecContext& ctx) {
  SqlConnectorParams p(ctx, "sql_postgres_cdc_source", {"schema", "primary_key"});
  p.check_options(option_keys(), [](const std::string& k) { return k.starts_with("debezium."); });
  auto required = [&](const char* key) {
    auto v = p.option(key);
    if (!v) p.fail(std::string("missing required option '") + key + "'");
    return *v;
  };
  PostgresCdcConfig c;
  const std::string host = required("hostname");
  const auto port = p.int_option("port", 5432, 1, 65535);
  const std::string database = required("database-name");
  c.connect.url = fmt::format("jdbc:postgresql://{}:{}/{}", host, port, database);
  c.connect.username = required("username");
  c.connect.password = required("password");
  c.connect.application_name = "clink postgres-cdc";
  c.connect.connect_timeout_s = static_cast<int>((duration_option(p, "connect.timeout", 30000) + 999) / 1000);
  c.schema_pattern = required("schema-name");
  c.table_pattern = required("table-name");
  c.slot_name = required("slot.name");
  if (c.slot_name.empty() || c.slot_name.size() > 63 ||
      c.slot_name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
    p.fail("option 'slot.name' = '" + c.slot_name +
           "': a replication slot name has lower-case letters, digits and underscores only (at most 63)");
  c.publication = p.option_or("debezium.publication.name", "dbz_publication");
  // decoderbufs (Flink CDC's default) and wal2json are server plugins Debian's
  // PostgreSQL does not ship; pgoutput is built in, and it is what clink decodes.
  const std::string plugin = p.option_or("decoding.plugin.name", "pgoutput");
  if (plugin != "pgoutput")
    p.fail("option 'decoding.plugin.name' = '" + plugin +
           "': postgres-cdc decodes only 'pgoutput' (PostgreSQL's built-in logical decoding plugin), not decoderbufs "
           "or wal2json");
  const std::string startup = p.option_or("scan.startup.mode", "initial");
  if (startup == "initial") c.startup = PostgresCdcConfig::Startup::kInitial;
  else if (startup == "latest-offset") c.startup = PostgresCdcConfig::Startup::kLatestOffset;
  else
    p.fail("Invalid value for option 'scan.startup.mode'. Supported values are [initial, latest-offset], but was: " +
           startup);
  // The seed's 'mode': cdc (the changelog, Flink CDC's 'all') or upsert.
  std::string mode = p.option_or("changelog-mode", "all");
  if (auto seed = p.option("mode")) {
    if (*seed == "cdc") mode = p.option_or("changelog-mode", "all");
    else if (*seed == "upsert") mode = "upsert";
    else p.fail("option 'mode' = '" + *seed + "': a postgres-cdc table is a changelog: 'cdc' or 'upsert'");
  }
  if (mode != "all" && mode != "upsert")
    p.fail("option 'changelog-mode' must be all or upsert, got '" + mode + "'");
  c.upsert = mode == "upsert";
  c.fetch_size = static_cast<int>(p.int_option("scan.snapshot.fetch.size", 1024, 1, INT32_MAX));
  c.lsn_commit_delay = static_cast<int>(p.int_option("scan.lsn-commit.checkpoints-num-delay", 3, 0, 1000000));
  c.status_interval_ms = duration_option(p, "heartbeat.interval.ms", duration_option(p, "heartbeat.interval", 10000));
  c.output_schema = p.schema();
  if (p.has("primary_key"))
    for (const auto& k : p.raw("primary_key")) c.primary_key.push_back(k.get<std::string>());
  if (c.upsert && c.primary_key.empty()) p.fail("Primary key must be present when upsert mode is selected.");
  c.what = fmt::format("postgres-cdc source '{}' ({}.{})", ctx.id, c.schema_pattern, c.table_pattern);
  std::shared_ptr<const SqlSource> source = std::make_shared<PostgresCdcSqlSource>(std::move(c));
  return [source] { return std::make_unique<SqlSourceOperator>(source); };
}

}  // namespace

void register_postgres_cdc_connector(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{.name = "sql_postgres_cdc_source",
                            .description = "SQL table source reading a PostgreSQL table's snapshot, then its changes "
                                           "(logical replication, pgoutput) as a changelog; Flink CDC's postgres-cdc "
                                           "options; parallelism 1 (one replication slot)",
                            .num_inputs = 0,
                            .out_type = sql_row,
                            .make = postgres_cdc_source});
}

}  // namespace clink::sql
