// Cluster high availability (src/cluster/ha) against a real ZooKeeper server: the
// `zookeeper` ctest fixture starts one (scripts/zookeeper) and passes its address in
// CLINK_ZOOKEEPER_QUORUM. The stores' tests run on ZooKeeper and on both standalone
// backends (memory, directory). Crashes and pauses of a leader are real: the leader runs
// in a child process (this binary, re-executed in contender mode) that is killed with
// SIGKILL or frozen with SIGSTOP.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADED
#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <iostream>
#include <mutex>
#include <thread>

#include "clink/cluster/config/cluster_config.hpp"
#include "clink/cluster/ha/ha_services.hpp"

extern char** environ;

namespace clink::test {

using namespace clink::cluster;

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Short, so that a crashed leader is replaced quickly; CLINK_HA_TEST_SESSION_TIMEOUT_MS
// overrides it to measure failover at other settings.
const std::chrono::milliseconds kSessionTimeout{
    std::getenv("CLINK_HA_TEST_SESSION_TIMEOUT_MS") ? std::atoi(std::getenv("CLINK_HA_TEST_SESSION_TIMEOUT_MS")) : 1000};

std::string zookeeper_quorum() {
  const char* q = std::getenv("CLINK_ZOOKEEPER_QUORUM");
  if (!q || !*q)
    throw std::runtime_error(
        "CLINK_ZOOKEEPER_QUORUM is not set: run the HA tests through ctest (it starts a ZooKeeper server), or run "
        "`scripts/zookeeper start` and export CLINK_ZOOKEEPER_QUORUM=$(scripts/zookeeper url)");
  return q;
}

// A cluster id no other test (or earlier run against the same server) uses.
std::string unique_cluster_id(const std::string& base) {
  static std::atomic<int> n{0};
  return "/" + base + "-" + std::to_string(::getpid()) + "-" + std::to_string(n++) + "-" +
         std::to_string(Clock::now().time_since_epoch().count() % 1000000);
}

std::filesystem::path fresh_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("clink-ha-test-" + std::to_string(::getpid())) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Removes this process's temp dirs when the tests are done.
class TempDirCleanup : public testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(std::filesystem::temp_directory_path() / ("clink-ha-test-" + std::to_string(::getpid())), ec);
  }
};
[[maybe_unused]] testing::Environment* const kTempDirCleanup = testing::AddGlobalTestEnvironment(new TempDirCleanup);

// The HA settings a config.yaml with these keys gives.
HaConfig ha_config(const std::map<std::string, std::string>& keys) {
  ClusterConfig config;
  for (auto& [k, v] : keys) config.set(k, v);
  return HaConfig::from(config);
}

