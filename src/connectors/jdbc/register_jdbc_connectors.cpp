// The jdbc SQL connector's factories: Flink's table options read into the sink's
// configuration (jdbc_sink.hpp). The source and lookup factories join them here.
#include "clink/connectors/jdbc/register_jdbc_connectors.hpp"

#include <nlohmann/json.hpp>

#include "clink/connectors/jdbc/jdbc_lookup_source.hpp"
#include "clink/connectors/jdbc/jdbc_options.hpp"
#include "clink/connectors/jdbc/jdbc_sink.hpp"
#include "clink/connectors/jdbc/jdbc_source.hpp"
#include "clink/connectors/sql/bounded_sql_source.hpp"
#include "clink/core/duration.hpp"
#include "clink/sql/spec/expr_json.hpp"
#include "jdbc_filter_sql.hpp"

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

// The source: Flink's scan options read and checked as JdbcDynamicTableFactory does; the
// planner's projected columns and the filter above the scan (its conjuncts PostgreSQL
// evaluates as clink go into the query).
std::shared_ptr<const SqlSource> make_jdbc_source(const OperatorSpecContext& ctx) {
  SqlConnectorParams p(ctx, "sql_jdbc_source", {"schema", "projected", "filter", "session"});
  check_jdbc_options(p);
  JdbcTableOptions table = read_jdbc_table_options(p);
  JdbcSourceConfig c;
  c.connection = table.connection;
  c.table_name = table.table_name;
  c.table_schema = p.schema();
  c.projected = p.projected(c.table_schema->size());
  // scan.partition.*: all or none (Flink's checkAllOrNone), lower <= upper.
  const char* keys[] = {"scan.partition.column", "scan.partition.num", "scan.partition.lower-bound",
                        "scan.partition.upper-bound"};
  int given = 0;
  for (const char* k : keys) given += p.option(k) ? 1 : 0;
  if (given != 0 && given != 4)
    p.fail("Either all or none of the following options should be provided:\nscan.partition.column\n"
           "scan.partition.num\nscan.partition.lower-bound\nscan.partition.upper-bound");
  if (given == 4) {
    const std::string column = *p.option("scan.partition.column");
    auto idx = c.table_schema->index_of(column);
    if (!idx) p.fail("option 'scan.partition.column' = '" + column + "' is not a column of the table");
    if (!c.table_schema->type(*idx).is_integer())
      p.fail("option 'scan.partition.column' = '" + column + "' must be a column of an integer type, but it is " +
             c.table_schema->type(*idx).to_string());
    const std::int64_t lower = p.int_option("scan.partition.lower-bound", 0, INT64_MIN, INT64_MAX);
    const std::int64_t upper = p.int_option("scan.partition.upper-bound", 0, INT64_MIN, INT64_MAX);
    if (lower > upper)
      p.fail("'scan.partition.lower-bound'='" + std::to_string(lower) +
             "' must not be larger than 'scan.partition.upper-bound'='" + std::to_string(upper) + "'.");
    const std::int64_t num = p.int_option("scan.partition.num", 1, 1, INT32_MAX);
    c.partition_column = quote_pg_column_name(column);
    c.partitions = jdbc_partition_ranges(lower, upper, num);
  }
  c.fetch_size = p.int_option("scan.fetch-size", 0, 0, INT32_MAX);
  if (p.has("filter") && !p.raw("filter").is_null()) {
    std::vector<RowField> out;
    std::vector<std::string> columns;
    for (std::size_t i : c.projected) {
      out.push_back(c.table_schema->field(i));
      columns.push_back(quote_pg_column_name(c.table_schema->name(i)));
    }
    ExprPtr filter;
    try {
      filter = expr_from_json(p.raw("filter"), Schema(std::move(out)));
    } catch (const std::exception& e) {
      p.fail(std::string("param 'filter': ") + e.what());
    }
    std::string where;
    for (const auto& conjunct : filter->kind == ExprKind::kAnd ? filter->args : std::vector<ExprPtr>{filter})
      if (auto sql = jdbc_filter_sql(*conjunct, columns)) where += (where.empty() ? "" : " AND ") + *sql;
    c.where = std::move(where);
  }
  try {
    return std::make_shared<JdbcSqlSource>(std::move(c));
  } catch (const ClinkError& e) {
    p.fail(e.what());
  }
}

}  // namespace

void register_jdbc_connectors(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{.name = "sql_jdbc_source",
                            .description = "SQL table source scanning a PostgreSQL table once (Flink's jdbc options): "
                                           "projected columns, the filter PostgreSQL can evaluate, partitioned "
                                           "parallel reads by scan.partition.*; checkpointed as rows read per split",
                            .num_inputs = 0,
                            .out_type = sql_row,
                            .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
                              std::shared_ptr<const SqlSource> s = make_jdbc_source(ctx);
                              return [s] { return std::make_unique<SqlSourceOperator>(s); };
                            }});
  register_sql_source_maker("sql_jdbc_source", make_jdbc_source);
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
