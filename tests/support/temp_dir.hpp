#pragma once
// A fresh directory under the system temp directory, removed with everything in it: the
// one scratch directory of all test areas (`path`, plus helpers for files in it).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

namespace clink::test {

struct TempDir {
  std::filesystem::path path;

  explicit TempDir(const std::string& prefix = "clink-test") {
    static std::atomic<int> counter{0};
    path = std::filesystem::temp_directory_path() /
           (prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1)));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (path / name).string(); }
  // Writes `content` byte for byte to `name` (creating directories) and returns its path.
  std::string write(const std::string& name, const std::string& content) const {
    std::filesystem::path p = path / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }
  // Names of all entries below the directory, relative, sorted (hidden ones included).
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::recursive_directory_iterator(path))
      names.push_back(std::filesystem::relative(e.path(), path).string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

}  // namespace clink::test