HaConfig zookeeper_config(const std::string& cluster_id, const std::filesystem::path& storage) {
  return ha_config({{"high-availability.type", "zookeeper"},
                    {"high-availability.zookeeper.quorum", zookeeper_quorum()},
                    {"high-availability.cluster-id", cluster_id},
                    {"high-availability.storageDir", "file://" + storage.string()},
                    {"high-availability.zookeeper.client.session-timeout", std::to_string(kSessionTimeout.count())}});
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Waits until `cond` holds (polling), up to `timeout`.
template <typename F>
bool eventually(F cond, std::chrono::milliseconds timeout = 10s) {
  auto deadline = Clock::now() + timeout;
  while (!cond()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

void lead(HaServices& ha, const std::string& address) {
  ha.leader_election().run(address, nullptr, nullptr);
  ASSERT_TRUE(eventually([&] { return ha.leader_election().has_leadership(); })) << address << " was never granted";
}

size_t regular_files_under(const std::filesystem::path& dir, const std::string& part) {
  size_t n = 0;
  if (!std::filesystem::exists(dir)) return 0;
  for (auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().string().find(part) != std::string::npos) ++n;
  return n;
}

// ---------------------------------------------------------------- the stores, 3 ways

enum class Kind { ZooKeeper, StandaloneMemory, StandaloneDirectory };

std::string kind_text(Kind kind) {
  switch (kind) {
    case Kind::ZooKeeper: return "ZooKeeper";
    case Kind::StandaloneMemory: return "StandaloneMemory";
    case Kind::StandaloneDirectory: return "StandaloneDirectory";
  }
  return "?";
}
std::string kind_name(const testing::TestParamInfo<Kind>& info) { return kind_text(info.param); }
void PrintTo(Kind kind, std::ostream* os) { *os << kind_text(kind); }

class HaStoreTest : public testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    cluster_id_ = unique_cluster_id("stores");
    storage_ = fresh_dir(cluster_id_.substr(1));
  }
  HaConfig config() const {
    if (GetParam() == Kind::ZooKeeper) return zookeeper_config(cluster_id_, storage_);
    HaConfig c;
    if (GetParam() == Kind::StandaloneDirectory) c.storage_dir = storage_.string();
    return c;
  }
  std::unique_ptr<HaServices> open() { return make_ha_services(config()); }
  bool persistent() const { return GetParam() != Kind::StandaloneMemory; }

  std::string cluster_id_;
  std::filesystem::path storage_;
};

TEST_P(HaStoreTest, JobGraphsRoundTripAndSurviveANewClient) {
  const std::string small = R"({"job":"small"})";
  const std::string large(5000, 'x');  // above the inline limit: a file in storageDir
  {
    auto ha = open();
    lead(*ha, "coordinator-1");
    ha->job_graphs().put("00000000000000000000000000000002", large);
    ha->job_graphs().put("00000000000000000000000000000001", small);
    EXPECT_EQ(ha->job_graphs().job_ids(),
              (std::vector<std::string>{"00000000000000000000000000000001", "00000000000000000000000000000002"}));
    EXPECT_EQ(ha->job_graphs().get("00000000000000000000000000000001"), small);
    EXPECT_EQ(ha->job_graphs().get("00000000000000000000000000000002"), large);
    EXPECT_EQ(ha->job_graphs().get("00000000000000000000000000000003"), std::nullopt);
    if (persistent()) {
      EXPECT_EQ(regular_files_under(storage_, "execution-plans"), 1u);
    }
  }
  if (!persistent()) return;
  auto ha = open();  // a new client: another session, no leadership
  EXPECT_EQ(ha->job_graphs().job_ids(),
            (std::vector<std::string>{"00000000000000000000000000000001", "00000000000000000000000000000002"}));
  EXPECT_EQ(ha->job_graphs().get("00000000000000000000000000000001"), small);
  EXPECT_EQ(ha->job_graphs().get("00000000000000000000000000000002"), large);
  lead(*ha, "coordinator-2");
  // Replacing a large blob drops the old file; removing drops the last.
  ha->job_graphs().put("00000000000000000000000000000002", std::string(6000, 'y'));
  EXPECT_EQ(ha->job_graphs().get("00000000000000000000000000000002"), std::string(6000, 'y'));
  EXPECT_EQ(regular_files_under(storage_, "execution-plans"), 1u);
  EXPECT_TRUE(ha->job_graphs().remove("00000000000000000000000000000002"));
  EXPECT_FALSE(ha->job_graphs().remove("00000000000000000000000000000002"));
  EXPECT_EQ(regular_files_under(storage_, "execution-plans"), 0u);
  EXPECT_EQ(ha->job_graphs().job_ids(), (std::vector<std::string>{"00000000000000000000000000000001"}));
  ha->cleanup_all_data();
  EXPECT_EQ(ha->job_graphs().job_ids(), std::vector<std::string>{});
}

TEST_P(HaStoreTest, CheckpointPointersKeepTheLatestAndTheCounter) {
  const std::string job = "a1b2c3d4e5f60718293a4b5c6d7e8f90";
  {
    auto ha = open();
    auto& cp = ha->checkpoints();
    EXPECT_EQ(cp.latest(job), std::nullopt);
    EXPECT_EQ(cp.next_checkpoint_id(job), 1);
    lead(*ha, "coordinator-1");
    EXPECT_EQ(cp.get_and_increment(job), 1);
    EXPECT_EQ(cp.get_and_increment(job), 2);
    EXPECT_EQ(cp.get_and_increment(job), 3);
    EXPECT_EQ(cp.next_checkpoint_id(job), 4);
    cp.add_completed(job, {1, "/ckpt/" + job + "/chk-1"});
    cp.add_completed(job, {3, "/ckpt/" + job + "/chk-3"});
    EXPECT_EQ(cp.latest(job), (CompletedCheckpointPointer{3, "/ckpt/" + job + "/chk-3"}));
    try {
      cp.add_completed(job, {2, "/ckpt/" + job + "/chk-2"});
      ADD_FAILURE() << "an older checkpoint replaced a newer one";
    } catch (const ClinkError& e) {
      EXPECT_NE(std::string(e.what()).find("already has checkpoint 0000000000000000003"), std::string::npos) << e.what();
    }
    cp.set_next_checkpoint_id(job, 10);
    cp.add_completed("other-job", {7, "/ckpt/other/chk-7"});
  }
  if (!persistent()) return;
  auto ha = open();  // what a new leader reads to resume
  auto& cp = ha->checkpoints();
  EXPECT_EQ(cp.latest(job), (CompletedCheckpointPointer{3, "/ckpt/" + job + "/chk-3"}));
  EXPECT_EQ(cp.next_checkpoint_id(job), 10);
  EXPECT_EQ(cp.latest("other-job"), (CompletedCheckpointPointer{7, "/ckpt/other/chk-7"}));
  lead(*ha, "coordinator-2");
  EXPECT_EQ(cp.get_and_increment(job), 10);
  cp.remove_job(job);
  EXPECT_EQ(cp.latest(job), std::nullopt);
  EXPECT_EQ(cp.next_checkpoint_id(job), 1);
  EXPECT_EQ(cp.latest("other-job"), (CompletedCheckpointPointer{7, "/ckpt/other/chk-7"}));
}

TEST_P(HaStoreTest, CatalogRoundTripsAnyName) {
  const std::string ddl = "CREATE TABLE orders (id BIGINT) WITH ('connector' = 'datagen')";
  const std::string big_ddl = "CREATE TABLE wide (" + std::string(3000, 'c') + " INT)";
  {
    auto ha = open();
    lead(*ha, "coordinator-1");
    ha->catalog().put("default_catalog.default_database.orders", ddl);
    ha->catalog().put("odd/name with %2F and spaces", big_ddl);
    ha->catalog().put("..", "dots");
    EXPECT_EQ(ha->catalog().names(), (std::vector<std::string>{"..", "default_catalog.default_database.orders",
                                                               "odd/name with %2F and spaces"}));
  }
  if (!persistent()) return;
  auto ha = open();
  EXPECT_EQ(ha->catalog().get("default_catalog.default_database.orders"), ddl);
  EXPECT_EQ(ha->catalog().get("odd/name with %2F and spaces"), big_ddl);
  EXPECT_EQ(ha->catalog().get(".."), "dots");
  lead(*ha, "coordinator-2");
  EXPECT_TRUE(ha->catalog().remove("odd/name with %2F and spaces"));
  EXPECT_EQ(ha->catalog().names(), (std::vector<std::string>{"..", "default_catalog.default_database.orders"}));
}

TEST_P(HaStoreTest, OnlyTheLeaderWrites) {
  auto ha = open();
  EXPECT_THROW(ha->job_graphs().put("j", "x"), NotLeaderError);
  EXPECT_THROW(ha->checkpoints().add_completed("j", {1, "/p"}), NotLeaderError);
  EXPECT_THROW(ha->checkpoints().get_and_increment("j"), NotLeaderError);
  EXPECT_THROW(ha->catalog().put("t", "x"), NotLeaderError);
  EXPECT_EQ(ha->job_graphs().get("j"), std::nullopt);  // reads need no leadership
  lead(*ha, "coordinator-1");
  ha->job_graphs().put("j", "x");
  ha->leader_election().stop();  // resigned: writes refused again
  EXPECT_FALSE(ha->leader_election().has_leadership());
  EXPECT_THROW(ha->job_graphs().put("j", "y"), NotLeaderError);
  EXPECT_EQ(ha->job_graphs().get("j"), "x");
}

INSTANTIATE_TEST_SUITE_P(AllBackends, HaStoreTest,
                         testing::Values(Kind::ZooKeeper, Kind::StandaloneMemory, Kind::StandaloneDirectory), kind_name);

// ---------------------------------------------------------------- configuration

TEST(HaConfigTest, ReadsFlinksKeys) {
  auto c = ha_config({});
  EXPECT_EQ(c.type, HaType::None);
  EXPECT_EQ(c.cluster_path(), "/clink/default");
  EXPECT_EQ(c.session_timeout, 60000ms);
  c = ha_config({{"high-availability.type", "ZOOKEEPER"},
                 {"high-availability.zookeeper.quorum", "zk1:2181,zk2:2181"},
                 {"high-availability.zookeeper.path.root", "flink/"},
                 {"high-availability.cluster-id", "cluster_one"},
                 {"high-availability.storageDir", "file:///var/ha"},
                 {"high-availability.zookeeper.client.session-timeout", "5 s"},
                 {"high-availability.zookeeper.client.connection-timeout", "1 min"},
                 {"high-availability.zookeeper.client.tolerate-suspended-connections", "true"}});
  EXPECT_EQ(c.type, HaType::ZooKeeper);
  EXPECT_EQ(c.quorum, "zk1:2181,zk2:2181");
  EXPECT_EQ(c.cluster_path(), "/flink/cluster_one");
  EXPECT_EQ(c.storage_dir, "/var/ha");
  EXPECT_EQ(c.session_timeout, 5000ms);
  EXPECT_EQ(c.connection_timeout, 60000ms);
  EXPECT_TRUE(c.tolerate_suspended_connections);
  // Flink's deprecated keys, through ClusterConfig's fallbacks.
  c = ha_config({{"high-availability", "zookeeper"},
                 {"recovery.zookeeper.quorum", "zk:2181"},
                 {"high-availability.zookeeper.storageDir", "/old/ha"}});
  EXPECT_EQ(c.type, HaType::ZooKeeper);
  EXPECT_EQ(c.quorum, "zk:2181");
  EXPECT_EQ(c.storage_dir, "/old/ha");
}

TEST(HaConfigTest, ErrorsNameTheKey) {
  auto message = [](std::map<std::string, std::string> options) {
    try {
      ha_config(options);
    } catch (const ClinkError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message({{"high-availability.type", "kubernetes"}}),
            "high-availability.type: 'kubernetes' is not supported (none or zookeeper)");
  EXPECT_EQ(message({{"high-availability.type", "zookeeper"}, {"high-availability.storageDir", "/x"}}),
            "high-availability.type is zookeeper but high-availability.zookeeper.quorum is not set");
  EXPECT_EQ(message({{"high-availability.type", "zookeeper"}, {"high-availability.zookeeper.quorum", "h:1"}}),
            "high-availability.type is zookeeper but high-availability.storageDir is not set");
  EXPECT_EQ(message({{"high-availability.storageDir", "s3://bucket/ha"}}),
            "high-availability.storageDir: 's3://bucket/ha': only local paths (file:// or /path) are supported");
  EXPECT_EQ(message({{"high-availability.zookeeper.client.session-timeout", "soon"}}),
            "high-availability.zookeeper.client.session-timeout: 'soon' is not a duration: it does not start with a "
            "number and is not ISO-8601 (like '10 s', '1 min', '500 ms')");
  EXPECT_EQ(message({{"high-availability.cluster-id", "/a//b"}}),
            "high-availability.cluster-id: '/a//b' has an empty path element");
}

TEST(HaConfigTest, UnreachableQuorumIsNamed) {
  auto c = zookeeper_config(unique_cluster_id("nowhere"), fresh_dir("nowhere"));
  c.quorum = "127.0.0.1:1";  // nothing listens there
  c.connection_timeout = 300ms;
  try {
    make_ha_services(c);
    FAIL() << "connected to nothing";
  } catch (const ClinkError& e) {
    EXPECT_EQ(std::string(e.what()),
              "high-availability.zookeeper.quorum: no ZooKeeper server at '127.0.0.1:1' answered within 300 ms "
              "(high-availability.zookeeper.client.connection-timeout)");
  }
}

TEST(CoordinatorAddressTest, RoundTripsAsJson) {
  CoordinatorAddress a{"10.0.0.5:6123", "http://10.0.0.5:8081"};
  EXPECT_EQ(a.encode(), R"({"rest":"http://10.0.0.5:8081","rpc":"10.0.0.5:6123"})");
  EXPECT_EQ(CoordinatorAddress::decode(a.encode()), a);
  EXPECT_EQ(CoordinatorAddress::decode("10.0.0.5:6123"), std::nullopt);
}

// ---------------------------------------------------------------- standalone election

TEST(StandaloneElectionTest, GrantsAtOnceAndPublishesTheAddress) {
  auto ha = make_ha_services(HaConfig{});
  std::atomic<int> granted{0}, revoked{0};
  ha->leader_election().run("rpc=127.0.0.1:6123", [&](const std::string&) { ++granted; }, [&] { ++revoked; });
  auto leader = ha->leader_retriever().wait_for_leader(5s);
  ASSERT_TRUE(leader);
  EXPECT_EQ(leader->address, "rpc=127.0.0.1:6123");
  EXPECT_TRUE(eventually([&] { return granted == 1; }));
  ha->leader_election().stop();
  EXPECT_EQ(revoked, 1);
  EXPECT_EQ(ha->leader_retriever().current(), std::nullopt);

  HaConfig worker;
  worker.standalone_leader_address = "rpc=10.0.0.1:6123";
  auto w = make_ha_services(worker);
  EXPECT_EQ(w->leader_retriever().current(), (LeaderInfo{"rpc=10.0.0.1:6123", "standalone"}));
}

// ---------------------------------------------------------------- a contender in a child process

// This binary, re-executed with CLINK_HA_CHILD=1: contends for leadership and, every 20 ms
// whether it believes it leads or not, writes the checkpoint counter of job "job" and the
// catalog entry "owner". Reports on stdout: "granted <session>", "revoked",
// "write ok <n>", "write refused <n>: <why>", "write failed <n>: <why>".
int contender_child_main() {
  std::mutex out;
  auto say = [&](const std::string& line) {
    std::lock_guard lock(out);
    std::cout << line << std::endl;
  };
  try {
    std::string address = std::getenv("CLINK_HA_CHILD_ADDRESS");
    auto ha = make_ha_services(zookeeper_config(std::getenv("CLINK_HA_CHILD_CLUSTER"), std::getenv("CLINK_HA_CHILD_STORAGE")));
    ha->leader_election().run(
        address, [&](const std::string& session) { say("granted " + session); }, [&] { say("revoked"); });
    for (std::int64_t n = 1;; ++n) {
      std::this_thread::sleep_for(20ms);
      try {
        ha->checkpoints().set_next_checkpoint_id("job", n);
        ha->catalog().put("owner", address + "-" + std::to_string(n));
        say("write ok " + std::to_string(n));
      } catch (const NotLeaderError& e) {
        say("write refused " + std::to_string(n) + ": " + e.what());
      } catch (const std::exception& e) {
        say("write failed " + std::to_string(n) + ": " + e.what());
      }
    }
  } catch (const std::exception& e) {
    say(std::string("child failed: ") + e.what());
    return 1;
  }
}

// Runs before gtest's main when this process is the child.
const bool kChildMode = [] {
  if (std::getenv("CLINK_HA_CHILD")) std::_Exit(contender_child_main());
  return false;
}();

class ChildContender {
 public:
  ChildContender(const std::string& cluster_id, const std::filesystem::path& storage, const std::string& address) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    std::vector<std::string> env_strings{"CLINK_HA_CHILD=1", "CLINK_HA_CHILD_CLUSTER=" + cluster_id,
                                         "CLINK_HA_CHILD_STORAGE=" + storage.string(),
                                         "CLINK_HA_CHILD_ADDRESS=" + address};
    for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);
    std::vector<char*> env;
    for (auto& e : env_strings) env.push_back(e.data());
    env.push_back(nullptr);
    std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
    char* argv[] = {exe.data(), nullptr};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    int rc = posix_spawn(&pid_, exe.c_str(), &actions, nullptr, argv, env.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (rc != 0) throw std::runtime_error("posix_spawn failed");
    reader_ = std::thread([this, fd = fds[0]] {
      std::string partial;
      char buf[4096];
      for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0) break;
        partial.append(buf, static_cast<size_t>(n));
        for (size_t nl; (nl = partial.find('\n')) != std::string::npos;) {
          std::lock_guard lock(mutex_);
          lines_.push_back(partial.substr(0, nl));
          partial.erase(0, nl + 1);
        }
      }
      ::close(fd);
    });
  }
  ~ChildContender() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    reader_.join();
  }
  void signal(int sig) { ::kill(pid_, sig); }
  size_t line_count() {
    std::lock_guard lock(mutex_);
    return lines_.size();
  }
  std::vector<std::string> lines_from(size_t from) {
    std::lock_guard lock(mutex_);
    return {lines_.begin() + static_cast<std::ptrdiff_t>(std::min(from, lines_.size())), lines_.end()};
  }
  // Waits for a line starting with `prefix` at index >= from; returns its index.
  std::optional<size_t> wait_for(const std::string& prefix, size_t from = 0, std::chrono::milliseconds timeout = 10s) {
    std::optional<size_t> found;
    eventually(
        [&] {
          std::lock_guard lock(mutex_);
          for (size_t i = from; i < lines_.size(); ++i)
            if (lines_[i].starts_with(prefix)) return (found = i).has_value();
          return false;
        },
        timeout);
    return found;
  }
  std::string transcript() {
    std::lock_guard lock(mutex_);
    std::string all;
    for (auto& l : lines_) all += l + "\n";
    return all;
  }

 private:
  pid_t pid_ = 0;
  std::thread reader_;
  std::mutex mutex_;
  std::vector<std::string> lines_;
};

