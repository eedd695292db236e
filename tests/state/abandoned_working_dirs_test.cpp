// Working directories of killed runs (issue 16, item 8): a RocksDB backend's database and
// a task group's scratch directory each have a lock file beside them, flock()ed while in
// use. A process killed with SIGKILL leaves the directory but not the lock; the next
// backend created beside it removes it. Live directories (locked, in this process or
// another) and directories clink did not make (no lock file) stay.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>

#include "clink/core/owned_directory.hpp"
#include "state_test_util.hpp"

namespace clink::test {
namespace {

// A child process that takes the directory's lock as clink does, creates `dir` with a
// file in it, and is SIGKILLed holding the lock: what a killed run leaves (glibc's
// malloc is usable after fork; the child does nothing else).
void leave_behind_by_a_killed_process(const fs::path& dir) {
  const std::string file = (dir / "000001.sst").string();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    OwnedDirectory owned(dir);
    if (::mkdir(dir.c_str(), 0700) != 0) ::_exit(1);
    int f = ::open(file.c_str(), O_WRONLY | O_CREAT, 0600);
    if (f < 0 || ::write(f, "sst", 3) != 3) ::_exit(1);
    ::kill(::getpid(), SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

TEST(AbandonedWorkingDirectories, ANewRocksDbBackendRemovesTheDatabasesOfKilledProcesses) {
  BackendMaker maker;
  maker.kind = "rocksdb";
  const fs::path base = maker.work.path / "work";
  fs::create_directories(base);
  leave_behind_by_a_killed_process(base / "op-0-0123456789ab");
  fs::create_directories(base / "op-0-0123456789ab-chk-7");  // its checkpoint staging directory
  ASSERT_TRUE(fs::exists(base / "op-0-0123456789ab" / "000001.sst"));
  fs::create_directories(base / "notes");  // not clink's: no lock file

  auto first = maker.make({0, 127});  // a live one in this process
  EXPECT_FALSE(fs::exists(base / "op-0-0123456789ab"));
  EXPECT_FALSE(fs::exists(base / "op-0-0123456789ab-chk-7"));
  EXPECT_FALSE(fs::exists(base / "op-0-0123456789ab.clink-lock"));
  EXPECT_TRUE(fs::exists(base / "notes"));

  // A second backend beside a live one leaves it alone.
  auto second = maker.make({0, 127}, kDefaultMaxParallelism, 1);
  int databases = 0, locks = 0;
  for (const auto& e : fs::directory_iterator(base)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("op-") && e.is_directory()) ++databases;
    if (name.ends_with(".clink-lock")) ++locks;
  }
  EXPECT_EQ(databases, 2);
  EXPECT_EQ(locks, 2);
  // Closed backends take their directory and lock file with them.
  first.reset();
  second.reset();
  for (const auto& e : fs::directory_iterator(base)) EXPECT_EQ(e.path().filename(), "notes");
}

TEST(AbandonedWorkingDirectories, OnlyUnlockedDirectoriesWithThePrefixAreRemoved) {
  TempDir dir;
  leave_behind_by_a_killed_process(dir.path / "clink-state-1-0");
  leave_behind_by_a_killed_process(dir.path / "other-1-0");
  fs::create_directories(dir.path / "clink-state-2-0");
  OwnedDirectory live(dir.path / "clink-state-2-0");
  auto removed = remove_abandoned_directories(dir.path, "clink-state-");
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(removed[0], dir.path / "clink-state-1-0");
  EXPECT_FALSE(fs::exists(dir.path / "clink-state-1-0.clink-lock"));
  EXPECT_TRUE(fs::exists(dir.path / "clink-state-2-0"));
  EXPECT_TRUE(fs::exists(dir.path / "clink-state-2-0.clink-lock"));
  EXPECT_TRUE(fs::exists(dir.path / "other-1-0"));
  // A user's directory beside a lock file of its own (not clink's) is never touched.
  fs::create_directories(dir.path / "clink-state-mine");
  std::ofstream(dir.path / "clink-state-mine.clink-lock") << "mine\n";
  EXPECT_TRUE(remove_abandoned_directories(dir.path, "clink-state-").empty());
  EXPECT_TRUE(fs::exists(dir.path / "clink-state-mine"));
}

}  // namespace
}  // namespace clink::test
