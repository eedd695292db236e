#pragma once
#include <cstdio>
#include <string>

#include "clink/api/sink.hpp"
#include "clink/core/format_value.hpp"

namespace clink {

enum class PrintTarget { kStdout, kStderr };

// Writes each record's text form on its own line; at parallelism > 1 each line is
// prefixed with the 1-based subtask number, "2> ", as Flink's print() does.
template <class T>
class PrintSink final : public Sink<T> {
 public:
  explicit PrintSink(PrintTarget target = PrintTarget::kStdout, std::string prefix = {})
      : target_(target), prefix_(std::move(prefix)) {}
  std::string factory_name() const override { return "print"; }
  std::unique_ptr<SinkWriter<T>> create_writer(int subtask, int parallelism) const override {
    std::string prefix = prefix_;
    if (parallelism > 1) prefix += (prefix.empty() ? "" : ":") + std::to_string(subtask + 1) + "> ";
    else if (!prefix.empty()) prefix += "> ";
    return std::make_unique<Writer>(target_ == PrintTarget::kStdout ? stdout : stderr, std::move(prefix));
  }

 private:
  class Writer final : public SinkWriter<T> {
   public:
    Writer(std::FILE* f, std::string prefix) : f_(f), prefix_(std::move(prefix)) {}
    void write(const Batch<T>& batch) override {
      buf_.clear();
      for (const auto& r : batch.records) {
        buf_ += prefix_;
        format_value(r.value, buf_);
        buf_.push_back('\n');
      }
      std::fwrite(buf_.data(), 1, buf_.size(), f_);  // one write per batch keeps lines whole
    }
    void finish() override { std::fflush(f_); }

   private:
    std::FILE* f_;
    std::string prefix_;
    std::string buf_;
  };
  PrintTarget target_;
  std::string prefix_;
};

}  // namespace clink