size_t count_prefix(const std::vector<std::string>& lines, const std::string& prefix) {
  return static_cast<size_t>(std::count_if(lines.begin(), lines.end(), [&](auto& l) { return l.starts_with(prefix); }));
}

// ---------------------------------------------------------------- ZooKeeper election

// The latch nodes under a znode, read with the plain C client.
struct ZooKeeperChildren {
  std::vector<std::string> names;
  ZooKeeperChildren(zhandle_t* zh, const std::string& path) {
    String_vector v{};
    if (zoo_get_children(zh, path.c_str(), 0, &v) != ZOK) return;
    names.assign(v.data, v.data + v.count);
    deallocate_String_vector(&v);
    // Latch nodes sort by their sequence number, the last 10 digits.
    std::sort(names.begin(), names.end(), [](auto& a, auto& b) { return a.substr(a.size() - 10) < b.substr(b.size() - 10); });
  }
};

TEST(ZooKeeperElectionTest, OneLeaderAmongTwoAndAQuickHandoverOnResign) {
  auto cluster = unique_cluster_id("election");
  auto storage = fresh_dir(cluster.substr(1));
  std::atomic<int> revoked_a{0}, revoked_b{0};
  auto a = make_ha_services(zookeeper_config(cluster, storage));
  auto b = make_ha_services(zookeeper_config(cluster, storage));
  auto worker = make_ha_services(zookeeper_config(cluster, storage));
  std::vector<std::optional<LeaderInfo>> seen;
  std::mutex seen_mutex;
  int subscription = worker->leader_retriever().subscribe([&](const std::optional<LeaderInfo>& l) {
    std::lock_guard lock(seen_mutex);
    seen.push_back(l);
  });
  const std::string address_a = CoordinatorAddress{"127.0.0.1:6123", "http://127.0.0.1:8081"}.encode();
  const std::string address_b = CoordinatorAddress{"127.0.0.1:6124", "http://127.0.0.1:8082"}.encode();
  a->leader_election().run(address_a, nullptr, [&] { ++revoked_a; });
  b->leader_election().run(address_b, nullptr, [&] { ++revoked_b; });
  ASSERT_TRUE(eventually([&] { return a->leader_election().has_leadership() || b->leader_election().has_leadership(); }));
  std::this_thread::sleep_for(300ms);
  ASSERT_NE(a->leader_election().has_leadership(), b->leader_election().has_leadership()) << "exactly one leader";
  bool a_leads = a->leader_election().has_leadership();
  auto& leader = a_leads ? a : b;
  auto& follower = a_leads ? b : a;
  const std::string leader_address = a_leads ? address_a : address_b, follower_address = a_leads ? address_b : address_a;
  auto info = worker->leader_retriever().wait_for_leader(5s);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->address, leader_address);
  EXPECT_EQ(info->session_id, leader->leader_election().leader_session().value());
  EXPECT_EQ(follower->leader_election().leader_session(), std::nullopt);

  auto t0 = Clock::now();
  leader.reset();  // resigns: deletes its latch node at once
  ASSERT_TRUE(eventually([&] { return follower->leader_election().has_leadership(); }, 5s));
  double granted_ms = ms_since(t0);
  auto next = worker->leader_retriever().wait_until(
      [&](const std::optional<LeaderInfo>& l) { return l && l->address == follower_address; }, 5s);
  double retrieved_ms = ms_since(t0);
  ASSERT_TRUE(next && next->address == follower_address);
  EXPECT_EQ(next->session_id, follower->leader_election().leader_session().value());
  // What a worker's control client reconnects to.
  EXPECT_EQ(CoordinatorAddress::decode(next->address)->rpc, a_leads ? "127.0.0.1:6124" : "127.0.0.1:6123");
  EXPECT_EQ(a_leads ? revoked_a.load() : revoked_b.load(), 1);
  EXPECT_LT(granted_ms, 1000.0);
  std::cout << "[ha timing] resign handover: follower granted after " << granted_ms << " ms, retriever saw it after "
            << retrieved_ms << " ms\n";
  worker->leader_retriever().unsubscribe(subscription);
  std::lock_guard lock(seen_mutex);
  ASSERT_GE(seen.size(), 2u);
  EXPECT_EQ(seen.back(), next);
}

