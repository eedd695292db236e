#pragma once
// The real `clink` binary as a background process: started, waited for, killed.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace clink::test {

class ClinkProcess {
 public:
  // `clink <args>`, stdout to <dir>/run.out (truncated), stderr appended to <dir>/run.err.
  ClinkProcess(const std::vector<std::string>& args, const std::filesystem::path& dir) : dir_(dir) {
    std::vector<std::string> argv_s{CLINK_BINARY};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::string out = (dir / "run.out").string(), err = (dir / "run.err").string();
    pid_ = ::fork();
    if (pid_ == 0) {  // only async-signal-safe calls until exec
      int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (o < 0 || e < 0 || ::dup2(o, 1) < 0 || ::dup2(e, 2) < 0) ::_exit(126);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }
  ~ClinkProcess() {
    if (!exited_) kill(SIGKILL);
  }
  ClinkProcess(const ClinkProcess&) = delete;
  ClinkProcess& operator=(const ClinkProcess&) = delete;

  // Waits up to `ms`: the exit code (-1: killed by a signal), or nullopt while it runs.
  std::optional<int> wait_for(int ms) {
    if (exited_) return code_;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    int status = 0;
    do {
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        return code_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    } while (std::chrono::steady_clock::now() < deadline);
    return std::nullopt;
  }
  // Sends `signal`; SIGKILL also waits for the process to be gone.
  void kill(int signal) {
    if (exited_) return;
    ::kill(pid_, signal);
    if (signal == SIGKILL) {
      int status = 0;
      ::waitpid(pid_, &status, 0);
      exited_ = true;
      code_ = -1;
    }
  }
  std::string out() const { return slurp(dir_ / "run.out"); }
  std::string err() const { return slurp(dir_ / "run.err"); }
  // Waits up to `ms` until stdout holds `text`.
  bool wait_for_output(const std::string& text, int ms) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < deadline) {
      if (out().find(text) != std::string::npos) return true;
      if (wait_for(0)) return out().find(text) != std::string::npos;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

 private:
  static std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::filesystem::path dir_;
  pid_t pid_ = -1;
  bool exited_ = false;
  int code_ = -1;
};

}  // namespace clink::test
