#pragma once
// Reads files line by line with large reads into one reused buffer. Lines are handed
// out as views into that buffer (no allocation per line), with readable padding after
// them so a JSON parser can work on them in place.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace clink {

class LineReader {
 public:
  struct Line {
    std::string_view text;     // without "\n" or "\r\n"; valid until the next call
    std::size_t readable = 0;  // bytes readable from text.data(): >= text.size() + kJsonPadding
    std::int64_t number = 0;   // 1-based line number in the current file
  };

  // Reads `files` one after the other. `buffer_bytes` is the size of each read; the
  // buffer grows if a single line is longer.
  explicit LineReader(std::vector<std::string> files, std::size_t buffer_bytes = std::size_t{1} << 20);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line; false once every file is read. A last line without "\n" is a line;
  // a file's final "\n" does not start another one. Throws ClinkError naming the file
  // if it cannot be opened or read.
  bool next(Line& line);
  // The file the last line came from.
  const std::string& current_file() const;
  // Its index in `files` (0 before the first line).
  std::size_t current_file_index() const { return file_index_ == 0 ? 0 : file_index_ - 1; }
  // The sources' backlog metrics: the bytes of the lines handed out so far (each with its
  // line break), and the size of all `files` when this reader was made (a file that
  // cannot be read counts 0).
  std::int64_t bytes_read() const { return bytes_read_; }
  std::int64_t bytes_total() const { return bytes_total_; }
  // What is left: bytes_total() - bytes_read(), never below 0 (a file may have grown).
  std::int64_t bytes_pending() const { return std::max<std::int64_t>(0, bytes_total_ - bytes_read_); }

 private:
  bool open_next_file();
  void close_file();
  void fill();

  std::vector<std::string> files_;
  std::size_t file_index_ = 0;  // index of the next file to open
  int fd_ = -1;
  bool eof_ = false;
  std::unique_ptr<char[]> buf_;
  std::size_t cap_;  // usable bytes; kJsonPadding more are allocated
  std::size_t pos_ = 0, scan_ = 0, end_ = 0;  // next line start, newline search start, data end
  std::int64_t line_number_ = 0;
  std::int64_t bytes_read_ = 0, bytes_total_ = 0;
};

}  // namespace clink
