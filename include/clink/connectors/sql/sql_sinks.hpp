#pragma once
// The SQL sinks that take every row kind: print (Flink's `+I[1, abc]` lines), blackhole,
// and collect (an in-process registry of results by name, for tests and the shell).
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <string>
#include <vector>

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

  // The results named `name`, created empty on first use.
  static std::shared_ptr<SqlCollectResults> get(const std::string& name);
  // Forgets the results named `name` (a test's clean-up).
  static void drop(const std::string& name);

  void configure(Mode mode, std::vector<std::size_t> primary_key);
  void add(const ColumnBatch& batch, const TimeZone& zone);
  // Every row received, as "+I[1, abc]", in arrival order.
  std::vector<std::string> changelog() const;
  // The materialised rows as "+I[1, abc]", in the order their key (upsert) or row
  // (retract) first appeared.
  std::vector<std::string> rows() const;
  void clear();

 private:
  mutable std::mutex mu_;
  Mode mode_ = Mode::kRetract;
  std::vector<std::size_t> key_;
  std::vector<std::string> changelog_;
  // Materialised rows in first-appearance order (empty once retracted), and where the
  // rows of each key (upsert) or row text (retract) are.
  std::vector<std::optional<std::string>> slots_;
  std::unordered_map<std::string, std::vector<std::size_t>> positions_;
};

class SqlCollectSinkOperator final : public StreamOperator {
 public:
  SqlCollectSinkOperator(std::shared_ptr<SqlCollectResults> results, TimeZonePtr zone)
      : results_(std::move(results)), zone_(std::move(zone)) {}
  void process_batch(int, BatchPtr batch) override { results_->add(column_batch_cast(*batch), *zone_); }
  void process_watermark(Watermark) override {}

 private:
  std::shared_ptr<SqlCollectResults> results_;
  TimeZonePtr zone_;
};

}  // namespace clink::sql
