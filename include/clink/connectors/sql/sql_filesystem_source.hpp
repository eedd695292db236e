#pragma once
// Flink's `filesystem` table source for the `json` and `csv` formats: one file or every
// file under a directory (sorted, names starting with '.' or '_' skipped, as the typed
// file source), one split per file, each checkpointed as the lines consumed of it.
// Lines are decoded straight into the batch's columns; only the projected fields are
// decoded (projection pushdown).
//
// With `source.monitor-interval` the source is unbounded, as Flink's continuous file
// monitoring: it lists the path again at that interval and reads the files it has not
// seen, each file taken by one subtask (by a hash of its path). A file must appear whole
// (written elsewhere and renamed in, as the filesystem sink does; hidden names are not
// read). The files taken so far are union state, so a restore at any parallelism
// neither re-reads nor skips one; like Flink's enumerator state, that set grows with the
// number of files.
//
// A reader restored with several old readers' splits (a rescale) keeps each old reader's
// files a lane (FileSplits) and reads its lanes in turn, a poll each. With the table's
// WATERMARK the planner makes the source bound the assigner after it (param watermark,
// source_watermarks.hpp): each lane is a split, so the watermark waits for the slowest
// lane, and a lane read ahead makes no other lane's rows late (issue 16).
//
// A csv record may span lines (a quoted field holding line breaks); a poll never ends
// inside one, so a split's position ("<lines consumed> <path>") is always a record
// boundary and a restore resumes after the last whole record.
//
// A partitioned table (PARTITIONED BY) reads its partition columns from the files'
// `name=value` directories (filesystem_partitions.hpp), and skips the files of
// partitions a pushed-down partition predicate rejects.
//
// A record that does not decode: with the format's ignore-parse-errors it is skipped and
// counted (metric reason "ignored-parse-error"); else, when the planner wired the
// "dead-letter" side output (param dead_letter), it goes there with its reason, origin,
// position and text; else the job fails with "file <path> line <n>: <reason>" (csv:
// "file <path> line <n>, column <c>: <reason>", the line and byte column of the field
// or character at fault).
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "clink/connectors/sql/filesystem_partitions.hpp"
#include "clink/connectors/sql/sql_source.hpp"
#include "clink/formats/csv_row_format.hpp"
#include "clink/formats/json_row_format.hpp"

namespace clink::sql {

enum class RowFormat { kJson, kCsv };

struct FilesystemSourceConfig {
  std::string path;
  RowFormat format = RowFormat::kJson;
  SchemaPtr table_schema;            // the fields the files hold
  std::vector<std::size_t> projected;  // output columns: indices into table_schema
  JsonFormatOptions json;
  CsvFormatOptions csv;
  PartitionOptions partitions;  // keys empty: not partitioned
  // source.monitor-interval: 0 reads the files present at the start and ends (bounded);
  // > 0 lists the path again every so often for new files and never ends.
  std::int64_t monitor_interval_ms = 0;
  bool dead_letter_wired = false;
  std::size_t read_buffer_bytes = std::size_t{1} << 20;
};

class FilesystemSqlSource final : public SqlSource {
 public:
  explicit FilesystemSqlSource(FilesystemSourceConfig config);
  std::unique_ptr<SqlSourceReader> create_reader(int subtask, int parallelism) const override;
  const SchemaPtr& output_schema() const override { return output_schema_; }
  std::string factory_name() const override { return "sql_filesystem_source"; }
  const FilesystemSourceConfig& config() const { return config_; }

 private:
  FilesystemSourceConfig config_;
  SchemaPtr output_schema_;
};

}  // namespace clink::sql
