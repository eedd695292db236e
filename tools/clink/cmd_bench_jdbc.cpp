// clink bench jdbc: the jdbc sink's throughput into a PostgreSQL table against the
// physical limit, a plain COPY of the same rows (issue 18's benchmark). Rows are
// (id BIGINT, k BIGINT, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3)). Cases, each
// into a fresh table, rows/s of wall time (the server's work included):
//   copy           COPY of the rows' text, 10,000 rows a statement (no clink in between)
//   copy-pk        the same into a table with the PRIMARY KEY the upsert cases have
//   append-copy    the sink in append mode writing COPY (its default), the given max-rows
//   append-insert  the same with multi-row INSERTs instead of COPY
//   upsert-new     the sink in upsert mode, every row a new key (INSERT ... ON CONFLICT)
//   upsert-update  upsert mode, keys id mod 1000: each flush updates existing rows
//   sql-upsert     a SQL job, datagen -> GROUP BY id -> jdbc upsert table with the
//                  default options (max-rows 100), checkpoints every second
// The sink cases run the sink operator itself on batches of 1024 rows.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include <fmt/format.h>
#include <unistd.h>

#include "clink/connectors/jdbc/jdbc_sink.hpp"
#include "clink/connectors/jdbc/pg_connection.hpp"
#include "clink/connectors/jdbc/pg_values.hpp"
#include "clink/runtime/key_group.hpp"
#include "clink/sql/parser/parser.hpp"
#include "commands.hpp"
#include "sql_session.hpp"

