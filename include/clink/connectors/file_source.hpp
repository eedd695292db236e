#pragma once
// Flink's FileSource for line formats: one file, or every file under a directory in
// sorted path order. Each line becomes one record through a LineDecoder.
//
// A malformed line is never dropped silently. With OnError::kFail (the default) the
// job fails with the file, the 1-based line number and the reason; with
// OnError::kDeadLetter the line goes to the side output "dead-letter" as a DeadLetter
// and reading continues.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "clink/api/source.hpp"
#include "clink/connectors/dead_letter.hpp"
#include "clink/connectors/line_reader.hpp"
#include "clink/core/error.hpp"
#include "clink/formats/line_decoder.hpp"
#include "clink/runtime/runtime_context.hpp"

namespace clink {

enum class OnError { kFail, kDeadLetter };

inline OnError parse_on_error(const std::string& name) {
  if (name == "fail") return OnError::kFail;
  if (name == "dead_letter") return OnError::kDeadLetter;
  throw ClinkError("unknown on_error '" + name + "' (known: fail, dead_letter)");
}

struct FileSourceOptions {
  OnError on_error = OnError::kFail;
  std::size_t read_buffer_bytes = std::size_t{1} << 20;
};

// The files a source at `path` reads, in sorted path order: `path` itself if it is a
// file, else every regular file below the directory, skipping names that start with
// '.' or '_' (and directories so named), as Flink's default file filter does.
// Throws ClinkError if `path` does not exist.
std::vector<std::string> list_input_files(const std::string& path);

// Subtask i of p reads the files at sorted positions i, i+p, i+2p, ...
std::vector<std::string> files_for_subtask(const std::vector<std::string>& files, int subtask, int parallelism);

// The files one file-source reader reads and how far each was read: what the typed and
// the SQL file sources checkpoint, one split "<lines consumed>@<lane> <path>" per file not
// finished. Restoring re-reads and skips the consumed lines of each file (a byte offset
// per file would seek instead).
//
// Lanes: files a reader reads one after the other. A fresh reader's files are one lane. A
// restore at another parallelism deals the old readers' splits round-robin, and each old
// lane stays a lane of its own, its files in their order ("<subtask>.<lane>" names it in
// a checkpoint; splits without one, of older checkpoints, form one lane). The SQL source
// reads its lanes interleaved with a watermark per lane (issue 16: read one after the
// other, one old reader's files made the next one's rows late).
class FileSplits {
 public:
  // A fresh reader's files, in one lane.
  void assign(std::vector<std::string> files);
  const std::vector<std::string>& files() const { return files_; }
  std::size_t lanes() const { return lanes_.size(); }
  // Lane `l` is files()[lane_begin(l), lane_end(l)), read in that order.
  std::size_t lane_begin(std::size_t l) const { return lanes_[l].begin; }
  std::size_t lane_end(std::size_t l) const { return lanes_[l].end; }
  // Line `line` of file `f` was read; true when it was consumed before the restored checkpoint.
  bool consumed_before_restore(std::size_t f, std::int64_t line) {
    Lane& l = lanes_[lane_of_[f]];
    l.current = f;
    l.current_lines = line;
    return line <= skip_[f];
  }
  // Lane `l` was read to its end: a snapshot leaves it out.
  void finish_lane(std::size_t l) { lanes_[l].current = lanes_[l].end; }
  // For a reader of its lanes one after the other (the typed source): file `f` is being
  // read (files().size(): all were), so the lanes before its lane are finished.
  void finish_lanes_before(std::size_t f) {
    while (first_open_ < lanes_.size() && lanes_[first_open_].end <= f) finish_lane(first_open_++);
  }
  // The splits of subtask `subtask` (which names its lanes); `queued`: files to read after
  // these from their first line, as one more lane.
  std::vector<std::string> snapshot(int subtask, const std::vector<std::string>& queued = {}) const;
  // Throws ClinkError naming `source` for a malformed split.
  void restore(const std::vector<std::string>& splits, const char* source);

 private:
  struct Lane {
    std::size_t begin = 0, end = 0;
    std::size_t current = 0;          // the file being read
    std::int64_t current_lines = 0;   // lines of it consumed
  };
  std::vector<std::string> files_;  // lane by lane
  std::vector<std::int64_t> skip_;  // lines of each consumed before the restored checkpoint
  std::vector<std::uint32_t> lane_of_;
  std::vector<Lane> lanes_;
  std::size_t first_open_ = 0;  // finish_lanes_before: the lanes before it are finished
};

// "malformed JSON in /x/events.jsonl line 17: missing field \"value\""
std::string malformed_line_message(const char* format_label, const std::string& file, std::int64_t line,
                                   const std::string& reason);

template <class T>
class FileSource final : public Source<T> {
 public:
  using DecoderFactory = std::function<std::unique_ptr<LineDecoder<T>>()>;

