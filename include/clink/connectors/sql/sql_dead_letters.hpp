#pragma once
// Rejected records of SQL sources on the side output "dead-letter", as `sql_row` with
// the fixed schema (reason STRING, origin STRING, position STRING, payload STRING)
// (docs/sql-runtime-contract.md). `reason` starts with a short code ("parse-error",
// "missing-field", "late-record"), then ": " and the detail; the metrics count dead
// letters per code (OperatorMetrics::dead_letters_by_reason).
#include <cstdint>
#include <string>
#include <string_view>

#include "clink/sql/common/column_batch.hpp"

namespace clink {
class RuntimeContext;
}

namespace clink::sql {

// (reason STRING, origin STRING, position STRING, payload STRING)
const SchemaPtr& dead_letter_schema();

// Collects one poll's dead letters and sends them as one batch.
class DeadLetterCollector {
 public:
  void add(std::string_view code, std::string_view detail, std::string_view origin, std::string_view position,
           std::string_view payload);
  bool empty() const { return !batch_ || batch_->size() == 0; }
  // Emits the collected batch on "dead-letter" and counts it per reason code.
  void flush(RuntimeContext& ctx);

 private:
  std::unique_ptr<ColumnBatch> batch_;
  std::vector<std::pair<std::string, std::int64_t>> counts_;
  std::string scratch_;
};

// The reason code of a format's message: "missing-field" for a missing field, else
// "parse-error".
std::string_view dead_letter_code_of(std::string_view message);

}  // namespace clink::sql
