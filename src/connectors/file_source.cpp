#include "clink/connectors/file_source.hpp"

#include <algorithm>
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

}  // namespace clink
