#pragma once
// The SQL sinks that take every row kind: print (Flink's `+I[1, abc]` lines), blackhole,
// and collect (an in-process registry of results by name, for tests and the shell).
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>
#include <string>
#include <vector>

#include "clink/connectors/sql/sql_transactional_batch.hpp"
#include "clink/runtime/operator.hpp"
#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/common/time_zone.hpp"

namespace clink::sql {

// Flink's print connector: each row as format_row writes it ("+I[1, abc]"), prefixed
// with "<print-identifier>> ", or at parallelism > 1 "<print-identifier>:<subtask>> "
// ("<subtask>> " without an identifier), subtasks counted from 1.
class SqlPrintSinkOperator final : public StreamOperator {
 public:
  SqlPrintSinkOperator(std::string identifier, bool standard_error, TimeZonePtr zone)
      : identifier_(std::move(identifier)), out_(standard_error ? stderr : stdout), zone_(std::move(zone)) {}
  void open(RuntimeContext& ctx) override;
  void process_batch(int, BatchPtr batch) override;
  void process_watermark(Watermark) override {}
  void finish() override { std::fflush(out_); }

  // The prefix Flink's PrintSinkOutputWriter puts before each row.
  static std::string prefix(const std::string& identifier, int subtask, int parallelism);

 private:
  std::string identifier_;
  std::FILE* out_;
  TimeZonePtr zone_;
  std::string prefix_;
  std::string buf_;
};

class SqlBlackholeSinkOperator final : public StreamOperator {
 public:
  void process_batch(int, BatchPtr) override {}
  void process_watermark(Watermark) override {}
};

// The rows a `sql_collect_sink` received, by sink name. Retract mode keeps the changelog
// and materialises it as a multiset (+I/+U add a row, -U/-D take an equal one away);
// upsert mode materialises by the primary key (+I/+U replace the key's row, -D removes
// it, -U is ignored, as an upsert sink does).
class SqlCollectResults {
 public:
  enum class Mode { kRetract, kUpsert };
  // One received row: its kind, its line ("+I[1, abc]") and what materialises it (the
  // row text, retract; the key columns' printed values, upsert).
  struct Entry {
    RowKind kind = RowKind::kInsert;
    std::string line;
    std::string key;
  };

  // The results named `name`, created empty on first use.
  static std::shared_ptr<SqlCollectResults> get(const std::string& name);
  // Forgets the results named `name` (a test's clean-up).
  static void drop(const std::string& name);

  void configure(Mode mode, std::vector<std::size_t> primary_key);
  void add(const ColumnBatch& batch, const TimeZone& zone) { apply(entries(batch, zone)); }
  // The batch's rows as this mode materialises them; apply() adds them to the results.
  std::vector<Entry> entries(const ColumnBatch& batch, const TimeZone& zone) const;
  void apply(const std::vector<Entry>& rows);
  // Applies the rows of `transaction` unless a transaction of that id was committed
  // already (a restored sink commits again what its checkpoint pre-committed).
  void commit(const std::string& transaction, const std::vector<Entry>& rows);
  // Every row received, as "+I[1, abc]", in arrival order.
  std::vector<std::string> changelog() const;
  // The materialised rows as "+I[1, abc]", in the order their key (upsert) or row
  // (retract) first appeared.
  std::vector<std::string> rows() const;
  void clear();

 private:
  void apply_locked(const std::vector<Entry>& rows);

  mutable std::mutex mu_;
  Mode mode_ = Mode::kRetract;
  std::vector<std::size_t> key_;
  std::vector<std::string> changelog_;
  // Materialised rows in first-appearance order (empty once retracted), and where the
  // rows of each key (upsert) or row text (retract) are.
  std::vector<std::optional<std::string>> slots_;
  std::unordered_map<std::string, std::vector<std::size_t>> positions_;
  std::set<std::string> committed_;  // transaction ids
};

// sql_collect_sink on the two-phase-commit framework (TwoPhaseCommitSinkOperator). Without
// checkpointing the rows reach the results as they arrive (at least once, as Flink's
// collect sink without checkpoints). With checkpointing it is exactly once (as Flink's
// collect with checkpoints): a transaction's rows are pre-committed into the checkpoint
// and applied once it completed; a restored sink commits each transaction once (by id).
class SqlCollectSink final : public TransactionalSink<ColumnBatch> {
 public:
  SqlCollectSink(std::shared_ptr<SqlCollectResults> results, TimeZonePtr zone)
      : results_(std::move(results)), zone_(std::move(zone)) {}
  std::unique_ptr<TransactionalSinkWriter<ColumnBatch>> create_writer(int subtask, int parallelism) const override;
  std::string factory_name() const override { return "sql_collect_sink"; }

 private:
  std::shared_ptr<SqlCollectResults> results_;
  TimeZonePtr zone_;
};

}  // namespace clink::sql