TEST(ZooKeeperElectionTest, CrashedLeaderIsReplacedWithinTheSessionTimeout) {
  auto cluster = unique_cluster_id("crash");
  auto storage = fresh_dir(cluster.substr(1));
  ChildContender child(cluster, storage, "child");
  ASSERT_TRUE(child.wait_for("granted")) << child.transcript();
  auto b = make_ha_services(zookeeper_config(cluster, storage));
  auto worker = make_ha_services(zookeeper_config(cluster, storage));
  ASSERT_EQ(worker->leader_retriever().wait_for_leader(5s)->address, "child");
  std::atomic<bool> granted{false};
  b->leader_election().run("B", [&](const std::string&) { granted = true; }, nullptr);
  std::this_thread::sleep_for(200ms);
  ASSERT_FALSE(granted);

  auto t0 = Clock::now();
  child.signal(SIGKILL);  // a crash: no goodbye, the session has to expire
  ASSERT_TRUE(eventually([&] { return granted.load(); }, kSessionTimeout + 5s));
  double granted_ms = ms_since(t0);
  auto next = worker->leader_retriever().wait_until(
      [](const std::optional<LeaderInfo>& l) { return l && l->address == "B"; }, 5s);
  double retrieved_ms = ms_since(t0);
  ASSERT_TRUE(next && next->address == "B");
  std::cout << "[ha timing] leader killed (session timeout " << kSessionTimeout.count() << " ms): standby granted after "
            << granted_ms << " ms, retriever saw it after " << retrieved_ms << " ms\n";
  EXPECT_GT(granted_ms, kSessionTimeout.count() * 0.5);  // the session expired: not a resign
  EXPECT_LT(granted_ms, kSessionTimeout.count() + 1500.0);
}

