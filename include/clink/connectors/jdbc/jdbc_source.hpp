#pragma once
// Flink's `jdbc` table source for PostgreSQL: a bounded scan of a table (flink-connector-
// jdbc's JdbcRowDataInputFormat), over libpq.
//
// The query reads only the projected columns (projection pushdown) and carries the
// conjuncts of the filter above the scan that PostgreSQL evaluates exactly as clink does
// (filter pushdown, jdbc_filter_sql.hpp; the filter stays above the scan too, so a
// conjunct the database cannot take is simply not sent).
//
// Parallel reads (scan.partition.column / .num / .lower-bound / .upper-bound, all or
// none, as Flink): the range [lower, upper] is cut into `num` splits as Flink's
// JdbcNumericBetweenParametersProvider cuts it, each read by `WHERE column BETWEEN lo AND
// hi`; split i goes to subtask i mod parallelism. Without them the table is one split,
// read by subtask 0. Rows whose partition column is NULL or outside the bounds are not
// read (Flink's behaviour).
//
// Each split is read through a cursor, scan.fetch-size rows per round trip (0: 1000).
// A checkpoint records, per unfinished split, the rows already emitted; a restore reads
// the split again and skips them (OFFSET), so nothing is lost or repeated provided the
// table did not change in between. The order is made repeatable: ORDER BY the table's
// primary key when it has one, else the session reads heap order without synchronized or
// parallel scans.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "clink/connectors/jdbc/pg_connection.hpp"
#include "clink/connectors/sql/sql_source.hpp"

namespace clink::sql {

struct JdbcSourceConfig {
  PgConnectOptions connection;
  std::string table_name;  // the 'table-name' option as written
  SchemaPtr table_schema;  // the physical columns
  std::vector<std::size_t> projected;  // output columns: indices into table_schema
  std::string where;  // the pushed-down filter as PostgreSQL SQL over the table's columns; empty: none
  // scan.partition.*: the column (its quoted database name) and the bounds' splits.
  std::string partition_column;
  std::vector<std::pair<std::int64_t, std::int64_t>> partitions;  // [lo, hi] each; empty: one split
  std::int64_t fetch_size = 0;  // scan.fetch-size (0: 1000 per round trip)
};

// Flink's JdbcNumericBetweenParametersProvider: [lower, upper] in `num` ranges whose sizes
// differ by at most one (the larger first).
std::vector<std::pair<std::int64_t, std::int64_t>> jdbc_partition_ranges(std::int64_t lower, std::int64_t upper,
                                                                          std::int64_t num);

class JdbcSqlSource final : public SqlSource {
 public:
  explicit JdbcSqlSource(JdbcSourceConfig config);
  std::unique_ptr<SqlSourceReader> create_reader(int subtask, int parallelism) const override;
  const SchemaPtr& output_schema() const override { return output_schema_; }
  std::string factory_name() const override { return "sql_jdbc_source"; }
  const JdbcSourceConfig& config() const { return config_; }
  // The SELECT of split `split` (its BETWEEN, the pushed filter, the order) without the
  // ORDER BY's key, which the reader learns from the database: for tests and messages.
  std::string split_query(std::size_t split, const std::vector<std::string>& order_by, std::int64_t offset) const;
  std::size_t num_splits() const { return config_.partitions.empty() ? 1 : config_.partitions.size(); }

 private:
  JdbcSourceConfig config_;
  SchemaPtr output_schema_;
};

}  // namespace clink::sql
