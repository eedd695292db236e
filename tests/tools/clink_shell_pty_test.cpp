// `clink sql` on a pseudo-terminal, as a person uses it: libedit's prompt, a multi-line
// statement, the live result table of a bounded query, Ctrl-C stopping an unbounded query
// and returning to the prompt, the history file, and QUIT.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "clink_runner.hpp"

namespace clink::test {

namespace {

namespace fs = std::filesystem;

class PtyShell {
 public:
  explicit PtyShell(const fs::path& home) {
    winsize ws{};
    ws.ws_row = 40;
    ws.ws_col = 160;
    pid_ = forkpty(&fd_, nullptr, nullptr, &ws);
    if (pid_ == 0) {
      ::setenv("HOME", home.c_str(), 1);
      ::setenv("TERM", "xterm", 1);
      if (::chdir(CLINK_SOURCE_DIR) != 0) _exit(127);
      ::execl(CLINK_BINARY, CLINK_BINARY, "sql", static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~PtyShell() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) ::close(fd_);
  }
  void send(const std::string& s) { ASSERT_EQ(::write(fd_, s.data(), s.size()), static_cast<ssize_t>(s.size())); }
  // Reads until `needle` appears in the output since the last expect (or 20 s pass).
  bool expect(const std::string& needle) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      auto at = pending_.find(needle);
      if (at != std::string::npos) {
        seen_ += pending_.substr(0, at + needle.size());
        pending_.erase(0, at + needle.size());
        return true;
      }
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buf[4096];
      ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n <= 0) break;
      pending_.append(buf, static_cast<std::size_t>(n));
    }
    return false;
  }
  int wait_exit() {
    int status = 0;
    for (int i = 0; i < 200; ++i) {
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      ::usleep(50'000);
    }
    return -2;
  }
  const std::string& seen() const { return seen_; }
  const std::string& pending() const { return pending_; }

 private:
  int fd_ = -1;
  pid_t pid_ = -1;
  std::string pending_, seen_;
};

TEST(ClinkShellPty, LiveTableCtrlCHistoryAndQuit) {
  fs::path home = fs::temp_directory_path() / ("clink_pty_" + std::to_string(::getpid()));
  fs::remove_all(home);
  fs::create_directories(home);
  {
    PtyShell sh(home);
    ASSERT_TRUE(sh.expect("Flink SQL> ")) << sh.pending();
    sh.send("CREATE TABLE Bid (bidtime TIMESTAMP(3), price DECIMAL(10, 2), item STRING, supplier_id STRING)\r");
    ASSERT_TRUE(sh.expect("> ")) << sh.pending();  // the continuation prompt
    sh.send("WITH ('connector' = 'filesystem', 'path' = 'examples/data/bids.json', 'format' = 'json');\r");
    ASSERT_TRUE(sh.expect("[INFO] Execute statement succeeded.")) << sh.pending();
    // A bounded GROUP BY: the live table ends with the materialised result (updates in place).
    sh.send("SELECT supplier_id, COUNT(*) AS bids FROM Bid GROUP BY supplier_id;\r");
    ASSERT_TRUE(sh.expect("[INFO] Query finished.")) << sh.pending();
    std::string out = sh.seen();
    auto last = out.rfind("| supplier_id | bids |");
    ASSERT_NE(last, std::string::npos) << out;
    std::string table = out.substr(last);
    EXPECT_NE(table.find("|   supplier1 |    3 |"), std::string::npos) << table;
    EXPECT_NE(table.find("|   supplier2 |    3 |"), std::string::npos) << table;
    EXPECT_NE(table.find("2 rows (10 changes received)"), std::string::npos) << table;
    // An unbounded query stops with Ctrl-C and the shell prompts again.
    sh.send("CREATE TABLE gen (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '10');\r");
    ASSERT_TRUE(sh.expect("[INFO] Execute statement succeeded.")) << sh.pending();
    sh.send("SELECT n FROM gen;\r");
    ASSERT_TRUE(sh.expect("change")) << sh.pending();
    sh.send("\x03");
    ASSERT_TRUE(sh.expect("[INFO] Query stopped.")) << sh.pending();
    ASSERT_TRUE(sh.expect("Flink SQL> ")) << sh.pending();
    sh.send("quit;\r");
    ASSERT_TRUE(sh.expect("Goodbye!")) << sh.pending();
    EXPECT_EQ(sh.wait_exit(), 0);
  }
  // libedit's history file: a header, then one statement per line with spaces as \040.
  std::string history = slurp(home / ".clink_history");
  EXPECT_EQ(history.rfind("_HiStOrY_V2_\n", 0), 0u) << history;
  EXPECT_NE(history.find("\nSELECT\\040supplier_id,\\040COUNT(*)\\040AS\\040bids\\040FROM\\040Bid\\040GROUP\\040BY"
                         "\\040supplier_id;\n"),
            std::string::npos)
      << history;
  fs::remove_all(home);
}

}  // namespace

}  // namespace clink::test