TEST(ZooKeeperElectionTest, PausedLeaderIsDeposedAndItsWritesAreRefused) {
  auto cluster = unique_cluster_id("pause");
  auto storage = fresh_dir(cluster.substr(1));
  ChildContender child(cluster, storage, "child");
  ASSERT_TRUE(child.wait_for("granted")) << child.transcript();
  ASSERT_TRUE(child.wait_for("write ok")) << child.transcript();
  auto b = make_ha_services(zookeeper_config(cluster, storage));
  b->leader_election().run("B", nullptr, nullptr);

  child.signal(SIGSTOP);  // a long GC pause, a frozen VM: its session expires meanwhile
  ASSERT_TRUE(eventually([&] { return b->leader_election().has_leadership(); }, kSessionTimeout + 5s));
  b->checkpoints().set_next_checkpoint_id("job", 1000000);
  b->catalog().put("owner", "B");
  size_t mark = child.line_count();
  child.signal(SIGCONT);  // it wakes up believing it leads, and keeps writing

  ASSERT_TRUE(child.wait_for("revoked", mark)) << child.transcript();
  ASSERT_TRUE(eventually([&] { return count_prefix(child.lines_from(mark), "write refused") >= 5; }))
      << child.transcript();
  auto after = child.lines_from(mark);
  for (size_t i = 0; i < std::min<size_t>(after.size(), 4); ++i) std::cout << "[child after SIGCONT] " << after[i] << "\n";
  // At most the write in flight when it froze (done before B was granted) completes late.
  EXPECT_LE(count_prefix(after, "write ok"), 1u) << child.transcript();
  EXPECT_EQ(b->checkpoints().next_checkpoint_id("job"), 1000000);
  EXPECT_EQ(b->catalog().get("owner"), "B");

  // It contends again: when B resigns, it leads (and writes) again.
  mark = child.line_count();
  b->leader_election().stop();
  ASSERT_TRUE(child.wait_for("granted", mark, 5s)) << child.transcript();
  ASSERT_TRUE(child.wait_for("write ok", mark, 5s)) << child.transcript();
}

