#pragma once
// Flink's `filesystem` table sink for the `json` and `csv` formats, exactly-once through
// the two-phase-commit machinery (TwoPhaseCommitSinkOperator, StagedFile): each
// transaction writes one part file "part-<subtask>-<n>.<json|csv>" per partition that
// received rows, staged under a hidden in-progress name, made durable at the
// checkpoint barrier and renamed into place when the checkpoint completes (the last
// one at end of input). A reader never sees uncommitted rows; after a failure the
// restored checkpoint's pre-committed files are committed again (idempotently) and
// the staging files of the failed attempt are removed.
//
// `partition_by` columns are written as Hive-style directories "col=value/" (in that
// order; NULL as Flink's default partition name "__DEFAULT_PARTITION__") and left out
// of the files, as Flink. `overwrite` (INSERT OVERWRITE, bounded jobs): at the first
// commit the files that were in the target when the job started are removed (only in
// the partitions written to, when partitioned: Flink's dynamic overwrite); needs
// parallelism 1, as it is Flink's single committer that does it.
//
// Part files also roll by the rolling policy and partitions are committed (a success file)
// by the partition-commit policy: see file_sink_policies.hpp.
//
// Insert-only: a -U, +U or -D row fails the job (the planner should have refused the
// query already).
#include <memory>
#include <string>
#include <vector>

#include "clink/api/two_phase_commit_sink.hpp"
#include "clink/connectors/sql/file_sink_policies.hpp"
#include "clink/connectors/sql/sql_filesystem_source.hpp"
#include "clink/connectors/sql/sql_transactional_batch.hpp"
#include "clink/sql/common/column_batch.hpp"

namespace clink::sql {

struct FilesystemSinkConfig {
  std::string path;  // a directory
  RowFormat format = RowFormat::kJson;
  SchemaPtr schema;  // the input rows
  std::vector<std::size_t> partition_by;  // column indices
  std::string default_partition_name = "__DEFAULT_PARTITION__";  // partition.default-name: NULL / empty values
  bool overwrite = false;
  RollingPolicy rolling;
  PartitionCommitPolicy commit;
  JsonFormatOptions json;
  CsvFormatOptions csv;
};

class FilesystemSqlSink final : public TransactionalSink<ColumnBatch> {
 public:
  explicit FilesystemSqlSink(FilesystemSinkConfig config);
  std::unique_ptr<TransactionalSinkWriter<ColumnBatch>> create_writer(int subtask, int parallelism) const override;
  std::string factory_name() const override { return "sql_filesystem_sink"; }
  const FilesystemSinkConfig& config() const { return config_; }
  // The schema of the rows in the files: the input without the partition columns.
  const SchemaPtr& file_schema() const { return file_schema_; }

 private:
  FilesystemSinkConfig config_;
  SchemaPtr file_schema_;
};

// Flink's partition path escaping (PartitionPathUtils.escapePathName): characters that
// are unsafe in a path become %XX.
std::string escape_partition_value(std::string_view value);

}  // namespace clink::sql
