#pragma once
// One SQL source reader run directly (no job): polls, snapshots and restores by hand, on a
// replaceable processing-time clock. Rows as format_row writes them, dead letters "DL[...]".
#include <memory>
#include <string>
#include <vector>

#include "clink/connectors/sql/sql_filesystem_source.hpp"
#include "clink/runtime/runtime_context.hpp"
#include "clink/sql/common/time_zone.hpp"

#include "../support/manual_clock.hpp"

namespace clink::test {

class ReaderHarness final : public Output {
 public:
  explicit ReaderHarness(sql::FilesystemSourceConfig config, int subtask = 0, int parallelism = 1,
                         const ProcessingTimeClock& clock = SystemClock::instance())
      : source_(std::move(config)),
        ctx_("src", "src", subtask, parallelism, kDefaultMaxParallelism, this, std::make_shared<OperatorMetrics>(),
             clock),
        reader_(source_.create_reader(subtask, parallelism)) {
    reader_->open(ctx_);
  }
  // One poll of at most `max_rows` records.
  sql::SqlSourceReader::Status poll_status(std::size_t max_rows) {
    sql::ColumnBatch b(source_.output_schema());
    auto status = reader_->poll(b, max_rows);
    for (auto& l : sql::format_rows(b, *sql::TimeZone::utc())) rows.push_back(std::move(l));
    return status;
  }
  // False at the end (or, for an unbounded source, when nothing is available).
  bool poll(std::size_t max_rows) { return poll_status(max_rows) == sql::SqlSourceReader::Status::kMore; }
  void drain(std::size_t max_rows) {
    while (poll(max_rows)) {
    }
  }
  sql::SqlSourceReader& reader() { return *reader_; }
  OperatorMetrics& metrics() { return ctx_.metrics(); }

  void emit(BatchPtr) override {}
  void emit_watermark(Watermark) override {}
  void emit_side(const std::string&, BatchPtr b) override {
    for (auto& l : sql::format_rows(sql::column_batch_cast(*b), *sql::TimeZone::utc())) rows.push_back("DL" + l.substr(2));
  }

  std::vector<std::string> rows;

 private:
  sql::FilesystemSqlSource source_;
  RuntimeContext ctx_;
  std::unique_ptr<sql::SqlSourceReader> reader_;
};

}  // namespace clink::test
