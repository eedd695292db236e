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
// a checkpoint; splits without one, of older checkpoints, form one lane). Both file
// sources read their lanes interleaved with a watermark per lane (issue 16: read one after
// the other, one old reader's files made the next one's rows late).
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
      start_reading();
    }

    // A poll reads one lane (the next one not finished when it ends), the next poll the
    // next lane; each record's partition is its lane, a split of the source's watermarks
    // (split_watermarks.hpp), so one lane read ahead never makes another's records late.
    Status poll(Batch<T>& out, std::size_t max_records) override {
      if (!started_) throw ClinkError("file source reader polled before open()");
      std::unique_ptr<Batch<DeadLetter>> dead;
      LineReader::Line line;
      bool more = true;
      // Bounded by lines examined, not records produced, so a run of bad or blank
      // lines cannot keep one poll busy indefinitely.
      for (std::size_t examined = 0; examined < max_records; ++examined) {
        if (!next_line(line)) {
          more = false;
          break;
        }
        const Lane& lane = lanes_[lane_];
        if (splits_.consumed_before_restore(lane.begin + lane.lines->current_file_index(), line.number)) continue;
        if (decoder_->skips_blank_lines() && is_blank(line.text)) continue;
        auto& rec = out.records.emplace_back();
        rec.partition = lane.id;
        if (decoder_->decode(line.text, line.readable, rec.value, reason_)) continue;
        out.records.pop_back();
        if (options_.on_error == OnError::kFail)
          throw ClinkError(malformed_line_message(decoder_->format_label(), lane.lines->current_file(), line.number, reason_));
        if (!dead) dead = std::make_unique<Batch<DeadLetter>>();
        dead->push(DeadLetter{ctx_->operator_id(), lane.lines->current_file(), line.number, reason_, std::string(line.text)});
      }
      if (dead) {
        ctx_->metrics().dead_letters.fetch_add(static_cast<std::int64_t>(dead->size()), std::memory_order_relaxed);
        ctx_->output().emit_side(kDeadLetterTag, std::move(dead));
      }
      report_bytes();
      if (lanes_.size() > 1) lane_ = (lane_ + 1) % lanes_.size();
      return more ? Status::kMore : Status::kEnd;
    }

    std::optional<std::vector<std::string>> snapshot_splits() const override { return splits_.snapshot(subtask_); }
    void restore_splits(std::vector<std::string> splits) override {
      splits_.restore(splits, "file source");
      start_reading();
    }
    const std::vector<std::uint64_t>& held_splits() const override { return held_splits_; }

   private:
    struct Lane {
      std::unique_ptr<LineReader> lines;  // null once read to its end
      std::size_t begin = 0;              // its first file's index in splits_.files()
      PartitionId id = 0;                 // its watermark split
    };

    // One LineReader per lane of splits_, the read buffer shared out between them (at
    // least 64 KiB each).
    void start_reading() {
      const std::size_t n = splits_.lanes();
      const std::size_t buffer = n <= 1 ? options_.read_buffer_bytes
                                        : std::max(std::min<std::size_t>(options_.read_buffer_bytes, 64 << 10),
                                                   options_.read_buffer_bytes / n);
      lanes_.clear();
      held_splits_.clear();
      const auto& files = splits_.files();
      for (std::size_t l = 0; l < n; ++l) {
        std::vector<std::string> mine(files.begin() + static_cast<std::ptrdiff_t>(splits_.lane_begin(l)),
                                      files.begin() + static_cast<std::ptrdiff_t>(splits_.lane_end(l)));
        const auto id = static_cast<PartitionId>(l);
        lanes_.push_back(Lane{std::make_unique<LineReader>(std::move(mine), buffer), splits_.lane_begin(l), id});
        held_splits_.push_back(record_split(id));
      }
      lane_ = 0;
      bytes_done_ = 0;
      started_ = true;
      report_bytes();
    }

    // The next line of the lane being read, else of the next lane not finished.
    bool next_line(LineReader::Line& line) {
      for (std::size_t tried = 0; tried < lanes_.size(); ++tried, lane_ = (lane_ + 1) % lanes_.size()) {
        Lane& l = lanes_[lane_];
        if (!l.lines) continue;
        if (l.lines->next(line)) return true;
        bytes_done_ += l.lines->bytes_read();
        l.lines.reset();  // its buffer and file go now
        splits_.finish_lane(lane_);
        held_splits_.erase(std::find(held_splits_.begin(), held_splits_.end(), record_split(l.id)));
      }
      return false;
    }

    // FLIP-33's numBytesIn and pendingBytes: the bytes of its files read, and left.
    void report_bytes() {
      std::int64_t in = bytes_done_, pending = 0;
      for (const Lane& l : lanes_)
        if (l.lines) {
          in += l.lines->bytes_read();
          pending += l.lines->bytes_pending();
        }
      ctx_->metrics().bytes_in.store(in, std::memory_order_relaxed);
      ctx_->metrics().pending_bytes.store(pending, std::memory_order_relaxed);
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
    std::vector<Lane> lanes_;
    std::size_t lane_ = 0;  // the lane being read
    std::vector<std::uint64_t> held_splits_;  // the lanes not finished
    std::int64_t bytes_done_ = 0;             // read by the LineReaders of lanes gone
    bool started_ = false;
    std::string reason_;
    FileSplits splits_;
  };

  std::string path_;
  DecoderFactory decoders_;
  FileSourceOptions options_;
};

}  // namespace clink
