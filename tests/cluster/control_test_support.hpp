#pragma once
// What tests/cluster/test_control.cpp's servers and clients report (their callbacks
// record each call), and this test binary run again as a child process.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "../support/temp_dir.hpp"
#include "cluster/control/control_client.hpp"
#include "cluster/control/control_server.hpp"

extern char** environ;

namespace clink::test {

namespace proto = cluster::proto;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// What a ControlServer reported, in order, with the time of each report.
struct ServerLog {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<proto::Register> registered;
  std::vector<std::pair<std::string, proto::WorkerMessage>> messages;  // without heartbeats
  std::map<std::string, int> heartbeats;
  std::vector<std::string> heartbeat_metrics;
  std::vector<std::pair<std::string, std::string>> lost;  // worker id, reason
  Clock::time_point lost_at;

  cluster::ControlServerCallbacks callbacks() {
    return {
        .on_registered =
            [this](const proto::Register& r) {
              std::lock_guard lock(mu);
              registered.push_back(r);
              cv.notify_all();
            },
        .on_message =
            [this](const std::string& id, const proto::WorkerMessage& m) {
              std::lock_guard lock(mu);
              if (m.has_heartbeat()) {
                ++heartbeats[id];
                heartbeat_metrics.push_back(m.heartbeat().metrics_json());
              } else {
                messages.emplace_back(id, m);
              }
              cv.notify_all();
            },
        .on_lost =
            [this](const std::string& id, const std::string& reason) {
              std::lock_guard lock(mu);
              lost.emplace_back(id, reason);
              lost_at = Clock::now();
              cv.notify_all();
            },
    };
  }
  bool wait(const std::function<bool()>& done, std::chrono::milliseconds timeout = 10s) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, timeout, done);
  }
};

// What a ControlClient reported.
struct ClientLog {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<std::string, proto::Registered>> connected;  // target, answer
  std::vector<proto::CoordinatorMessage> messages;
  std::vector<std::string> disconnected;

  cluster::ControlClientCallbacks callbacks(std::string metrics = "") {
    return {
        .on_connected =
            [this](const std::string& target, const proto::Registered& r) {
              std::lock_guard lock(mu);
              connected.emplace_back(target, r);
              cv.notify_all();
            },
        .on_message =
            [this](const proto::CoordinatorMessage& m) {
              std::lock_guard lock(mu);
              messages.push_back(m);
              cv.notify_all();
            },
        .on_disconnected =
            [this](const std::string& reason) {
              std::lock_guard lock(mu);
              disconnected.push_back(reason);
              cv.notify_all();
            },
        .metrics_json = [metrics] { return metrics; },
    };
  }
  bool wait(const std::function<bool()>& done, std::chrono::milliseconds timeout = 10s) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, timeout, done);
  }
};

// This binary run again as a child process, in the mode `test` (ControlChild.DISABLED_*)
// with `env` added; its output goes to <dir>/child.out. Killed at the end.
class ChildProcess {
 public:
  ChildProcess(const std::string& test, const std::vector<std::string>& env_add, const TempDir& dir) {
    std::vector<std::string> args{"/proc/self/exe", "--gtest_filter=ControlChild.DISABLED_" + test,
                                  "--gtest_also_run_disabled_tests"};
    std::vector<std::string> env = env_add;
    for (char** e = environ; *e; ++e) env.emplace_back(*e);
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    int out = ::open(dir.file("child.out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_ = ::fork();
    if (pid_ == 0) {  // only async-signal-safe calls until exec (the parent has threads)
      if (out < 0 || ::dup2(out, 1) < 0 || ::dup2(out, 2) < 0) ::_exit(126);
      ::execve(argv[0], argv.data(), envp.data());
      ::_exit(127);
    }
    ::close(out);
  }
  ~ChildProcess() {
    if (!reaped_) {
      signal(SIGKILL);
      reap();
    }
  }
  void signal(int sig) { ::kill(pid_, sig); }
  void reap() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
  }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
};

}  // namespace clink::test
