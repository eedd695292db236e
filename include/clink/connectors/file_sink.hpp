#pragma once
// Writes one line per record, as text (the record's text form) or JSON lines, with
// exactly-once semantics (Flink's FileSink): each transaction of the two-phase-commit
// protocol writes one part file "<path>/part-<subtask>-<n>.<ext>" (n counts the
// subtask's transactions), staged under a hidden in-progress name (StagedFile). A
// checkpoint pre-commits the open part file (flush, fsync, close) and the part file
// appears, renamed into place, once that checkpoint completes; the last one appears
// at end of input. Transactions without records leave no file. A reader never sees
// uncommitted data.
//
// Single-file mode: at parallelism 1, when `path` neither ends in '/' nor is an
// existing directory, the one transaction of a job without checkpoints commits to
// exactly `path` at end of input (even when empty). A checkpoint in that mode fails
// the job: checkpointing needs a directory.
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "clink/api/two_phase_commit_sink.hpp"
#include "clink/connectors/staged_file.hpp"
#include "clink/formats/line_encoder.hpp"

namespace clink {

// The record-type independent half of a FileSink writer: part files, their staging
// and commits, and the clean-up of staging files a failed run left behind.
class FilePartWriter {
 public:
  FilePartWriter(std::string path, int subtask, int parallelism, std::string extension);
  FilePartWriter(const FilePartWriter&) = delete;
  FilePartWriter& operator=(const FilePartWriter&) = delete;

  void open(RuntimeContext& ctx);
  void begin_transaction(std::int64_t transaction_id);
  // Appends encoded lines to the open transaction (buffered).
  void append(std::string_view lines);
  std::string pre_commit();
  void commit(const std::string& committable);
  void abort();

  bool single_file() const { return single_file_; }
  // The part number of transaction `transaction_id` of subtask `subtask`.
  static std::int64_t part_number(std::int64_t transaction_id, int subtask);

 private:
  static constexpr std::size_t kFlushBytes = std::size_t{1} << 20;
  void flush();
  void ensure_file();
  void remove_stale_staging_files(const std::set<std::string>& keep) const;

  std::string path_;
  int subtask_;
  int parallelism_;
  std::string extension_;
  bool single_file_;
  OperatorStateStore* state_ = nullptr;
  bool began_ = false;
  std::int64_t part_ = 0;
  std::optional<StagedFile> file_;
  std::string buf_;
  // Staging files of pre-committed transactions not yet committed (by file name).
  std::set<std::string> pre_committed_;
};

template <class T>
class FileSink final : public TransactionalSink<T> {
 public:
  // Throws ClinkError if T has no encoding in `format`.
  explicit FileSink(std::string path, LineFormat format = LineFormat::kText)
      : path_(std::move(path)), encoder_(format) {}

  std::unique_ptr<TransactionalSinkWriter<T>> create_writer(int subtask, int parallelism) const override {
    return std::make_unique<Writer>(path_, subtask, parallelism, encoder_);
  }
  std::string factory_name() const override { return "file_sink"; }
  const std::string& path() const { return path_; }

 private:
  class Writer final : public TransactionalSinkWriter<T> {
   public:
    Writer(const std::string& path, int subtask, int parallelism, LineEncoder<T> encoder)
        : parts_(path, subtask, parallelism, line_format_extension(encoder.format())), encoder_(encoder) {}
    void open(RuntimeContext& ctx) override { parts_.open(ctx); }
    void begin_transaction(std::int64_t transaction_id) override { parts_.begin_transaction(transaction_id); }
    void write(const Batch<T>& batch) override {
      if (batch.records.empty()) return;
      lines_.clear();
      for (const auto& r : batch.records) encoder_.encode(r.value, lines_);
      parts_.append(lines_);
    }
    std::string pre_commit() override { return parts_.pre_commit(); }
    void commit(const std::string& committable) override { parts_.commit(committable); }
    void abort() override { parts_.abort(); }
    void close() override { parts_.abort(); }  // no-op after a commit at end of input

   private:
    FilePartWriter parts_;
    LineEncoder<T> encoder_;
    std::string lines_;
  };

  std::string path_;
  LineEncoder<T> encoder_;
};

}  // namespace clink
