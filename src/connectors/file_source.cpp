#include "clink/connectors/file_source.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>

namespace clink {

namespace fs = std::filesystem;

namespace {
bool hidden(const fs::path& p) {
  auto name = p.filename().native();
  return !name.empty() && (name[0] == '.' || name[0] == '_');
}
}  // namespace

std::vector<std::string> list_input_files(const std::string& path) {
  std::error_code ec;
  auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) throw ClinkError("file source: no such file or directory: " + path);
  if (fs::is_regular_file(status)) return {path};
  if (!fs::is_directory(status)) throw ClinkError("file source: not a file or directory: " + path);

  std::vector<std::string> files;
  fs::recursive_directory_iterator it(path, fs::directory_options::follow_directory_symlink, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    if (hidden(it->path())) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec)) files.push_back(it->path().string());
  }
  if (ec) throw ClinkError("file source: cannot list " + path + ": " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> files_for_subtask(const std::vector<std::string>& files, int subtask, int parallelism) {
  std::vector<std::string> mine;
  for (std::size_t i = static_cast<std::size_t>(subtask); i < files.size(); i += static_cast<std::size_t>(parallelism))
    mine.push_back(files[i]);
  return mine;
}

std::string malformed_line_message(const char* format_label, const std::string& file, std::int64_t line,
                                   const std::string& reason) {
  return "malformed " + std::string(format_label) + " in " + file + " line " + std::to_string(line) + ": " + reason;
}

std::vector<std::string> FileSplits::snapshot() const {
  std::vector<std::string> out;
  for (std::size_t i = current_; i < files_.size(); ++i) {
    std::int64_t consumed = i == current_ ? std::max(skip_[i], current_lines_) : skip_[i];
    out.push_back(std::to_string(consumed) + " " + files_[i]);
  }
  return out;
}

void FileSplits::restore(const std::vector<std::string>& splits, const char* source) {
  std::vector<std::string> files;
  std::vector<std::int64_t> skip;
  for (const auto& text : splits) {
    auto space = text.find(' ');
    std::int64_t consumed = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + (space == std::string::npos ? 0 : space), consumed);
    if (space == std::string::npos || ec != std::errc() || p != text.data() + space || consumed < 0)
      throw ClinkError(std::string(source) + ": malformed split '" + text + "' in the restored checkpoint");
    files.push_back(text.substr(space + 1));
    skip.push_back(consumed);
  }
  files_ = std::move(files);
  skip_ = std::move(skip);
  current_ = 0;
  current_lines_ = 0;
}

}  // namespace clink