  FileSource(std::string path, DecoderFactory decoders, FileSourceOptions options = {})
      : path_(std::move(path)), decoders_(std::move(decoders)), options_(options) {}

  // Reads `path` in `format`; throws ClinkError if T cannot be read in it.
  static std::shared_ptr<FileSource> of(std::string path, LineFormat format, FileSourceOptions options = {}) {
    make_line_decoder<T>(format);  // fail now, not in every subtask
    return std::make_shared<FileSource>(
        std::move(path), [format] { return make_line_decoder<T>(format); }, options);
  }
  static std::shared_ptr<FileSource> text(std::string path, FileSourceOptions options = {}) {
    return of(std::move(path), LineFormat::kText, options);
  }
  static std::shared_ptr<FileSource> json_lines(std::string path, FileSourceOptions options = {}) {
    return of(std::move(path), LineFormat::kJson, options);
  }

  std::unique_ptr<SourceReader<T>> create_reader(int subtask, int parallelism) const override {
    return std::make_unique<Reader>(*this, subtask, parallelism);
  }
  std::string factory_name() const override { return "file_source"; }
  const std::string& path() const { return path_; }

 private:
  class Reader final : public SourceReader<T> {
   public:
    using Status = typename SourceReader<T>::Status;
    Reader(const FileSource& s, int subtask, int parallelism)
        : path_(s.path_), options_(s.options_), decoder_(s.decoders_()), subtask_(subtask), parallelism_(parallelism) {}

    // Lists the files here rather than at plan time: a spec may be planned on a
    // machine other than the one that reads the files. A fresh reader's splits are
    // its files, each from the start.
    void open(RuntimeContext& ctx) override {
      ctx_ = &ctx;
      splits_.assign(files_for_subtask(list_input_files(path_), subtask_, parallelism_));
      lines_.emplace(splits_.files(), options_.read_buffer_bytes);
      report_bytes();
    }

    Status poll(Batch<T>& out, std::size_t max_records) override {
      if (!lines_) throw ClinkError("file source reader polled before open()");
      std::unique_ptr<Batch<DeadLetter>> dead;
      LineReader::Line line;
      bool more = true;
      // Bounded by lines examined, not records produced, so a run of bad or blank
      // lines cannot keep one poll busy indefinitely.
      for (std::size_t examined = 0; examined < max_records; ++examined) {
        if (!lines_->next(line)) {
          splits_.finish_lanes_before(splits_.files().size());
          more = false;
          break;
        }
        splits_.finish_lanes_before(lines_->current_file_index());
        if (splits_.consumed_before_restore(lines_->current_file_index(), line.number)) continue;
        if (decoder_->skips_blank_lines() && is_blank(line.text)) continue;
        auto& rec = out.records.emplace_back();
        if (decoder_->decode(line.text, line.readable, rec.value, reason_)) continue;
        out.records.pop_back();
        if (options_.on_error == OnError::kFail)
          throw ClinkError(malformed_line_message(decoder_->format_label(), lines_->current_file(), line.number, reason_));
        if (!dead) dead = std::make_unique<Batch<DeadLetter>>();
        dead->push(DeadLetter{ctx_->operator_id(), lines_->current_file(), line.number, reason_, std::string(line.text)});
      }
      if (dead) {
        ctx_->metrics().dead_letters.fetch_add(static_cast<std::int64_t>(dead->size()), std::memory_order_relaxed);
        ctx_->output().emit_side(kDeadLetterTag, std::move(dead));
      }
      report_bytes();
      return more ? Status::kMore : Status::kEnd;
    }

    // Its lanes are read one after the other (no per-lane watermarks in the typed source).
    std::optional<std::vector<std::string>> snapshot_splits() const override { return splits_.snapshot(subtask_); }
    void restore_splits(std::vector<std::string> splits) override {
      splits_.restore(splits, "file source");
      lines_.emplace(splits_.files(), options_.read_buffer_bytes);
      report_bytes();
    }

   private:
    // FLIP-33's numBytesIn and pendingBytes: the bytes of its files read, and left.
    void report_bytes() {
      ctx_->metrics().bytes_in.store(lines_->bytes_read(), std::memory_order_relaxed);
      ctx_->metrics().pending_bytes.store(lines_->bytes_pending(), std::memory_order_relaxed);
    }

    static bool is_blank(std::string_view s) {
      for (char c : s)
        if (!std::isspace(static_cast<unsigned char>(c))) return false;
      return true;
    }

    std::string path_;
    FileSourceOptions options_;
    std::unique_ptr<LineDecoder<T>> decoder_;
    int subtask_;
    int parallelism_;
    RuntimeContext* ctx_ = nullptr;
    std::optional<LineReader> lines_;
    std::string reason_;
    FileSplits splits_;
  };

  std::string path_;
  DecoderFactory decoders_;
  FileSourceOptions options_;
};

}  // namespace clink
