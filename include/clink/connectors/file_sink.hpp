#pragma once
// Writes one line per record, as text (the record's text form) or JSON lines. At
// parallelism 1 it writes the file named by `path`; otherwise (or when `path` ends in
// '/' or is a directory) each subtask writes "part-<subtask>-0.<ext>" in that
// directory. Files appear atomically when the input ends (see StagedFile).
#include <memory>
#include <optional>
#include <string>

#include "clink/api/sink.hpp"
#include "clink/connectors/staged_file.hpp"
#include "clink/formats/line_encoder.hpp"

namespace clink {

template <class T>
class FileSink final : public Sink<T> {
 public:
  // Throws ClinkError if T has no encoding in `format`.
  explicit FileSink(std::string path, LineFormat format = LineFormat::kText)
      : path_(std::move(path)), encoder_(format) {}

  std::unique_ptr<SinkWriter<T>> create_writer(int subtask, int parallelism) const override {
    return std::make_unique<Writer>(file_sink_target(path_, subtask, parallelism, line_format_extension(encoder_.format())),
                                    encoder_);
  }
  std::string factory_name() const override { return "file_sink"; }
  const std::string& path() const { return path_; }

 private:
  class Writer final : public SinkWriter<T> {
   public:
    Writer(std::string target, LineEncoder<T> encoder) : target_(std::move(target)), encoder_(encoder) {}
    void open(RuntimeContext&) override { file_.emplace(target_); }
    void write(const Batch<T>& batch) override {
      for (const auto& r : batch.records) encoder_.encode(r.value, buf_);
      if (buf_.size() >= kFlushBytes) flush();
    }
    void finish() override {
      flush();
      file_->commit();
    }
    void close() override { file_.reset(); }  // aborts unless finish() committed

   private:
    static constexpr std::size_t kFlushBytes = std::size_t{1} << 20;
    void flush() {
      file_->append(buf_);
      buf_.clear();
    }
    std::string target_;
    LineEncoder<T> encoder_;
    std::optional<StagedFile> file_;
    std::string buf_;
  };

  std::string path_;
  LineEncoder<T> encoder_;
};

}  // namespace clink
