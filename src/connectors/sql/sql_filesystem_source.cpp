#include "clink/connectors/sql/sql_filesystem_source.hpp"

#include <charconv>
#include <optional>

#include "clink/connectors/file_source.hpp"
#include "clink/connectors/line_reader.hpp"
#include "clink/connectors/sql/sql_dead_letters.hpp"
#include "clink/core/error.hpp"
#include "clink/runtime/runtime_context.hpp"

namespace clink::sql {

namespace {

bool is_blank(std::string_view s) {
  for (char c : s)
    if (c != ' ' && c != '\t' && c != '\r') return false;
  return true;
}

class FilesystemReader final : public SqlSourceReader {
 public:
  FilesystemReader(const FilesystemSourceConfig& c, SchemaPtr output, int subtask, int parallelism)
      : c_(c), output_(std::move(output)), subtask_(subtask), parallelism_(parallelism) {
    if (c_.format == RowFormat::kJson) json_.emplace(output_, c_.json);
    else csv_.emplace(c_.table_schema, c_.projected, c_.csv);
  }

  void open(RuntimeContext& ctx) override {
    ctx_ = &ctx;
    splits_.assign(files_for_subtask(list_input_files(c_.path), subtask_, parallelism_));
    lines_.emplace(splits_.files(), c_.read_buffer_bytes);
  }

  Status poll(ColumnBatch& out, std::size_t max_rows) override {
    LineReader::Line line;
    bool more = true;
    std::size_t rows = 0;
    std::int64_t ignored = 0;
    auto& cols = out.columns();
    // Bounded by lines examined, so runs of bad lines cannot keep one poll busy.
    for (std::size_t examined = 0; examined < max_rows; ++examined) {
      if (!lines_->next(line)) {
        more = false;
        break;
      }
      if (splits_.consumed_before_restore(lines_->current_file_index(), line.number)) continue;
      bool ok;
      if (json_) {
        if (is_blank(line.text)) continue;
        ok = json_->decode(line.text, line.readable, cols, reason_);
        if (!ok && c_.json.ignore_parse_errors) {
          ++ignored;
          continue;
        }
      } else {
        auto r = csv_->decode(line.text, cols, reason_);
        if (r == CsvRowDecoder::Result::kSkipped) continue;
        ok = r == CsvRowDecoder::Result::kRow;
        if (!ok && c_.csv.ignore_parse_errors) {
          ++ignored;
          continue;
        }
      }
      if (ok) {
        ++rows;
        continue;
      }
      position_ = "file " + lines_->current_file() + " line " + std::to_string(line.number);
      if (!c_.dead_letter_wired) throw ClinkError(position_ + ": " + reason_);
      dead_.add(dead_letter_code_of(reason_), reason_, ctx_->operator_id(), position_, line.text);
    }
    out.commit_rows(rows);
    if (ignored > 0) ctx_->metrics().count_dead_letters("ignored-parse-error", ignored, false);
    dead_.flush(*ctx_);
    return more ? Status::kMore : Status::kEnd;
  }

  // Splits as the typed file source's (FileSplits).
  std::vector<std::string> snapshot_splits() const override { return splits_.snapshot(); }
  void restore_splits(std::vector<std::string> splits) override {
    splits_.restore(splits, "sql_filesystem_source");
    lines_.emplace(splits_.files(), c_.read_buffer_bytes);
  }

 private:
  const FilesystemSourceConfig& c_;
  SchemaPtr output_;
  int subtask_, parallelism_;
  RuntimeContext* ctx_ = nullptr;
  std::optional<JsonRowDecoder> json_;
  std::optional<CsvRowDecoder> csv_;
  std::optional<LineReader> lines_;
  FileSplits splits_;
  std::string reason_, position_;
  DeadLetterCollector dead_;
};

}  // namespace

FilesystemSqlSource::FilesystemSqlSource(FilesystemSourceConfig config) : config_(std::move(config)) {
  std::vector<RowField> fields;
  for (std::size_t i : config_.projected) {
    if (i >= config_.table_schema->size())
      throw ClinkError("projected field " + std::to_string(i) + " is not a field of " + config_.table_schema->to_string());
    fields.push_back(config_.table_schema->field(i));
  }
  output_schema_ = make_schema(std::move(fields));
  // Build once now so that a bad schema fails when the spec loads, not in every subtask.
  if (config_.format == RowFormat::kCsv) CsvRowDecoder(config_.table_schema, config_.projected, config_.csv);
}

std::unique_ptr<SqlSourceReader> FilesystemSqlSource::create_reader(int subtask, int parallelism) const {
  return std::make_unique<FilesystemReader>(config_, output_schema_, subtask, parallelism);
}

}  // namespace clink::sql