// The fence on ZooKeeper's side: a leader whose latch node is gone cannot write even
// before it notices. A's event thread is held inside on_granted (so A still believes it
// leads) while its latch node is deleted behind its back; A's write reaches ZooKeeper and
// the transaction's check of the latch node refuses it.
TEST(ZooKeeperElectionTest, LeaderWithoutItsLatchNodeCannotWrite) {
  auto cluster = unique_cluster_id("latch");
  auto storage = fresh_dir(cluster.substr(1));
  auto config = zookeeper_config(cluster, storage);
  std::promise<void> release;
  auto released = release.get_future().share();
  std::atomic<bool> a_granted{false};
  auto a = make_ha_services(config);
  a->leader_election().run("A", [&](const std::string&) { a_granted = true; released.wait(); }, nullptr);
  ASSERT_TRUE(eventually([&] { return a_granted.load(); }));
  a->job_graphs().put("job", "from A");
  auto b = make_ha_services(config);
  b->leader_election().run("B", nullptr, nullptr);

  zhandle_t* zh = zookeeper_init(config.quorum.c_str(), nullptr, 10000, nullptr, nullptr, 0);
  ASSERT_NE(zh, nullptr);
  ASSERT_TRUE(eventually([&] { return zoo_state(zh) == ZOO_CONNECTED_STATE; }, 5s));
  std::string latch = config.cluster_path() + "/leader/latch";
  ASSERT_TRUE(eventually([&] {
    ZooKeeperChildren c(zh, latch);
    return c.names.size() == 2;
  }));
  ZooKeeperChildren children(zh, latch);
  ASSERT_EQ(zoo_delete(zh, (latch + "/" + children.names[0]).c_str(), -1), ZOK);  // A's: the lowest
  zookeeper_close(zh);

  ASSERT_TRUE(a->leader_election().has_leadership());  // A has not noticed
  try {
    a->job_graphs().put("job", "from A, deposed");
    ADD_FAILURE() << "a deposed leader wrote";
  } catch (const NotLeaderError& e) {
    EXPECT_NE(std::string(e.what()).find("leadership lost (latch node " + latch + "/" + children.names[0] + " is gone)"),
              std::string::npos)
        << e.what();
  }
  release.set_value();
  ASSERT_TRUE(eventually([&] { return b->leader_election().has_leadership(); }, 5s));
  ASSERT_TRUE(eventually([&] { return !a->leader_election().has_leadership(); }, 5s));
  EXPECT_EQ(b->job_graphs().get("job"), "from A");
  b->job_graphs().put("job", "from B");
  EXPECT_EQ(a->job_graphs().get("job"), "from B");
}