namespace clink::cli {
namespace {

using namespace clink::sql;

struct JdbcBenchOptions {
  std::string url;
  std::int64_t rows = 1'000'000;
  std::int64_t max_rows = 5000;
};

class NullOutput final : public Output {
 public:
  void emit(BatchPtr) override {}
  void emit_watermark(Watermark) override {}
  void emit_side(const std::string&, BatchPtr) override {}
};

SchemaPtr bench_schema() {
  return make_schema({{"id", LogicalType::bigint().not_null()},
                      {"k", LogicalType::bigint().not_null()},
                      {"name", LogicalType::string()},
                      {"price", LogicalType::decimal(10, 2)},
                      {"ts", LogicalType::timestamp(3)}});
}

// Rows [from, from + n): id, k = id mod `keys` (or id when keys is 0), name, price, ts.
ColumnBatch make_rows(const SchemaPtr& schema, std::int64_t from, std::size_t n, std::int64_t keys) {
  ColumnBatch b(schema, n);
  std::string name;
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t id = from + static_cast<std::int64_t>(i);
    b.column(0).append<std::int64_t>(id);
    b.column(1).append<std::int64_t>(keys > 0 ? id % keys : id);
    name = fmt::format("name-{}", id % 9973);
    b.column(2).append_string(name);
    b.column(3).append<Int128>(static_cast<Int128>(id % 100000));
    b.column(4).append<std::int64_t>(1700000000000000LL + id * 1000);
  }
  b.commit_rows(n, keys > 0 && from >= keys ? RowKind::kUpdateAfter : RowKind::kInsert);
  return b;
}

void recreate(PgConnection& c, const std::string& table, bool key) {
  c.exec(fmt::format("DROP TABLE IF EXISTS {0}; CREATE UNLOGGED TABLE {0} (id bigint, k bigint{1}, name text, "
                     "price numeric(10, 2), ts timestamp(3))",
                     table, key ? " PRIMARY KEY" : ""));
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void report(const char* what, double wall, std::int64_t rows, double copy_rate) {
  double rate = static_cast<double>(rows) / wall;
  std::printf("%-14s %10.3f %14.0f %13.0f%%\n", what, wall, rate, copy_rate > 0 ? 100.0 * rate / copy_rate : 100.0);
  std::fflush(stdout);
}

double bench_copy(PgConnection& c, const JdbcBenchOptions& o, bool key) {
  recreate(c, "bench_copy", key);
  SchemaPtr schema = bench_schema();
  std::string data;
  auto t0 = std::chrono::steady_clock::now();
  for (std::int64_t from = 0; from < o.rows; from += 10000) {
    std::size_t n = static_cast<std::size_t>(std::min<std::int64_t>(10000, o.rows - from));
    ColumnBatch b = make_rows(schema, from, n, 0);
    data.clear();
    for (std::size_t r = 0; r < n; ++r) {
      for (std::size_t col = 0; col < b.num_columns(); ++col) {
        if (col) data += '\t';
        append_pg_copy_field(b.column(col), r, data);
      }
      data += '\n';
    }
    c.copy_in("COPY bench_copy (id, k, name, price, ts) FROM STDIN", data);
  }
  return seconds_since(t0);
}

double bench_sink(PgConnection& c, const JdbcBenchOptions& o, const std::string& table, bool upsert,
                  JdbcSinkConfig::AppendMethod method, std::int64_t keys) {
  recreate(c, table, upsert);
  auto config = std::make_shared<JdbcSinkConfig>();
  config->connection.url = o.url;
  config->table_name = table;
  config->table = table;
  config->input_schema = bench_schema();
  if (upsert) config->key_columns = {1};
  config->buffer_flush_max_rows = o.max_rows;
  config->buffer_flush_interval_ms = 0;
  config->append_method = method;
  // Batches made first: the figure is the sink's, not the generator's.
  std::vector<ColumnBatch> batches;
  for (std::int64_t from = 0; from < o.rows; from += 1024)
    batches.push_back(make_rows(config->input_schema, from, static_cast<std::size_t>(std::min<std::int64_t>(1024, o.rows - from)), keys));
  NullOutput out;
  RuntimeContext ctx("sink", "sink", 0, 1, kDefaultMaxParallelism, &out, std::make_shared<OperatorMetrics>(),
                     SystemClock::instance());
  JdbcSinkOperator sink(config);
  sink.open(ctx);
  auto t0 = std::chrono::steady_clock::now();
  for (auto& b : batches) sink.process_batch(0, std::make_unique<ColumnBatch>(std::move(b)));
  sink.finish();
  double wall = seconds_since(t0);
  sink.close();
  return wall;
}

double bench_sql_upsert(PgConnection& c, const JdbcBenchOptions& o) {
  c.exec("DROP TABLE IF EXISTS bench_sql; CREATE UNLOGGED TABLE bench_sql (id bigint PRIMARY KEY, c bigint, s bigint)");
  std::string sql = fmt::format(
      "CREATE TABLE nums (id BIGINT NOT NULL) WITH ('connector' = 'datagen', 'number-of-rows' = '{0}', "
      "'rows-per-second' = '1000000000', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', "
      "'fields.id.end' = '{0}');\n"
      "CREATE TABLE out (id BIGINT, c BIGINT, s BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'jdbc', "
      "'url' = '{1}', 'table-name' = 'bench_sql');\n"
      "INSERT INTO out SELECT id, COUNT(*), SUM(id) FROM nums GROUP BY id;\n",
      o.rows, o.url);
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("clink-bench-jdbc-{}", ::getpid());
  SqlJobSettings settings;
  settings.parallelism = 1;
  settings.execution.checkpoints.interval_ms = 1000;
  settings.execution.checkpoints.directory = dir;
  SqlSession session(settings, "", stdout);
  auto script = sql::parse(sql);
  auto t0 = std::chrono::steady_clock::now();
  for (const auto& st : script.statements) session.execute(st);
  double wall = seconds_since(t0);
  std::filesystem::remove_all(dir);
  return wall;
}

int bench_jdbc(JdbcBenchOptions o) {
  try {
    if (o.url.empty()) {
      const char* env = std::getenv("CLINK_POSTGRES_URL");
      o.url = env && *env ? env : "jdbc:postgresql://127.0.0.1:15432/postgres?user=postgres";
    }
    PgConnection c(PgConnectOptions{.url = o.url});
    std::printf("jdbc: %lld rows into PostgreSQL %d at %s (unlogged tables), sink max-rows %lld\n\n",
                static_cast<long long>(o.rows), c.server_version(), c.describe().c_str(),
                static_cast<long long>(o.max_rows));
    std::printf("%-14s %10s %14s %14s\n", "case", "wall s", "rows/s", "of copy");
    double copy = static_cast<double>(o.rows) / bench_copy(c, o, false);
    report("copy", static_cast<double>(o.rows) / copy, o.rows, copy);
    report("copy-pk", bench_copy(c, o, true), o.rows, copy);
    using M = JdbcSinkConfig::AppendMethod;
    report("append-copy", bench_sink(c, o, "bench_append_copy", false, M::kCopy, 0), o.rows, copy);
    report("append-insert", bench_sink(c, o, "bench_append_insert", false, M::kInsert, 0), o.rows, copy);
    report("upsert-new", bench_sink(c, o, "bench_upsert_new", true, M::kCopy, 0), o.rows, copy);
    report("upsert-update", bench_sink(c, o, "bench_upsert_update", true, M::kCopy, 1000), o.rows, copy);
    report("sql-upsert", bench_sql_upsert(c, o), o.rows, copy);
    c.exec("DROP TABLE IF EXISTS bench_copy, bench_append_copy, bench_append_insert, bench_upsert_new, "
           "bench_upsert_update, bench_sql");
    return kExitOk;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitError;
  }
}

}  // namespace

void add_bench_jdbc_command(CLI::App& bench, int& exit_code) {
  auto opts = std::make_shared<JdbcBenchOptions>();
  auto* jdbc = bench.add_subcommand("jdbc", "Write rows into PostgreSQL with the jdbc sink (append, upsert) and "
                                            "with a plain COPY (rows/s)");
  jdbc->add_option("--url", opts->url,
                   "The server (default: $CLINK_POSTGRES_URL or jdbc:postgresql://127.0.0.1:15432/postgres?user=postgres)");
  jdbc->add_option("-n,--rows", opts->rows, "Rows to write per case")->default_val(1'000'000)->check(CLI::Range(1LL, 1LL << 40));
  jdbc->add_option("--max-rows", opts->max_rows, "The sink's sink.buffer-flush.max-rows in the operator cases")
      ->default_val(5000)
      ->check(CLI::Range(1LL, 1LL << 30));
  jdbc->callback([opts, &exit_code] { exit_code = bench_jdbc(*opts); });
}

}  // namespace clink::cli
