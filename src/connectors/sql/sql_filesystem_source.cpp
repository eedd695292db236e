#include "clink/connectors/sql/sql_filesystem_source.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <unordered_set>

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

// Where a byte offset of a record lies: its line (counted from the record's first
// line) and 1-based byte column.
std::pair<std::int64_t, std::size_t> line_and_column(std::string_view record, std::int64_t first_line,
                                                     std::size_t offset) {
  offset = std::min(offset, record.size());
  std::int64_t line = first_line;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset; ++i)
    if (record[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  return {line, offset - line_start + 1};
}

class FilesystemReader final : public SqlSourceReader {
 public:
  FilesystemReader(const FilesystemSourceConfig& c, SchemaPtr output, int subtask, int parallelism)
      : c_(c), output_(std::move(output)), subtask_(subtask), parallelism_(parallelism) {
    // The files hold the table's columns but the partition columns; the decoders fill the
    // projected ones of them (file_out_: their output columns), the partition values the rest.
    const Schema& table = *c_.table_schema;
    std::vector<bool> is_key(table.size(), false);
    for (std::size_t k : c_.partitions.keys) is_key[k] = true;
    std::vector<std::size_t> file_index(table.size(), 0);
    std::vector<RowField> file_fields, decoded_fields;
    for (std::size_t i = 0; i < table.size(); ++i)
      if (!is_key[i]) {
        file_index[i] = file_fields.size();
        file_fields.push_back(table.field(i));
      }
    std::vector<std::size_t> file_projected;
    std::vector<std::pair<std::size_t, std::string>> partition_columns;
    for (std::size_t out = 0; out < c_.projected.size(); ++out) {
      std::size_t i = c_.projected[out];
      if (is_key[i]) {
        partition_columns.emplace_back(out, table.name(i));
      } else {
        file_out_.push_back(out);
        file_projected.push_back(file_index[i]);
        decoded_fields.push_back(table.field(i));
      }
    }
    if (c_.format == RowFormat::kJson) json_.emplace(make_schema(std::move(decoded_fields)), c_.json);
    else csv_.emplace(make_schema(std::move(file_fields)), std::move(file_projected), c_.csv);
    if (!c_.partitions.keys.empty())
      partitions_.emplace(c_.path, output_, std::move(partition_columns), c_.partitions.keys.size(),
                          c_.partitions.default_name);
  }

  void open(RuntimeContext& ctx) override {
    ctx_ = &ctx;
    // A partitioned table's partitions are the directories under its path: a path that is
    // a file has none, so the table is empty (as Flink's partition discovery finds it).
    std::error_code ec;
    const bool no_partitions =
        partitions_ && std::filesystem::exists(c_.path, ec) && !std::filesystem::is_directory(c_.path, ec);
    if (monitoring() && !no_partitions) {
      // The first poll discovers the files, after a restore has said which are taken.
      splits_.assign({});
      start_reading();
      return;
    }
    auto files = no_partitions ? std::vector<std::string>{} : list_input_files(c_.path);
    splits_.assign(files_for_subtask(readable(files, nullptr), subtask_, parallelism_));
    start_reading();
    report_bytes();
  }

  Status poll(ColumnBatch& out, std::size_t max_rows) override {
    LineReader::Line line;
    bool more = true;
    std::int64_t ignored = 0;
    // The decoders fill the file columns (moved out of the batch for this poll); the
    // partition columns get their file's values per run of rows from one file.
    auto& cols = out.columns();
    out_cols_ = &cols;
    row_splits_.clear();
    file_cols_.clear();
    for (std::size_t c : file_out_) file_cols_.push_back(std::move(cols[c]));
    run_rows_ = 0;
    bool waiting = false;
    // Bounded by records examined, so runs of bad records cannot keep one poll busy; a
    // record spanning lines is always read whole.
    for (std::size_t examined = 0; examined < max_rows;) {
      if (!next_line(line)) {
        if (!monitoring()) {
          more = false;
          break;
        }
        if (now() >= next_scan_ms_ && discover()) continue;  // next_line() starts the new files
        waiting = true;
        break;
      }
      ++examined;
      const std::size_t f = current_file_index();
      if (splits_.consumed_before_restore(f, line.number)) continue;
      std::string_view record = line.text;
      const std::int64_t first_line = line.number;
      bool ok;
      bool ignore;
      std::size_t error_offset = std::string_view::npos;  // csv only
      if (json_) {
        if (is_blank(line.text)) continue;
        ok = json_->decode(line.text, line.readable, file_cols_, reason_);
        ignore = c_.json.ignore_parse_errors;
      } else {
        auto r = csv_->decode(record, file_cols_, reason_);
        if (r == CsvRowDecoder::Result::kIncomplete) r = read_multi_line_record(line, f, record);
        if (r == CsvRowDecoder::Result::kSkipped) continue;
        ok = r == CsvRowDecoder::Result::kRow;
        if (!ok) error_offset = csv_->error_offset();
        ignore = c_.csv.ignore_parse_errors;
      }
      if (ok) {
        count_row(f, cols);
        continue;
      }
      if (ignore) {
        ++ignored;
        continue;
      }
      const std::string& file = splits_.files()[f];
      if (error_offset == std::string_view::npos) {
        position_ = "file " + file + " line " + std::to_string(first_line);
      } else {
        auto [l, col] = line_and_column(record, first_line, error_offset);
        position_ = "file " + file + " line " + std::to_string(l) + ", column " + std::to_string(col);
      }
      if (!c_.dead_letter_wired) throw ClinkError(position_ + ": " + reason_);
      dead_.add(dead_letter_code_of(reason_), reason_, ctx_->operator_id(), position_, record);
    }
    end_run(cols);
    const std::size_t rows = batch_rows_;
    for (std::size_t k = 0; k < file_out_.size(); ++k) cols[file_out_[k]] = std::move(file_cols_[k]);
    out.commit_rows(rows);
    batch_rows_ = 0;
    if (ignored > 0) ctx_->metrics().count_dead_letters("ignored-parse-error", ignored, false);
    dead_.flush(*ctx_);
    report_bytes();
    out_cols_ = nullptr;
    // The next poll reads the next lane (a csv line held back is its lane's next one).
    if (lanes_.size() > 1 && !held_) lane_ = (lane_ + 1) % lanes_.size();
    if (!more) return Status::kEnd;
    return waiting && rows == 0 ? Status::kNothingAvailable : Status::kMore;
  }

  std::int64_t wait_hint_ms() const override {
    if (!monitoring() || !ctx_) return 1;
    return std::max<std::int64_t>(1, next_scan_ms_ - now());
  }

  // Splits as the typed file source's (FileSplits); a monitoring source's discovered
  // files not started yet are splits from their first line.
  std::vector<std::string> snapshot_splits() const override { return splits_.snapshot(subtask_, discovered_); }
  void restore_splits(std::vector<std::string> splits) override {
    splits_.restore(splits, "sql_filesystem_source");
    discovered_.clear();
    discovered_bytes_ = 0;
    start_reading();
    report_bytes();
  }

  // Monitoring: every file taken by any subtask, so that after a restore (at any
  // parallelism) none is taken twice. Each subtask writes the files it took; subtask 0
  // also carries the restored ones on.
  std::vector<std::string> snapshot_shared() const override { return taken_; }

  const std::vector<std::uint64_t>& row_splits() const override { return row_splits_; }
  const std::vector<std::uint64_t>& held_splits() const override { return held_splits_; }
  void restore_shared(std::vector<std::string> files) override {
    known_.clear();
    known_.insert(files.begin(), files.end());
    taken_ = subtask_ == 0 ? std::move(files) : std::vector<std::string>{};
  }

 private:
  bool monitoring() const { return c_.monitor_interval_ms > 0; }
  std::int64_t now() const { return ctx_->timer_service().current_processing_time(); }

  // The files of `files` the table reads: in a partition and kept by the pruning
  // predicate (the others go to `rejected` when given).
  std::vector<std::string> readable(std::vector<std::string> files, std::vector<std::string>* rejected) const {
    if (!partitions_) return files;
    std::vector<std::string> in = partitions_->in_partitions(files);
    std::vector<std::string> kept = in;
    if (c_.partitions.filter) {
      FilePartitions pruning = *partitions_;  // partitions_ holds the values of the files being read
      pruning.assign(in);
      kept = pruning.prune(in, c_.partitions.filter, c_.partitions.session);
    }
    if (rejected) {
      std::set<std::string> keep(kept.begin(), kept.end());
      for (auto& f : files)
        if (!keep.count(f)) rejected->push_back(std::move(f));
    }
    return kept;
  }

  // Lists the path for files not seen yet that this subtask owns (by a hash of the path,
  // stable as the file set grows, unlike a position in the sorted listing) and queues
  // them, sorted. True when it found some.
  bool discover() {
    next_scan_ms_ = now() + c_.monitor_interval_ms;
    std::vector<std::string> fresh;
    for (auto& f : list_input_files(c_.path))
      if (!known_.count(f) && owner_of(f) == subtask_) fresh.push_back(std::move(f));
    if (fresh.empty()) return false;
    std::vector<std::string> rejected;
    auto kept = readable(std::move(fresh), &rejected);
    known_.insert(rejected.begin(), rejected.end());  // not read, and not state: judged again after a restore
    for (const auto& f : kept) {
      known_.insert(f);
      taken_.push_back(f);
      discovered_.push_back(f);
      std::error_code ec;
      const auto size = std::filesystem::file_size(f, ec);
      if (!ec) discovered_bytes_ += static_cast<std::int64_t>(size);
    }
    return !kept.empty();
  }
  int owner_of(const std::string& path) const {
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a: the same in every process and build
    for (unsigned char ch : path) h = (h ^ ch) * 1099511628211ull;
    return static_cast<int>(h % static_cast<std::uint64_t>(parallelism_));
  }

  // One reader per lane (FileSplits), each over its files; the read buffer is shared out
  // between them (at least 64 KiB each).
  void start_reading() {
    if (partitions_) partitions_->assign(splits_.files());
    const std::size_t n = splits_.lanes();
    const std::size_t buffer = n <= 1 ? c_.read_buffer_bytes
                                      : std::max(std::min<std::size_t>(c_.read_buffer_bytes, 64 << 10),
                                                 c_.read_buffer_bytes / n);
    for (const Lane& l : lanes_)
      if (l.lines) bytes_done_ += l.lines->bytes_read();
    lanes_.clear();
    held_splits_.clear();
    for (std::size_t l = 0; l < n; ++l) {
      const auto& files = splits_.files();
      std::vector<std::string> mine(files.begin() + static_cast<std::ptrdiff_t>(splits_.lane_begin(l)),
                                    files.begin() + static_cast<std::ptrdiff_t>(splits_.lane_end(l)));
      lanes_.push_back(Lane{std::make_unique<LineReader>(std::move(mine), buffer), splits_.lane_begin(l), next_lane_id_});
      held_splits_.push_back(next_lane_id_++);
    }
    lane_ = 0;
    held_ = false;
  }
  std::size_t current_file_index() const { return lanes_[lane_].begin + lanes_[lane_].lines->current_file_index(); }

  // FLIP-33's numBytesIn and pendingBytes of the source: the bytes of its files it read
  // (those of a restored split's lines consumed before the checkpoint too: they are read
  // again to be skipped) and the bytes of the files it was given that it has not read.
  void report_bytes() {
    std::int64_t in = bytes_done_, pending = discovered_bytes_;
    for (const Lane& l : lanes_)
      if (l.lines) {
        in += l.lines->bytes_read();
        pending += l.lines->bytes_pending();
      }
    ctx_->metrics().bytes_in.store(in, std::memory_order_relaxed);
    ctx_->metrics().pending_bytes.store(pending, std::memory_order_relaxed);
  }

  // The next line: one put back by read_multi_line_record first, else of the lane being
  // read, else of the next lane not finished; once every lane is, a monitoring source
  // moves on to the files discovered since.
  bool next_line(LineReader::Line& line) {
    if (held_) {
      held_ = false;
      line = held_line_;
      return true;
    }
    for (;;) {
      for (std::size_t tried = 0; tried < lanes_.size(); ++tried, lane_ = (lane_ + 1) % lanes_.size()) {
        Lane& l = lanes_[lane_];
        if (!l.lines) continue;
        if (l.lines->next(line)) return true;
        bytes_done_ += l.lines->bytes_read();
        l.lines.reset();  // its buffer and file go now
        splits_.finish_lane(lane_);
        held_splits_.erase(std::find(held_splits_.begin(), held_splits_.end(), l.id));
      }
      if (discovered_.empty()) return false;
      if (out_cols_) end_run(*out_cols_);  // file indices restart with the new files
      splits_.assign(std::move(discovered_));
      discovered_.clear();
      discovered_bytes_ = 0;
      start_reading();
    }
  }

  // The record starting at `line` (of file `f`) has a quoted field open at its end: joins
  // the following lines of the file, each after the line break that ended the one before,
  // until the record is complete or the file ends (the result stays kIncomplete). A line
  // of the next file is held for the next call of next_line().
  //
  // Linear in the record's size: a line without a quote character cannot close the open
  // field, so the record is decoded again only after lines with one (an unterminated
  // quote early in a large file was quadratic). Bounded: a record still open after
  // kMaxRecordBytes (Jackson's default maximum string length, as Flink's CSV format
  // reads) is an error at its opening quote, not the rest of the file in one record.
  CsvRowDecoder::Result read_multi_line_record(LineReader::Line& line, std::size_t f, std::string_view& record) {
    static constexpr std::size_t kMaxRecordBytes = 20'000'000;
    pending_.assign(line.text);
    auto r = CsvRowDecoder::Result::kIncomplete;
    bool decoded = true;  // pending_ as the last decode saw it
    const char quote = c_.csv.quote_character;
    while (r == CsvRowDecoder::Result::kIncomplete) {
      if (pending_.size() > kMaxRecordBytes) {
        if (!decoded) r = csv_->decode(pending_, file_cols_, reason_);
        if (r != CsvRowDecoder::Result::kIncomplete) break;
        reason_ += " (the record is still open after " + std::to_string(kMaxRecordBytes) + " bytes)";
        r = CsvRowDecoder::Result::kError;
        break;
      }
      // LineReader strips "\r\n" and "\n"; the field keeps the one the file had. The byte
      // after the text is still in the buffer (readable padding).
      const bool crlf = line.text.data()[line.text.size()] == '\r';
      if (!lanes_[lane_].lines->next(line)) break;
      if (current_file_index() != f) {
        held_ = true;
        held_line_ = line;
        break;
      }
      // Never consumed before a restore: a checkpoint is taken between polls, and a poll
      // ends only after whole records. This moves the split's position past the line.
      splits_.consumed_before_restore(f, line.number);
      pending_ += crlf ? "\r\n" : "\n";
      pending_.append(line.text);
      decoded = line.text.find(quote) != std::string_view::npos;
      if (!decoded) continue;
      r = csv_->decode(pending_, file_cols_, reason_);
    }
    if (!decoded && r == CsvRowDecoder::Result::kIncomplete) r = csv_->decode(pending_, file_cols_, reason_);
    record = pending_;
    return r;
  }

  // A row of file `f` was decoded: the partition values follow per run of one file.
  void count_row(std::size_t f, std::vector<Column>& cols) {
    ++batch_rows_;
    row_splits_.push_back(lanes_[lane_].id);
    if (!partitions_) return;
    if (run_rows_ > 0 && f != run_file_) end_run(cols);
    run_file_ = f;
    ++run_rows_;
  }
  void end_run(std::vector<Column>& cols) {
    if (partitions_) partitions_->fill(run_file_, run_rows_, cols);
    run_rows_ = 0;
  }

  const FilesystemSourceConfig& c_;
  SchemaPtr output_;
  int subtask_, parallelism_;
  RuntimeContext* ctx_ = nullptr;
  std::optional<JsonRowDecoder> json_;
  std::optional<CsvRowDecoder> csv_;
  std::optional<FilePartitions> partitions_;
  std::vector<std::size_t> file_out_;  // output columns the files hold, in decoder order
  std::vector<Column> file_cols_;
  // The lanes of splits_, read in turn a poll each; a lane is a split of the source's
  // watermarks (source_watermarks.hpp), so one read ahead never makes another's rows late.
  struct Lane {
    std::unique_ptr<LineReader> lines;  // null once read to its end
    std::size_t begin = 0;              // its first file's index in splits_.files()
    std::uint64_t id = 0;               // its watermark split
  };
  std::vector<Lane> lanes_;
  std::size_t lane_ = 0;  // the lane being read
  std::uint64_t next_lane_id_ = 0;
  std::vector<std::uint64_t> row_splits_, held_splits_;  // the lane of each row of the last poll; the lanes not finished
  LineReader::Line held_line_;
  bool held_ = false;
  std::string pending_;  // a record spanning lines
  std::size_t run_file_ = 0, run_rows_ = 0, batch_rows_ = 0;
  std::vector<Column>* out_cols_ = nullptr;  // the batch's columns during a poll
  FileSplits splits_;
  // Monitoring (source.monitor-interval): files seen (taken by any subtask, or pruned),
  // the ones this subtask took, and those it discovered but not started.
  std::unordered_set<std::string> known_;
  std::vector<std::string> taken_, discovered_;
  std::int64_t discovered_bytes_ = 0;  // the size of discovered_'s files
  std::int64_t bytes_done_ = 0;        // read by the LineReaders of lanes gone
  std::int64_t next_scan_ms_ = 0;
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
  for (std::size_t k : config_.partitions.keys)
    if (k >= config_.table_schema->size())
      throw ClinkError("partition key " + std::to_string(k) + " is not a field of " + config_.table_schema->to_string());
  if (config_.partitions.keys.size() == config_.table_schema->size())
    throw ClinkError("every column of " + config_.table_schema->to_string() + " is a partition column: the files hold none");
  // Build a reader once now so that a bad schema fails when the spec loads, not in every subtask.
  FilesystemReader(config_, output_schema_, 0, 1);
}

std::unique_ptr<SqlSourceReader> FilesystemSqlSource::create_reader(int subtask, int parallelism) const {
  return std::make_unique<FilesystemReader>(config_, output_schema_, subtask, parallelism);
}

}  // namespace clink::sql
