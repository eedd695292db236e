#pragma once
// Partitioned filesystem tables read back as Flink's FileSystemTableSource reads them
// (PartitionPathUtils): a table PARTITIONED BY (k1, ..., kN) keeps its rows in files
// below Hive-style directories `k1=v1/.../kN=vN/` of its path, the partition columns left
// out of the files. A file's partition values come from the `name=value` directories on
// its path below the table's path (the deepest one of a name wins; values %XX-unescaped),
// typed as the column (as CAST(value AS type) reads text); the default partition name
// (`partition.default-name`, `__DEFAULT_PARTITION__`) is NULL, as is a key without a
// directory. Files less than N directories deep are not in a partition and not read.
//
// Partition pruning: a predicate over the partition columns only (pushed into the scan by
// the planner, as Flink's PushPartitionIntoTableSourceScanRule) is evaluated once per
// file over its partition values; files whose partition it rejects are not read at all.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/expression/expr.hpp"
#include "clink/sql/function/function_registry.hpp"

namespace clink::sql {

inline constexpr const char* kDefaultPartitionName = "__DEFAULT_PARTITION__";

struct PartitionOptions {
  // The partition columns: indices into the table schema, in PARTITIONED BY order.
  std::vector<std::size_t> keys;
  std::string default_name = kDefaultPartitionName;  // partition.default-name
  // Over the source's output schema, referencing partition columns only; null: every file.
  ExprPtr filter;
  SessionContext session;
};

// "%3A" -> ":" (PartitionPathUtils.unescapePathName; a '%' not followed by two hex digits
// stays as it is).
std::string unescape_partition_value(std::string_view text);

// The partition values of files, one row per file in the source's output schema (the
// non-partition columns NULL): what the reader appends to each row it decodes from a file,
// and what the pruning predicate is evaluated over.
class FilePartitions {
 public:
  // `output`: the source's output schema; `columns`: (output column, partition column
  // name) of every projected partition column; `depth`: the number of partition keys.
  FilePartitions(std::string base, SchemaPtr output, std::vector<std::pair<std::size_t, std::string>> columns,
                 std::size_t depth, std::string default_name);

  // The files of `files` (below the base) that are in a partition: at least `depth`
  // directories below the base.
  std::vector<std::string> in_partitions(const std::vector<std::string>& files) const;

  // Replaces the rows by one per file, in order. Throws ClinkError naming the file, the
  // column and the value when a value is not of its column's type.
  void assign(const std::vector<std::string>& files);
  // The files of the last assign() whose row `filter` keeps, in order.
  std::vector<std::string> prune(const std::vector<std::string>& files, const ExprPtr& filter,
                                 const SessionContext& session);

  // Appends `n` copies of file `f`'s partition values to their output columns.
  void fill(std::size_t f, std::size_t n, std::vector<Column>& columns);

  bool empty() const { return columns_.empty(); }

 private:
  void append_values(const std::string& file);

  std::string base_;
  SchemaPtr output_;
  std::vector<std::pair<std::size_t, std::string>> columns_;
  std::size_t depth_;
  std::string default_name_;
  ColumnBatch rows_;
  std::vector<std::uint32_t> idx_;
  std::vector<std::string_view> dirs_;
  std::string value_, reason_;
};

}  // namespace clink::sql
