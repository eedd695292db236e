// The sql_columns key selector routes the rows an edge carries: after a projecting source
// its key columns index the projection, not the table schema (found by the SQL test
// matrix: a GROUP BY over a projected filesystem table failed at parallelism 2 with "key
// group 32 is not in this subtask's range").
#include <gtest/gtest.h>

#include "clink/core/error.hpp"
#include "clink/sql/common/column_key.hpp"
#include "sql_ops_test_support.hpp"

namespace clink::test {
namespace {

SchemaPtr table_schema() {
  return sql::make_schema({{"id", LogicalType::int_type()}, {"product", LogicalType::string()}, {"qty", LogicalType::int_type()}});
}
SchemaPtr projected_schema() {
  return sql::make_schema({{"product", LogicalType::string()}, {"qty", LogicalType::int_type()}});
}

UpstreamSpec projecting_source() {
  return UpstreamSpec{0, "src", "sql_filesystem_source",
                      json{{"schema", schema_json(table_schema())}, {"projected", json::array({1, 2})}}, ""};
}

// Which of `targets` subtasks each row of `b` goes to.
std::vector<int> routes(const PartitionerFactory& f, const ColumnBatch& b, int targets) {
  std::vector<BatchPtr> out(static_cast<std::size_t>(targets));
  f(0, targets, kDefaultMaxParallelism)->partition(std::make_unique<ColumnBatch>(b), out);
  std::vector<std::pair<std::string, int>> by_row;
  for (int t = 0; t < targets; ++t) {
    if (!out[static_cast<std::size_t>(t)]) continue;
    const auto& part = sql::column_batch_cast(*out[static_cast<std::size_t>(t)]);
    for (std::size_t r = 0; r < part.size(); ++r) by_row.emplace_back(std::string(part.column(0).string_at(r)), t);
  }
  std::sort(by_row.begin(), by_row.end());
  std::vector<int> v;
  for (const auto& [row, t] : by_row) v.push_back(t);
  return v;
}

TEST(SqlColumnsKeySelector, KeyColumnsIndexAProjectingSourcesOutput) {
  const auto& registry = builtin_registry();
  auto projected = registry.resolve_key_selector("sql_columns:0", projecting_source()).partitioner;
  auto direct = sql::column_batch_hash_partitioner_factory(projected_schema(), {0});
  std::vector<Row> rows;
  for (const char* p : {"apple", "pear", "plum", "fig", "kiwi", "lime", "date", "sloe"})
    rows.push_back(Row{{Value(p), Value(std::int32_t{1})}});
  ColumnBatch b = batch(projected_schema(), rows);
  EXPECT_EQ(routes(projected, b, 4), routes(direct, b, 4));
}

TEST(SqlColumnsKeySelector, AKeyColumnBeyondTheProjectionIsAnError) {
  try {
    builtin_registry().resolve_key_selector("sql_columns:2", projecting_source());
    FAIL() << "expected an error";
  } catch (const ClinkError& e) {
    EXPECT_STREQ(e.what(), "key selector 'sql_columns:2': column 2 is out of range (the upstream schema has 2 columns)");
  }
}

}  // namespace
}  // namespace clink::test
