#pragma once
// tests/ml/model_server.py (scikit-learn models trained at start, served on loopback) as
// a child process of a test: started on a port of the ML tests' range (18600-18699), or
// on one the system picks (port 0: a suite whose tests ctest runs side by side), killed
// with SIGKILL and started again on the same port.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace clink::test {

// The Python of the test venv (tests/flink/setup: CLINK_FLINK_VENV, by default
// ~/.cache/clink/flink-venv), which has scikit-learn.
inline std::string venv_python() {
  const char* venv = std::getenv("CLINK_FLINK_VENV");
  const char* home = std::getenv("HOME");
  std::filesystem::path root = venv ? venv : std::filesystem::path(home ? home : "/root") / ".cache/clink/flink-venv";
  return (root / "bin/python").string();
}

inline std::string model_server_script() { return std::string(CLINK_SOURCE_DIR) + "/tests/ml/model_server.py"; }

class ModelServer {
 public:
  ModelServer(int port, std::filesystem::path dir) : port_(port), dir_(std::move(dir)) { start(); }
  ~ModelServer() { kill(); }
  ModelServer(const ModelServer&) = delete;
  ModelServer& operator=(const ModelServer&) = delete;

  int port() const { return port_; }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }

  void start() {
    const std::string out = (dir_ / ("server-" + std::to_string(port_) + "-" + std::to_string(::getpid()) + ".out")).string();
    std::filesystem::remove(out);
    const std::string py = venv_python(), script = model_server_script(), port = std::to_string(port_);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // no server outlives a killed test
      std::freopen(out.c_str(), "w", stdout);
      ::execl(py.c_str(), py.c_str(), script.c_str(), "--port", port.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    // Training and imports take a few seconds (more on a loaded machine).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(3);
    while (std::chrono::steady_clock::now() < deadline) {
      std::ifstream in(out);
      std::string word;
      int bound = 0;
      if (in >> word && word == "ready" && in >> bound) {
        port_ = bound;  // the system's pick for port 0; a restart binds it again
        return;
      }
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        FAIL() << "the model server exited (port " << port_ << " taken, or no scikit-learn in " << venv_python() << ")";
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL() << "the model server did not start";
  }

  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

 private:
  int port_;
  std::filesystem::path dir_;
  pid_t pid_ = -1;
};

// The model's own answers for `rows` (JSON lines), computed by model_server.py --expect.
inline std::vector<std::string> model_expect(const std::filesystem::path& dir, const std::vector<std::string>& rows,
                                             const std::string& task = "predict") {
  const auto in = dir / "expect.in", out = dir / "expect.out";
  {
    std::ofstream f(in);
    for (const auto& r : rows) f << r << "\n";
  }
  const std::string cmd = "'" + venv_python() + "' '" + model_server_script() + "' --expect '" + in.string() +
                          "' --task " + task + " > '" + out.string() + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::vector<std::string> lines;
  std::ifstream f(out);
  for (std::string l; std::getline(f, l);) lines.push_back(l);
  return lines;
}

}  // namespace clink::test
