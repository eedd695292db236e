#pragma once
// Runs the real `clink` binary from the source directory (the examples use relative
// paths) and captures its exit code, stdout and stderr.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace clink::test {

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
  std::vector<std::string> lines() const {
    std::vector<std::string> v;
    std::istringstream in(out);
    for (std::string l; std::getline(in, l);) v.push_back(l);
    return v;
  }
  std::vector<std::string> sorted_lines() const {
    auto v = lines();
    std::sort(v.begin(), v.end());
    return v;
  }
};

// `clink <args>`; stdout and stderr pass through files in `scratch`.
inline Result run_clink(const std::string& args, const std::filesystem::path& scratch) {
  auto out = scratch / "stdout", err = scratch / "stderr";
  std::string cmd = std::string("cd '") + CLINK_SOURCE_DIR + "' && '" + CLINK_BINARY + "' " + args + " >'" +
                    out.string() + "' 2>'" + err.string() + "'";
  int status = std::system(cmd.c_str());
  Result r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// A test of the `clink` binary with its own scratch directory (named after the test).
class ClinkCliTest : public ::testing::Test {
 protected:
  explicit ClinkCliTest(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           (prefix_ + std::to_string(::getpid()) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  Result clink(const std::string& args) { return run_clink(args, dir_); }

  std::string prefix_;
  std::filesystem::path dir_;
};

}  // namespace clink::test
