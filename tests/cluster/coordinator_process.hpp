#pragma once
// A real `clink coordinator --rest-port 0` for a test: started as its own process, its
// REST port read from the "rest: http://HOST:PORT" line it prints, stopped with SIGTERM.
// Plus running the `clink` client (or any command) and the REST calls tests make.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "clink/cluster/rest/rest_server.hpp"

namespace clink::test {

namespace fs = std::filesystem;

inline std::string slurp_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `command` (a shell command line) with stdout and stderr captured through files
// in `scratch`.
inline CommandResult run_command(const std::string& command, const fs::path& scratch) {
  auto out = scratch / "cmd.out", err = scratch / "cmd.err";
  std::string cmd = command + " >'" + out.string() + "' 2>'" + err.string() + "'";
  int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp_file(out), slurp_file(err)};
}

// `clink <args>` from the source directory.
inline CommandResult run_clink(const std::string& args, const fs::path& scratch) {
  return run_command(std::string("cd '") + CLINK_SOURCE_DIR + "' && '" + CLINK_BINARY + "' " + args, scratch);
}

// Starts `clink <args>` in the background from the source directory, its output into
// <scratch>/bg.out and bg.err; returns its pid.
inline pid_t spawn_clink(const std::vector<std::string>& args, const fs::path& scratch) {
  std::vector<std::string> argv_s{CLINK_BINARY};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string out = (scratch / "bg.out").string(), err = (scratch / "bg.err").string();
  pid_t pid = ::fork();
  if (pid == 0) {  // only async-signal-safe calls until exec
    if (::chdir(CLINK_SOURCE_DIR) != 0) ::_exit(126);
    int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0 || ::dup2(o, 1) < 0 || ::dup2(e, 2) < 0) ::_exit(126);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

// Waits (at most 60 s, then SIGKILL) for a background process; its exit code, or -1.
inline int wait_exit(pid_t pid) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return -1;
}

// A REST answer: the status and the body parsed (null when it is not JSON).
struct Rest {
  int status = 0;
  nlohmann::ordered_json body;
  std::string error;  // the transport error when status is 0
};