// A ZooKeeper server of this test's own (scripts/zookeeper), for tests that freeze it:
// freezing the fixture's server would disturb the tests running beside them.
class PrivateZooKeeper {
 public:
  explicit PrivateZooKeeper(int port) : port_(port) {
    std::string script = std::string(CLINK_SOURCE_DIR) + "/scripts/zookeeper";
    std::string cmd = script + " stop " + std::to_string(port) + " 2>/dev/null; " + script + " start " +
                      std::to_string(port) + " >/dev/null 2>&1 && " + script + " status " + std::to_string(port);
    FILE* p = ::popen(cmd.c_str(), "r");
    char buf[512] = {};
    std::string out;
    while (p && std::fgets(buf, sizeof buf, p)) out += buf;
    if (p) ::pclose(p);
    auto at = out.find("running pid=");
    if (at == std::string::npos) throw std::runtime_error("scripts/zookeeper start " + std::to_string(port) + ": " + out);
    pid_ = std::stoi(out.substr(at + 12));
  }
  ~PrivateZooKeeper() {
    ::kill(pid_, SIGCONT);
    std::string cmd = std::string(CLINK_SOURCE_DIR) + "/scripts/zookeeper stop " + std::to_string(port_) + " 2>/dev/null";
    [[maybe_unused]] int rc = std::system(cmd.c_str());
  }
  std::string quorum() const { return "127.0.0.1:" + std::to_string(port_); }
  void signal(int sig) { ::kill(pid_, sig); }

