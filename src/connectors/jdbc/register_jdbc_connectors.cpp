// The jdbc SQL connector's factories: Flink's table options read into the sink's
// configuration (jdbc_sink.hpp). The source and lookup factories join them here.
#include "clink/connectors/jdbc/register_jdbc_connectors.hpp"

#include <nlohmann/json.hpp>

#include "clink/connectors/jdbc/jdbc_lookup_source.hpp"
#include "clink/connectors/jdbc/jdbc_options.hpp"
#include "clink/connectors/jdbc/jdbc_sink.hpp"
#include "clink/core/duration.hpp"

namespace clink::sql {

namespace {

std::string sql_row(const OperatorSpecContext&) { return kSqlRowType; }

OperatorBuilder make_jdbc_sink(const OperatorSpecContext& ctx) {
  SqlConnectorParams p(ctx, "sql_jdbc_sink", {"schema", "input_schemas", "primary_key", "table"});
  check_jdbc_options(p);
  JdbcTableOptions table = read_jdbc_table_options(p);
  auto c = std::make_shared<JdbcSinkConfig>();
  c->connection = table.connection;
  c->table_name = table.table_name;
  c->table = p.has("table") ? p.raw("table").get<std::string>() : std::string(ctx.id);
  c->input_schema = p.schema();
  if (p.has("primary_key"))
    for (const auto& k : p.raw("primary_key")) {
      auto idx = c->input_schema->index_of(k.get<std::string>());
      if (!idx) p.fail("the PRIMARY KEY column `" + k.get<std::string>() + "` is not a column of the sink's input");
      c->key_columns.push_back(*idx);
    }
  c->buffer_flush_max_rows = p.int_option("sink.buffer-flush.max-rows", 100, 0, INT32_MAX);
  if (auto interval = p.option("sink.buffer-flush.interval")) {
    auto ms = parse_duration_ms(*interval);
    if (!ms || *ms < 0) p.fail("option 'sink.buffer-flush.interval' is not a duration: '" + *interval + "'");
    c->buffer_flush_interval_ms = *ms;
  }
  // Flink: no periodic flush when every row is flushed at once anyway.
  if (c->buffer_flush_max_rows == 1) c->buffer_flush_interval_ms = 0;
  if (auto retries = p.option("sink.max-retries"); retries && retries->starts_with("-"))
    p.fail("The value of 'sink.max-retries' option shouldn't be negative, but is " + *retries + ".");
  c->max_retries = static_cast<int>(p.int_option("sink.max-retries", 3, 0, 1000));
  std::shared_ptr<const JdbcSinkConfig> config = c;
  return [config] { return std::make_unique<JdbcSinkOperator>(config); };
}

}  // namespace

void register_jdbc_connectors(OperatorRegistry& r) {
  // Lookups (the jdbc row's lookup_factory): the sql_lookup_join op makes the source.
  LookupSourceRegistry::process().add("jdbc", make_jdbc_lookup_source);
  r.add(OperatorFactoryInfo{.name = "sql_jdbc_sink",
                            .description = "SQL table sink writing a PostgreSQL table (Flink's jdbc options): COPY "
                                           "in append mode, INSERT ... ON CONFLICT / DELETE by the PRIMARY KEY in "
                                           "upsert mode; flushed at every checkpoint",
                            .num_inputs = 1,
                            .out_type = sql_row,
                            .make = make_jdbc_sink});
}

}  // namespace clink::sql
