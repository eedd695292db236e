#pragma once
// Runs the real `clink` binary from the source directory (the examples use relative
// paths) and captures its exit code, stdout and stderr.
#include <sys/wait.h>

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

}  // namespace clink::test