class CoordinatorProcess {
 public:
  // Starts `clink coordinator --rest-port 0 --rpc-port 0 --local-slots 4 <extra>`; its
  // output goes to files in `dir`.
  explicit CoordinatorProcess(const fs::path& dir, const std::vector<std::string>& extra = {}) : dir_(dir) {
    std::vector<std::string> args{CLINK_BINARY, "coordinator"};
    bool has_port = false, has_rpc_port = false, has_slots = false;
    for (const auto& a : extra) {
      has_port |= a == "--config" || a == "--rest-port";
      has_rpc_port |= a == "--rpc-port";
      has_slots |= a == "--local-slots";
    }
    if (!has_port) args.insert(args.end(), {"--rest-port", "0"});
    if (!has_rpc_port) args.insert(args.end(), {"--rpc-port", "0"});
    // Its jobs run on a worker inside it unless the test starts workers of its own.
    if (!has_slots) args.insert(args.end(), {"--local-slots", "4"});
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::string out = (dir / "coordinator.out").string(), err = (dir / "coordinator.err").string();
    pid_ = ::fork();
    if (pid_ == 0) {  // only async-signal-safe calls until exec
      int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (o < 0 || e < 0 || ::dup2(o, 1) < 0 || ::dup2(e, 2) < 0) ::_exit(126);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    // It prints the line once it listens.
    static const std::regex line(R"(rest: http://([^:\s]+):(\d+)\n)");
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      std::smatch m;
      std::string text = slurp_file(out);
      if (std::regex_search(text, m, line)) {
        host_ = m[1];
        port_ = std::stoi(m[2]);
        client_ = std::make_unique<cluster::RestClient>(address());
        return;
      }
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ADD_FAILURE() << "the coordinator did not print its REST address; stderr: " << slurp_file(err);
  }
  ~CoordinatorProcess() { stop(); }
  CoordinatorProcess(const CoordinatorProcess&) = delete;
  CoordinatorProcess& operator=(const CoordinatorProcess&) = delete;

  // SIGTERM, then waits (SIGKILL after 30 s); the exit code, or -1.
  int stop() {
    if (pid_ <= 0) return exit_code_;
    ::kill(pid_, SIGTERM);
    int status = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (::waitpid(pid_, &status, WNOHANG) != pid_) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    pid_ = -1;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return exit_code_;
  }

  bool running() const { return pid_ > 0 && client_ != nullptr; }
  int port() const { return port_; }
  std::string address() const { return host_ + ":" + std::to_string(port_); }
  std::string stderr_text() const { return slurp_file(dir_ / "coordinator.err"); }

  Rest get(const std::string& path) { return parse(client_->get(path)); }
  Rest post(const std::string& path, const std::string& body) { return parse(client_->post(path, body)); }
  Rest patch(const std::string& path) { return parse(client_->patch(path)); }

  // Polls GET /jobs/<id> until its state is `state` (at most `seconds`); the last state.
  std::string wait_for_state(const std::string& job, const std::string& state, int seconds = 30) {
    std::string last;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      last = get("/jobs/" + job).body.value("state", "");
      if (last == state) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return last;
  }

 private:
  static Rest parse(const cluster::RestResponse& r) {
    Rest out;
    out.status = r.status;
    out.error = r.error;
    out.body = nlohmann::ordered_json::parse(r.body, nullptr, /*allow_exceptions=*/false);
    if (out.body.is_discarded()) out.body = nullptr;
    return out;
  }

  fs::path dir_;
  pid_t pid_ = -1;
  int exit_code_ = -1;
  std::string host_;
  int port_ = 0;
  std::unique_ptr<cluster::RestClient> client_;
};

// A scratch directory per test, removed afterwards.
inline fs::path scratch_dir(const std::string& prefix) {
  std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  for (char& c : name)
    if (c == '/') c = '_';
  auto dir = fs::temp_directory_path() / (prefix + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Every line of the committed part files of a file_sink directory (in-progress files are
// hidden), sorted.
inline std::vector<std::string> committed_lines(const fs::path& dir) {
  std::vector<std::string> lines;
  if (!fs::exists(dir)) return lines;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().rfind("part-", 0) != 0) continue;
    std::istringstream in(slurp_file(e.path()));
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

// "(k<i % keys>,<running count>)" for events 0..n-1: what count with emit "every" gives.
inline std::vector<std::string> running_counts(int n, int keys) {
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) v.push_back("(k" + std::to_string(i % keys) + "," + std::to_string(i / keys + 1) + ")");
  std::sort(v.begin(), v.end());
  return v;
}

// datagen events 0..n-1 (4 keys, `rate` rows per second) -> count per key, emit every
// (parallelism 2) -> exactly-once file_sink into <dir>/out/; written to <dir>/job.json.
inline std::string write_counts_spec(const fs::path& dir, int n, int rate) {
  std::string spec = R"({"name": "checkpointed_counts", "config": {"parallelism": 2},
    "ops": [
      {"id": "events", "type": "datagen", "parallelism": 1,
       "params": {"kind": "sequence", "type": "event", "start": 0, "end": )" +
                     std::to_string(n - 1) + R"(, "key_count": 4, "rows_per_second": )" + std::to_string(rate) + R"(}},
      {"id": "count", "type": "count", "params": {"emit": "every"},
       "inputs": [{"from": "events", "partitioning": "hash", "key": "event.key"}]},
      {"id": "sink", "type": "file_sink", "params": {"path": ")" +
                     (dir / "out").string() + R"(/"}, "inputs": [{"from": "count"}]}
    ]})";
  auto p = dir / "job.json";
  std::ofstream(p) << spec;
  return p.string();
}

inline bool is_hex32(const std::string& s) {
  return s.size() == 32 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// A test with its own scratch directory and a coordinator started there on demand.
class CoordinatorTest : public ::testing::Test {
 protected:
  explicit CoordinatorTest(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override { dir_ = scratch_dir(prefix_); }
  void TearDown() override {
    coordinator_.reset();
    fs::remove_all(dir_);
  }
  CoordinatorProcess& start(const std::vector<std::string>& extra = {}) {
    coordinator_ = std::make_unique<CoordinatorProcess>(dir_, extra);
    return *coordinator_;
  }
  CommandResult clink(const std::string& args) { return run_clink(args, dir_); }
  // `clink run <file> --coordinator ...`: exit 0 and one 32-hex job id per line.
  std::vector<std::string> submit(const std::string& file, const std::string& flags = "") {
    auto r = clink("run " + file + " --coordinator " + coordinator_->address() + " " + flags);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> ids;
    std::istringstream in(r.out);
    for (std::string l; std::getline(in, l);) {
      EXPECT_TRUE(is_hex32(l)) << "not a job id: '" << l << "'";
      ids.push_back(l);
    }
    return ids;
  }

  std::string prefix_;
  fs::path dir_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
};

}  // namespace clink::test
