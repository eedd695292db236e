// The control plane over real loopback gRPC: a ControlServer (the coordinator's end) and
// ControlClients (the workers' ends), in this process or in a child process (this binary
// run as ControlChild.DISABLED_Worker) that the tests kill -9 or SIGSTOP.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <google/protobuf/util/message_differencer.h>
#include <grpcpp/grpcpp.h>

#include "cluster/control/control.grpc.pb.h"
#include "cluster/control/control_client.hpp"
#include "cluster/control/control_server.hpp"

extern char** environ;

namespace clink::test {
namespace {

using namespace std::chrono_literals;
using cluster::ControlClient;
using cluster::ControlClientCallbacks;
using cluster::ControlClientOptions;
using cluster::ControlServer;
using cluster::ControlServerCallbacks;
using cluster::ControlServerOptions;
namespace proto = cluster::proto;
using Clock = std::chrono::steady_clock;

int64_t ms_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

bool same(const google::protobuf::Message& a, const google::protobuf::Message& b) {
  return google::protobuf::util::MessageDifferencer::Equals(a, b);
}

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

  ControlServerCallbacks callbacks() {
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

  ControlClientCallbacks callbacks(std::string metrics = "") {
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

proto::Register registration(const std::string& worker_id, int data_port = 7001, int slots = 4) {
  proto::Register r;
  r.set_worker_id(worker_id);
  r.set_host("127.0.0.1");
  r.set_data_port(data_port);
  r.set_slots(slots);
  return r;
}

ControlServerOptions server_options(std::chrono::milliseconds interval, std::chrono::milliseconds timeout) {
  ControlServerOptions o;
  o.heartbeat_interval = interval;
  o.heartbeat_timeout = timeout;
  return o;
}

proto::WorkerMessage task_event(const std::string& job, int task, proto::TaskEvent::Kind kind, int64_t checkpoint,
                                const std::string& text) {
  proto::WorkerMessage m;
  auto* e = m.mutable_task_event();
  e->set_job_id(job);
  e->set_attempt(2);
  e->set_task(task);
  e->set_kind(kind);
  e->set_checkpoint_id(checkpoint);
  e->set_message(text);
  return m;
}

// This binary run again as a worker (ControlChild.DISABLED_Worker), killed at the end.
class WorkerProcess {
 public:
  WorkerProcess(const std::string& target, const std::string& worker_id) {
    std::vector<std::string> args{"/proc/self/exe", "--gtest_filter=ControlChild.DISABLED_Worker",
                                  "--gtest_also_run_disabled_tests"};
    std::vector<std::string> env{"CLINK_CONTROL_CHILD_TARGET=" + target, "CLINK_CONTROL_CHILD_ID=" + worker_id};
    for (char** e = environ; *e; ++e) env.emplace_back(*e);
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {  // only async-signal-safe calls until exec (the parent has threads)
      ::execve(argv[0], argv.data(), envp.data());
      ::_exit(127);
    }
  }
  ~WorkerProcess() {
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

TEST(ControlChild, DISABLED_Worker) {
  const char* target = std::getenv("CLINK_CONTROL_CHILD_TARGET");
  const char* id = std::getenv("CLINK_CONTROL_CHILD_ID");
  if (!target || !id) GTEST_SKIP() << "runs only as the child of a ControlPlane test";
  ClientLog log;
  ControlClient client(registration(id), {}, log.callbacks("{\"child\":true}"));
  client.connect(target);
  while (true) std::this_thread::sleep_for(1s);  // until the test kills it
}

TEST(ControlPlane, RegisterAndMessagesBothWaysInOrder) {
  ServerLog slog;
  ControlServer server(server_options(30ms, 5000ms), slog.callbacks());
  ASSERT_GT(server.port(), 0);
  EXPECT_EQ(server.address(), "127.0.0.1:" + std::to_string(server.port()));
  ClientLog clog;
  ControlClient client(registration("worker-1", 7001, 4), {}, clog.callbacks("{\"jobs\":{}}"));
  client.connect(server.address());
  ASSERT_TRUE(client.wait_connected(10s)) << client.last_error();
  ASSERT_TRUE(slog.wait([&] { return !slog.registered.empty(); }));
  ASSERT_TRUE(clog.wait([&] { return !clog.connected.empty(); }));
  EXPECT_TRUE(same(slog.registered[0], registration("worker-1", 7001, 4)));
  EXPECT_EQ(server.workers(), std::vector<std::string>{"worker-1"});
  ASSERT_EQ(clog.connected.size(), 1u);
  EXPECT_EQ(clog.connected[0].first, server.address());
  EXPECT_EQ(clog.connected[0].second.heartbeat_interval_ms(), 30);
  EXPECT_EQ(clog.connected[0].second.heartbeat_timeout_ms(), 5000);
  EXPECT_EQ(client.target(), server.address());

  // Coordinator -> worker: every command, in order, field for field.
  std::vector<proto::CoordinatorMessage> commands(5);
  auto* deploy = commands[0].mutable_deploy();
  deploy->set_job_id("0123456789abcdef0123456789abcdef");
  deploy->set_attempt(3);
  deploy->set_spec_json(std::string(100000, 'x'));  // larger than one HTTP/2 frame
  deploy->set_options_json("{\"checkpoint_interval_ms\":100}");
  for (int i = 0; i < 3; ++i) {
    auto* t = deploy->add_tasks();
    t->set_worker_id("worker-" + std::to_string(i));
    t->set_host("127.0.0.1");
    t->set_data_port(7000 + i);
  }
  deploy->add_local_tasks(1);
  deploy->add_local_tasks(2);
  auto* trigger = commands[1].mutable_trigger_checkpoint();
  trigger->set_job_id("0123456789abcdef0123456789abcdef");
  trigger->set_attempt(3);
  trigger->set_task(1);
  trigger->set_checkpoint_id(7);
  trigger->set_timestamp_ms(1700000000123);
  trigger->set_is_savepoint(true);
  trigger->set_stops_sources(true);
  auto* notify = commands[2].mutable_notify_complete();
  notify->set_job_id("j");
  notify->set_attempt(3);
  notify->set_task(2);
  notify->set_checkpoint_id(7);
  commands[3].mutable_resume_sources()->set_job_id("j");
  commands[3].mutable_resume_sources()->set_attempt(3);
  commands[4].mutable_cancel_attempt()->set_job_id("j");
  commands[4].mutable_cancel_attempt()->set_attempt(3);
  for (const auto& c : commands) ASSERT_TRUE(server.send("worker-1", c));
  ASSERT_TRUE(clog.wait([&] { return clog.messages.size() >= commands.size(); }));
  ASSERT_EQ(clog.messages.size(), commands.size());  // no Registered, no heartbeat replies
  for (size_t i = 0; i < commands.size(); ++i) EXPECT_TRUE(same(clog.messages[i], commands[i])) << i;

  // Worker -> coordinator: task events and a checkpoint ack, in order.
  std::vector<proto::WorkerMessage> events{
      task_event("j", 1, proto::TaskEvent::ENDED, 0, ""),
      task_event("j", 1, proto::TaskEvent::COMMITTED, 7, ""),
      task_event("j", 2, proto::TaskEvent::FAILED, 0, "operator 'sink' failed: disk full"),
  };
  proto::WorkerMessage ack;
  ack.mutable_checkpoint_ack()->set_job_id("j");
  ack.mutable_checkpoint_ack()->set_attempt(3);
  ack.mutable_checkpoint_ack()->set_task(2);
  ack.mutable_checkpoint_ack()->set_checkpoint_id(7);
  ack.mutable_checkpoint_ack()->set_snapshot_json("[[\"uid\",{}]]");
  ack.mutable_checkpoint_ack()->set_alignment_ns(12345);
  events.insert(events.begin() + 2, ack);
  for (const auto& e : events) ASSERT_TRUE(client.send(e));
  ASSERT_TRUE(slog.wait([&] { return slog.messages.size() >= events.size(); }));
  ASSERT_EQ(slog.messages.size(), events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(slog.messages[i].first, "worker-1");
    EXPECT_TRUE(same(slog.messages[i].second, events[i])) << i;
  }

  // Heartbeats every 30 ms, each with the metrics callback's JSON.
  ASSERT_TRUE(slog.wait([&] { return slog.heartbeats["worker-1"] >= 3; }));
  {
    std::lock_guard lock(slog.mu);
    for (const auto& m : slog.heartbeat_metrics) EXPECT_EQ(m, "{\"jobs\":{}}");
  }
  EXPECT_FALSE(server.send("worker-2", commands[0]));  // no such worker
  client.stop();
  ASSERT_TRUE(slog.wait([&] { return !slog.lost.empty(); }));
  EXPECT_EQ(slog.lost[0].first, "worker-1");
  EXPECT_TRUE(clog.disconnected.empty());  // stop() reports nothing
  EXPECT_FALSE(client.send(events[0]));
  EXPECT_FALSE(server.send("worker-1", commands[0]));
  EXPECT_TRUE(server.workers().empty());
}

TEST(ControlPlane, FirstMessageMustBeRegister) {
  ServerLog slog;
  ControlServer server(server_options(1000ms, 5000ms), slog.callbacks());
  auto stub = proto::Coordinator::NewStub(grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  auto stream = stub->Connect(&context);
  proto::WorkerMessage heartbeat;
  heartbeat.mutable_heartbeat()->set_time_ms(1);
  ASSERT_TRUE(stream->Write(heartbeat));
  proto::CoordinatorMessage answer;
  EXPECT_FALSE(stream->Read(&answer));
  grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message().rfind("the first message on the control stream must be Register, got heartbeat from ", 0),
            0u)
      << status.error_message();
  std::lock_guard lock(slog.mu);
  EXPECT_TRUE(slog.registered.empty());
  EXPECT_TRUE(slog.lost.empty());
}

TEST(ControlPlane, KilledWorkerIsLostWhenItsStreamEnds) {
  ServerLog slog;
  // A heartbeat timeout far longer than the test: only the stream's end can tell.
  ControlServer server(server_options(1000ms, 60000ms), slog.callbacks());
  WorkerProcess child(server.address(), "worker-killed");
  ASSERT_TRUE(slog.wait([&] { return !slog.registered.empty(); }, 30s));
  EXPECT_EQ(slog.registered[0].worker_id(), "worker-killed");
  ASSERT_TRUE(slog.wait([&] { return slog.heartbeats["worker-killed"] >= 1; }));
  EXPECT_EQ(slog.heartbeat_metrics[0], "{\"child\":true}");
  auto killed_at = Clock::now();
  child.signal(SIGKILL);
  ASSERT_TRUE(slog.wait([&] { return !slog.lost.empty(); }, 10s));
  int64_t detection_ms = std::chrono::duration_cast<std::chrono::milliseconds>(slog.lost_at - killed_at).count();
  std::cout << "kill -9 of a worker detected (stream end) after " << detection_ms << " ms\n";
  EXPECT_LT(detection_ms, 2000);
  EXPECT_EQ(slog.lost[0].first, "worker-killed");
  EXPECT_EQ(slog.lost[0].second.rfind("the control stream of worker worker-killed from ipv4:127.0.0.1:", 0), 0u)
      << slog.lost[0].second;
  child.reap();
}

TEST(ControlPlane, StoppedWorkerIsLostAfterHeartbeatTimeout) {
  ServerLog slog;
  ControlServer server(server_options(50ms, 500ms), slog.callbacks());
  WorkerProcess child(server.address(), "worker-stopped");
  ASSERT_TRUE(slog.wait([&] { return slog.heartbeats["worker-stopped"] >= 3; }, 30s));
  auto stopped_at = Clock::now();
  child.signal(SIGSTOP);  // its socket stays open: only the missing heartbeats tell
  ASSERT_TRUE(slog.wait([&] { return !slog.lost.empty(); }, 10s));
  int64_t detection_ms = std::chrono::duration_cast<std::chrono::milliseconds>(slog.lost_at - stopped_at).count();
  std::cout << "SIGSTOP of a worker detected (heartbeat.timeout 500 ms, interval 50 ms) after " << detection_ms
            << " ms\n";
  // The last heartbeat came up to one interval before the stop; the watchdog checks
  // every 50 ms (a tenth of the timeout).
  EXPECT_GE(detection_ms, 500 - 50 - 10);
  EXPECT_LT(detection_ms, 500 + 50 + 400);
  EXPECT_EQ(slog.lost[0].first, "worker-stopped");
  EXPECT_NE(slog.lost[0].second.find("(heartbeat.timeout 500 ms)"), std::string::npos) << slog.lost[0].second;
  EXPECT_EQ(slog.lost[0].second.rfind("no message from worker worker-stopped (ipv4:127.0.0.1:", 0), 0u)
      << slog.lost[0].second;
  EXPECT_TRUE(server.workers().empty());
  child.signal(SIGKILL);
  child.reap();
}

TEST(ControlPlane, ReconnectsToTheNextServerTheResolverGives) {
  ServerLog log_a, log_b;
  auto a = std::make_unique<ControlServer>(server_options(50ms, 5000ms), log_a.callbacks());
  std::mutex mu;
  std::string leader = a->address();
  ControlClientOptions options;
  options.resolver = [&] {
    std::lock_guard lock(mu);
    return leader;
  };
  options.initial_backoff = 20ms;
  options.max_backoff = 200ms;
  ClientLog clog;
  ControlClient client(registration("worker-r"), options, clog.callbacks());
  client.connect(a->address());
  ASSERT_TRUE(client.wait_connected(10s)) << client.last_error();
  ASSERT_TRUE(log_a.wait([&] { return !log_a.registered.empty(); }));

  ControlServer b(server_options(40ms, 4000ms), log_b.callbacks());
  {
    std::lock_guard lock(mu);
    leader = b.address();
  }
  std::string a_address = a->address();
  auto lost_leader_at = Clock::now();
  a.reset();  // the old leader goes away with the stream open
  ASSERT_TRUE(clog.wait([&] { return !clog.disconnected.empty(); }));
  EXPECT_EQ(clog.disconnected[0].rfind("control stream to coordinator " + a_address + ": ", 0), 0u)
      << clog.disconnected[0];
  ASSERT_TRUE(log_b.wait([&] { return !log_b.registered.empty(); }));
  std::cout << "reconnected to the next coordinator after " << ms_since(lost_leader_at) << " ms\n";
  EXPECT_TRUE(same(log_b.registered[0], registration("worker-r")));
  ASSERT_TRUE(clog.wait([&] { return clog.connected.size() == 2; }));
  EXPECT_EQ(clog.connected[1].first, b.address());
  EXPECT_EQ(clog.connected[1].second.heartbeat_interval_ms(), 40);
  EXPECT_EQ(client.target(), b.address());
  ASSERT_TRUE(client.wait_connected(10s));

  proto::CoordinatorMessage cancel;
  cancel.mutable_cancel_attempt()->set_job_id("j");
  ASSERT_TRUE(b.send("worker-r", cancel));
  ASSERT_TRUE(clog.wait([&] { return clog.messages.size() == 1; }));
  EXPECT_TRUE(same(clog.messages[0], cancel));
  auto event = task_event("j", 0, proto::TaskEvent::EXITED, 0, "");
  ASSERT_TRUE(client.send(event));
  ASSERT_TRUE(log_b.wait([&] { return log_b.messages.size() == 1; }));
  EXPECT_TRUE(same(log_b.messages[0].second, event));
  std::lock_guard lock(log_a.mu);
  EXPECT_TRUE(log_a.lost.empty());  // a server shutting down reports no loss
}

TEST(ControlPlane, ConcurrentSendsArriveIntact) {
  constexpr int kThreads = 8, kPerThread = 500;
  ServerLog slog;
  ControlServer server(server_options(100ms, 10000ms), slog.callbacks());
  ClientLog clog;
  ControlClient client(registration("worker-c"), {}, clog.callbacks());
  client.connect(server.address());
  ASSERT_TRUE(client.wait_connected(10s)) << client.last_error();
  ASSERT_TRUE(slog.wait([&] { return !slog.registered.empty(); }));
  auto payload = [](int thread, int seq) { return std::string(100 + (seq % 50) * 20, static_cast<char>('a' + thread)); };

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {  // worker -> coordinator
      for (int i = 0; i < kPerThread; ++i)
        ASSERT_TRUE(client.send(task_event("t" + std::to_string(t), t, proto::TaskEvent::COMMITTED, i, payload(t, i))));
    });
    threads.emplace_back([&, t] {  // coordinator -> worker
      for (int i = 0; i < kPerThread; ++i) {
        proto::CoordinatorMessage m;
        auto* n = m.mutable_trigger_checkpoint();
        n->set_job_id("t" + std::to_string(t) + ":" + payload(t, i));
        n->set_task(t);
        n->set_checkpoint_id(i);
        ASSERT_TRUE(server.send("worker-c", m));
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_TRUE(slog.wait([&] { return slog.messages.size() >= kThreads * kPerThread; }, 30s));
  ASSERT_TRUE(clog.wait([&] { return clog.messages.size() >= kThreads * kPerThread; }, 30s));
  EXPECT_EQ(slog.messages.size(), size_t{kThreads * kPerThread});
  EXPECT_EQ(clog.messages.size(), size_t{kThreads * kPerThread});
  std::vector<int> next_up(kThreads, 0), next_down(kThreads, 0);
  for (const auto& [id, m] : slog.messages) {  // each thread's messages whole and in order
    const auto& e = m.task_event();
    int t = e.task();
    ASSERT_EQ(e.job_id(), "t" + std::to_string(t));
    ASSERT_EQ(e.checkpoint_id(), next_up[t]);
    ASSERT_EQ(e.message(), payload(t, next_up[t]));
    ++next_up[t];
  }
  for (const auto& m : clog.messages) {
    const auto& c = m.trigger_checkpoint();
    int t = c.task();
    ASSERT_EQ(c.checkpoint_id(), next_down[t]);
    ASSERT_EQ(c.job_id(), "t" + std::to_string(t) + ":" + payload(t, next_down[t]));
    ++next_down[t];
  }
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(next_up[t], kPerThread);
    EXPECT_EQ(next_down[t], kPerThread);
  }
}

TEST(ControlPlane, ShutsDownWithLiveStreams) {
  ServerLog slog;
  auto server = std::make_unique<ControlServer>(server_options(50ms, 5000ms), slog.callbacks());
  std::vector<std::unique_ptr<ClientLog>> logs;
  std::vector<std::unique_ptr<ControlClient>> clients;
  for (int i = 0; i < 4; ++i) {
    logs.push_back(std::make_unique<ClientLog>());
    ControlClientOptions options;
    options.initial_backoff = 1000ms;
    clients.push_back(std::make_unique<ControlClient>(registration("w" + std::to_string(i)), options,
                                                      logs.back()->callbacks()));
    clients.back()->connect(server->address());
  }
  for (auto& c : clients) ASSERT_TRUE(c->wait_connected(10s)) << c->last_error();
  ASSERT_TRUE(slog.wait([&] { return slog.registered.size() == 4; }));
  auto start = Clock::now();
  server.reset();
  int64_t server_ms = ms_since(start);
  for (auto& l : logs) ASSERT_TRUE(l->wait([&] { return !l->disconnected.empty(); }));
  start = Clock::now();
  clients.clear();  // while they wait to reconnect
  int64_t clients_ms = ms_since(start);
  std::cout << "server shutdown with 4 live streams: " << server_ms << " ms; 4 clients stopped: " << clients_ms
            << " ms\n";
  EXPECT_LT(server_ms, 1000);
  EXPECT_LT(clients_ms, 1000);
  EXPECT_TRUE(slog.lost.empty());
}

TEST(ControlPlane, SameWorkerRegisteringAgainReplacesItsStream) {
  ServerLog slog;
  ControlServer server(server_options(50ms, 5000ms), slog.callbacks());
  auto stub = proto::Coordinator::NewStub(grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext first_context;
  auto first = stub->Connect(&first_context);
  proto::WorkerMessage reg;
  *reg.mutable_register_() = registration("worker-twice");
  ASSERT_TRUE(first->Write(reg));
  proto::CoordinatorMessage answer;
  ASSERT_TRUE(first->Read(&answer));
  ASSERT_TRUE(answer.has_registered());
  ClientLog clog;
  ControlClient client(registration("worker-twice"), {}, clog.callbacks());
  client.connect(server.address());
  ASSERT_TRUE(client.wait_connected(10s));
  ASSERT_TRUE(slog.wait([&] { return slog.registered.size() == 2 && slog.lost.size() == 1; }));
  EXPECT_EQ(slog.lost[0].first, "worker-twice");
  EXPECT_NE(slog.lost[0].second.find("registered again"), std::string::npos) << slog.lost[0].second;
  EXPECT_FALSE(first->Read(&answer));  // the first stream was ended
  EXPECT_EQ(first->Finish().error_code(), grpc::StatusCode::CANCELLED);
  proto::CoordinatorMessage cancel;
  cancel.mutable_cancel_attempt()->set_job_id("j");
  ASSERT_TRUE(server.send("worker-twice", cancel));  // reaches the new stream
  ASSERT_TRUE(clog.wait([&] { return clog.messages.size() == 1; }));
}

TEST(ControlPlane, ListeningOnATakenPortFailsNamingIt) {
  ControlServer first(server_options(1000ms, 5000ms), {});
  ControlServerOptions options = server_options(1000ms, 5000ms);
  options.port = first.port();
  try {
    ControlServer second(options, {});
    FAIL() << "a second server listened on " << first.address();
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "control plane: cannot listen on " + first.address() +
                                         " (address in use or invalid)");
  }
}

}  // namespace
}  // namespace clink::test
