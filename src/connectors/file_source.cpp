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

void FileSplits::assign(std::vector<std::string> files) {
  files_ = std::move(files);
  skip_.assign(files_.size(), 0);
  lane_of_.assign(files_.size(), 0);
  lanes_.clear();
  if (!files_.empty()) lanes_.push_back(Lane{0, files_.size(), 0, 0});
}

std::vector<std::string> FileSplits::snapshot(int subtask, const std::vector<std::string>& queued) const {
  std::vector<std::string> out;
  std::size_t named = 0;  // lanes written so far: the next one's name
  auto add = [&](std::int64_t consumed, std::size_t lane, const std::string& path) {
    out.push_back(std::to_string(consumed) + "@" + std::to_string(subtask) + "." + std::to_string(lane) + " " + path);
  };
  for (const Lane& l : lanes_) {
    if (l.current >= l.end) continue;
    for (std::size_t i = l.current; i < l.end; ++i)
      add(i == l.current ? std::max(skip_[i], l.current_lines) : skip_[i], named, files_[i]);
    ++named;
  }
  for (const auto& f : queued) add(0, named, f);
  return out;
}

void FileSplits::restore(const std::vector<std::string>& splits, const char* source) {
  // Grouped by lane, lanes in the order of their first split, files in their order.
  std::vector<std::string> lane_names;
  std::vector<std::vector<std::pair<std::int64_t, std::string>>> by_lane;
  for (const auto& text : splits) {
    auto space = text.find(' ');
    auto at = text.find('@');
    if (at > space) at = space;
    std::int64_t consumed = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + (space == std::string::npos ? 0 : at), consumed);
    if (space == std::string::npos || ec != std::errc() || p != text.data() + at || consumed < 0)
      throw ClinkError(std::string(source) + ": malformed split '" + text + "' in the restored checkpoint");
    std::string lane = text.substr(at, space - at);
    auto it = std::find(lane_names.begin(), lane_names.end(), lane);
    if (it == lane_names.end()) {
      lane_names.push_back(lane);
      by_lane.emplace_back();
      it = lane_names.end() - 1;
    }
    by_lane[static_cast<std::size_t>(it - lane_names.begin())].emplace_back(consumed, text.substr(space + 1));
  }
  files_.clear();
  skip_.clear();
  lane_of_.clear();
  lanes_.clear();
  for (auto& lane : by_lane) {
    Lane l{files_.size(), files_.size() + lane.size(), files_.size(), 0};
    for (auto& [consumed, path] : lane) {
      files_.push_back(std::move(path));
      skip_.push_back(consumed);
      lane_of_.push_back(static_cast<std::uint32_t>(lanes_.size()));
    }
    lanes_.push_back(l);
  }
}

}  // namespace clink
