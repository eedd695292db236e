// Partition discovery of filesystem tables (Flink's PartitionPathUtils): which files are in
// partitions, their typed values (default partition and missing keys NULL, %XX unescaped),
// errors naming file, column and directory, and pruning by a predicate.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "clink/connectors/sql/filesystem_partitions.hpp"
#include "clink/core/error.hpp"
#include "clink/sql/common/time_zone.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

using ::testing::ElementsAre;

SchemaPtr output() {
  return make_schema({{"hr", LogicalType::int_type()}, {"v", LogicalType::bigint()}, {"dt", LogicalType::date()},
                      {"s", LogicalType::string()}});
}

FilePartitions partitions() {
  return FilePartitions("/t/", output(), {{0, "hr"}, {2, "dt"}, {3, "s"}}, 3, "__DEFAULT_PARTITION__");
}

std::vector<std::string> rows_of(FilePartitions& p, std::size_t files) {
  ColumnBatch b(output());
  for (std::size_t f = 0; f < files; ++f) {
    b.column(1).append_null();
    p.fill(f, 1, b.columns());
    b.commit_rows(1);
  }
  return format_rows(b, *TimeZone::utc());
}

TEST(FilePartitions, ValuesFromTheDirectoriesTyped) {
  auto p = partitions();
  std::vector<std::string> files = {"/t/dt=2024-01-01/hr=10/s=a%3Ab/part-0-0.csv",
                                    "/t/dt=__DEFAULT_PARTITION__/hr=7/s=/x/y.csv",
                                    "/t/s=1/hr=3/other=z/f.csv",
                                    "/t/dt=2024-01-01/hr=10/f.csv",
                                    "/t/f.csv"};
  EXPECT_THAT(p.in_partitions(files), ElementsAre(files[0], files[1], files[2]));
  p.assign(p.in_partitions(files));
  // s= is not a name=value directory (Flink's ([^/]+)=([^/]+)): s is NULL there.
  EXPECT_THAT(rows_of(p, 3), ElementsAre("+I[10, null, 2024-01-01, a:b]", "+I[7, null, null, null]",
                                         "+I[3, null, null, 1]"));
}

TEST(FilePartitions, AValueNotOfTheTypeNamesFileColumnAndDirectory) {
  auto p = partitions();
  try {
    p.assign({"/t/dt=2024-01-01/hr=noon/s=a/f.csv"});
    FAIL();
  } catch (const ClinkError& e) {
    EXPECT_STREQ(e.what(),
                 "file /t/dt=2024-01-01/hr=noon/s=a/f.csv: partition column `hr` of directory 'hr=noon': 'noon' is not "
                 "a valid INT");
  }
}

TEST(FilePartitions, PruneKeepsTheFilesThePredicateAccepts) {
  auto p = partitions();
  std::vector<std::string> files = {"/t/dt=2024-01-01/hr=10/s=a/f", "/t/dt=2024-01-01/hr=11/s=a/f",
                                    "/t/dt=__DEFAULT_PARTITION__/hr=12/s=b/f"};
  p.assign(files);
  const auto& reg = FunctionRegistry::builtins();
  auto hr = expr::column(0, LogicalType::int_type(), "hr");
  auto dt = expr::column(2, LogicalType::date(), "dt");
  auto pred = expr::call(reg, "OR", {expr::call(reg, ">", {hr, expr::literal(Value(10), LogicalType::int_type())}),
                                     expr::call(reg, "IS NULL", {dt})});
  EXPECT_THAT(p.prune(files, pred, {}), ElementsAre(files[1], files[2]));
  EXPECT_THAT(unescape_partition_value("a%2Fb%zz%4"), "a/b%zz%4");
}

}  // namespace
}  // namespace clink::test