 private:
  int port_;
  pid_t pid_ = 0;
};

// Flink's default revokes leadership as soon as the connection is lost (SUSPENDED), since
// a leader that cannot reach ZooKeeper cannot know whether it was replaced; reconnecting
// within the session timeout grants it again. tolerate-suspended-connections keeps it.
TEST(ZooKeeperElectionTest, LostConnectionRevokesUnlessToleratedAndAReconnectGrantsAgain) {
  // The fixture's port + 10 (12291 by default): a port no other test uses.
  auto fixture = zookeeper_quorum();
  PrivateZooKeeper zk(std::stoi(fixture.substr(fixture.rfind(':') + 1)) + 10);
  auto storage = fresh_dir("suspend");
  auto config = [&](bool tolerate) {
    auto c = zookeeper_config(unique_cluster_id("suspend"), storage);
    c.quorum = zk.quorum();
    // The client notices silence after 2/3 of it; the server expires the session after
    // all of it: the third between is the time to come back within the session.
    c.session_timeout = 9000ms;
    c.tolerate_suspended_connections = tolerate;
    return c;
  };
  std::atomic<int> strict_granted{0}, strict_revoked{0}, tolerant_granted{0}, tolerant_revoked{0};
  auto strict = make_ha_services(config(false));
  auto tolerant = make_ha_services(config(true));
  strict->leader_election().run("strict", [&](const std::string&) { ++strict_granted; }, [&] { ++strict_revoked; });
  tolerant->leader_election().run("tolerant", [&](const std::string&) { ++tolerant_granted; }, [&] { ++tolerant_revoked; });
  ASSERT_TRUE(eventually([&] { return strict_granted == 1 && tolerant_granted == 1; }));
  auto first_session = strict->leader_election().leader_session();

  auto t0 = Clock::now();
  zk.signal(SIGSTOP);  // the server stops answering; the sessions live on (9 s)
  ASSERT_TRUE(eventually([&] { return strict_revoked == 1; }, 9s));
  double revoked_ms = ms_since(t0);
  EXPECT_THROW(strict->job_graphs().put("j", "x"), NotLeaderError);
  zk.signal(SIGCONT);  // back before the sessions expire
  ASSERT_TRUE(eventually([&] { return strict_granted == 2; }, 5s));
  double regranted_ms = ms_since(t0);
  std::cout << "[ha timing] connection lost (session timeout 9000 ms): revoked after " << revoked_ms
            << " ms; server back, granted again after " << regranted_ms << " ms\n";
  EXPECT_NE(strict->leader_election().leader_session(), first_session);  // a new grant
  strict->job_graphs().put("j", "x");
  EXPECT_EQ(tolerant_revoked, 0);
  EXPECT_EQ(tolerant_granted, 1);
  EXPECT_TRUE(tolerant->leader_election().has_leadership());
  tolerant->job_graphs().put("j", "y");
}

}  // namespace

}  // namespace clink::test
