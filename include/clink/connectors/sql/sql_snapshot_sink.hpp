#pragma once
// The `filesystem-snapshot` table sink: the table's whole current content, kept netted in
// the sink (by the PRIMARY KEY when the input is an upsert stream, else as a multiset of
// rows that -U/-D retract), written as one JSON-lines file per partition
// (`<path>[/k=v/...]/part-<subtask>.json`) that is replaced atomically (written under a
// hidden name, renamed over the old one) when a checkpoint completes and at the end of
// the input. A reader of the directory sees one complete snapshot or the next, never a
// torn file. It is what a materialized table keeps its updating (keyed GROUP BY) result
// in, and what a FULL refresh writes its staging snapshot with
// (src/sql/handler/materialized_table.cpp); the files read back with the filesystem
// source (the connector's source is the filesystem one).
//
// Exactly-once: the netted table is operator state; each checkpoint's committable is the
// files' complete content, so committing it again after a restore writes the same bytes.
#include <memory>
#include <string>
#include <vector>

#include "clink/api/two_phase_commit_sink.hpp"
#include "clink/connectors/sql/sql_transactional_batch.hpp"
#include "clink/formats/json_row_format.hpp"
#include "clink/runtime/operator_registry.hpp"
#include "clink/sql/common/column_batch.hpp"

namespace clink::sql {

struct SnapshotSinkConfig {
  std::string path;  // a directory
  SchemaPtr schema;  // the input rows
  std::vector<std::size_t> partition_by;  // column indices (Hive-style directories)
  std::vector<std::size_t> primary_key;   // upsert by these columns; empty: retract (multiset)
  std::string default_partition_name = "__DEFAULT_PARTITION__";
  JsonFormatOptions json;
};

class SnapshotSqlSink final : public TransactionalSink<ColumnBatch> {
 public:
  explicit SnapshotSqlSink(SnapshotSinkConfig config);
  std::unique_ptr<TransactionalSinkWriter<ColumnBatch>> create_writer(int subtask, int parallelism) const override;
  std::string factory_name() const override { return "sql_snapshot_sink"; }

 private:
  SnapshotSinkConfig config_;
  SchemaPtr file_schema_;
};

// Registers `sql_snapshot_sink` (called from register_sql_connectors).
void register_snapshot_sink(OperatorRegistry& registry);

}  // namespace clink::sql
