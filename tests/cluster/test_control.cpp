// The control plane over real loopback gRPC: a ControlServer (the coordinator's end) and
// ControlClients (the workers' ends), in this process or in a child process (this binary
// run as ControlChild.DISABLED_Worker) that the tests kill -9 or SIGSTOP.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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
#include "../support/temp_dir.hpp"
#include "control_test_support.hpp"

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

int64_t us_between(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration_cast<std::chrono::microseconds>(end - start).count();
}

int64_t ms_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

// Polls `done` every 5 ms for up to `timeout` (for states no callback reports).
bool eventually(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (!done()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

bool same(const google::protobuf::Message& a, const google::protobuf::Message& b) {
  return google::protobuf::util::MessageDifferencer::Equals(a, b);
}

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

// A worker process registered at `target` as `worker_id`.
struct WorkerProcess : ChildProcess {
  WorkerProcess(const std::string& target, const std::string& worker_id, const TempDir& dir)
      : ChildProcess("Worker", {"CLINK_CONTROL_CHILD_TARGET=" + target, "CLINK_CONTROL_CHILD_ID=" + worker_id}, dir) {}
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

// A coordinator (heartbeat interval 50 ms, timeout 500 ms) that writes its port to the
// file CLINK_CONTROL_CHILD_PORT_FILE.
TEST(ControlChild, DISABLED_Coordinator) {
  const char* port_file = std::getenv("CLINK_CONTROL_CHILD_PORT_FILE");
  if (!port_file) GTEST_SKIP() << "runs only as the child of a ControlPlane test";
  ControlServer server(server_options(50ms, 500ms), {});
  std::string tmp = std::string(port_file) + ".tmp";
  std::ofstream(tmp) << server.port();
  std::filesystem::rename(tmp, port_file);  // whole or not at all
  while (true) std::this_thread::sleep_for(1s);
}

// A coordinator process; address() once it listens.
struct CoordinatorProcess : ChildProcess {
  CoordinatorProcess(const TempDir& dir)
      : ChildProcess("Coordinator", {"CLINK_CONTROL_CHILD_PORT_FILE=" + dir.file("port")}, dir), dir_(dir) {}
  std::string address() {
    for (int i = 0; i < 3000; ++i) {
      std::ifstream in(dir_.file("port"));
      int port = 0;
      if (in >> port) return "127.0.0.1:" + std::to_string(port);
      std::this_thread::sleep_for(10ms);
    }
    return "";
  }
  const TempDir& dir_;
};

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
  TempDir dir("clink-control");
  WorkerProcess child(server.address(), "worker-killed", dir);
  ASSERT_TRUE(slog.wait([&] { return !slog.registered.empty(); }, 30s));
  EXPECT_EQ(slog.registered[0].worker_id(), "worker-killed");
  ASSERT_TRUE(slog.wait([&] { return slog.heartbeats["worker-killed"] >= 1; }));
  EXPECT_EQ(slog.heartbeat_metrics[0], "{\"child\":true}");
  auto killed_at = Clock::now();
  child.signal(SIGKILL);
  ASSERT_TRUE(slog.wait([&] { return !slog.lost.empty(); }, 10s));
  int64_t detection_us = us_between(killed_at, slog.lost_at);
  std::cout << "kill -9 of a worker detected by the coordinator (stream end) after " << detection_us << " us\n";
  EXPECT_LT(detection_us, 2000000);
  EXPECT_EQ(slog.lost[0].first, "worker-killed");
  EXPECT_EQ(slog.lost[0].second.rfind("the control stream of worker worker-killed from ipv4:127.0.0.1:", 0), 0u)
      << slog.lost[0].second;
  child.reap();
}

TEST(ControlPlane, StoppedWorkerIsLostAfterHeartbeatTimeout) {
  ServerLog slog;
  ControlServer server(server_options(50ms, 500ms), slog.callbacks());
  TempDir dir("clink-control");
  WorkerProcess child(server.address(), "worker-stopped", dir);
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

TEST(ControlPlane, ShutsDownWhileWritingToAStoppedWorker) {
  ServerLog slog;
  auto server = std::make_unique<ControlServer>(server_options(50ms, 60000ms), slog.callbacks());
  TempDir dir("clink-control");
  WorkerProcess child(server->address(), "worker-hung", dir);
  ASSERT_TRUE(slog.wait([&] { return slog.heartbeats["worker-hung"] >= 1; }, 30s));
  child.signal(SIGSTOP);
  proto::CoordinatorMessage deploy;
  deploy.mutable_deploy()->set_spec_json(std::string(1 << 20, 's'));
  for (int i = 0; i < 32; ++i) ASSERT_TRUE(server->send("worker-hung", deploy));  // more than the socket takes
  std::this_thread::sleep_for(200ms);  // the writer is blocked on the full stream
  auto start = Clock::now();
  server.reset();
  EXPECT_LT(ms_since(start), 1000);
  std::lock_guard lock(slog.mu);
  EXPECT_TRUE(slog.lost.empty());
}

TEST(ControlPlane, WorkerNoticesAKilledCoordinator) {
  TempDir dir("clink-control");
  CoordinatorProcess coordinator(dir);
  std::string address = coordinator.address();
  ASSERT_FALSE(address.empty()) << "the coordinator process wrote no port";
  ClientLog clog;
  ControlClientOptions options;
  options.initial_backoff = 50ms;
  ControlClient client(registration("worker-k"), options, clog.callbacks());
  client.connect(address);
  ASSERT_TRUE(client.wait_connected(30s)) << client.last_error();
  auto killed_at = Clock::now();
  coordinator.signal(SIGKILL);
  ASSERT_TRUE(clog.wait([&] { return !clog.disconnected.empty(); }));
  int64_t detection_us = us_between(killed_at, Clock::now());
  std::cout << "kill -9 of the coordinator detected by a worker (stream end) after " << detection_us << " us\n";
  EXPECT_LT(detection_us, 2000000);
  EXPECT_EQ(clog.disconnected[0].rfind("control stream to coordinator " + address + ": the stream ended (", 0), 0u)
      << clog.disconnected[0];
  coordinator.reap();
  // It keeps trying the same address (no resolver), refused each time.
  ASSERT_TRUE(eventually([&] { return client.last_error().find(": could not connect and send Register (") != std::string::npos; }, 5s))
      << client.last_error();
  EXPECT_NE(client.last_error().find("Connection refused"), std::string::npos) << client.last_error();
  EXPECT_FALSE(client.connected());
}

TEST(ControlPlane, WorkerNoticesAStoppedCoordinatorAfterHeartbeatTimeout) {
  TempDir dir("clink-control");
  CoordinatorProcess coordinator(dir);  // heartbeat interval 50 ms, timeout 500 ms
  std::string address = coordinator.address();
  ASSERT_FALSE(address.empty()) << "the coordinator process wrote no port";
  ClientLog clog;
  ControlClientOptions options;
  options.initial_backoff = 50ms;
  options.max_backoff = 100ms;
  options.connect_timeout = 300ms;
  ControlClient client(registration("worker-s"), options, clog.callbacks());
  client.connect(address);
  ASSERT_TRUE(client.wait_connected(30s)) << client.last_error();
  std::this_thread::sleep_for(200ms);  // a few heartbeats answered
  auto stopped_at = Clock::now();
  coordinator.signal(SIGSTOP);  // its sockets stay open: only the missing answers tell
  proto::WorkerMessage ack;
  ack.mutable_checkpoint_ack()->set_snapshot_json(std::string(1 << 20, 'a'));
  for (int i = 0; i < 32; ++i) ASSERT_TRUE(client.send(ack));  // more than the socket takes
  ASSERT_TRUE(clog.wait([&] { return !clog.disconnected.empty(); }));
  int64_t detection_ms = ms_since(stopped_at);
  std::cout << "SIGSTOP of the coordinator detected by a worker (heartbeat.timeout 500 ms) after " << detection_ms
            << " ms\n";
  EXPECT_GE(detection_ms, 500 - 50 - 10);
  EXPECT_LT(detection_ms, 500 + 50 + 400);
  EXPECT_EQ(clog.disconnected[0], "control stream to coordinator " + address +
                                      ": no answer from the coordinator for " +
                                      clog.disconnected[0].substr(clog.disconnected[0].find(" for ") + 5));
  EXPECT_NE(clog.disconnected[0].find(" ms (heartbeat.timeout 500 ms)"), std::string::npos) << clog.disconnected[0];
  // Reconnecting to the stopped process: the kernel accepts the connection, nobody answers.
  ASSERT_TRUE(
      eventually([&] { return client.last_error().find("not registered within 300 ms") != std::string::npos; }, 5s))
      << client.last_error();
  auto stop_at = Clock::now();
  client.stop();  // in the middle of an attempt on the hung coordinator: no hang
  EXPECT_LT(ms_since(stop_at), 1000);
  coordinator.signal(SIGKILL);
  coordinator.reap();
}

TEST(ControlPlane, StreamWithoutRegisterIsEndedAfterHeartbeatTimeout) {
  ServerLog slog;
  ControlServer server(server_options(50ms, 300ms), slog.callbacks());
  auto stub = proto::Coordinator::NewStub(grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  auto start = Clock::now();
  auto stream = stub->Connect(&context);
  proto::CoordinatorMessage answer;
  EXPECT_FALSE(stream->Read(&answer));
  int64_t ended_ms = ms_since(start);
  grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_GE(ended_ms, 300);
  EXPECT_LT(ended_ms, 300 + 1000);
  std::lock_guard lock(slog.mu);
  EXPECT_TRUE(slog.registered.empty());
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

TEST(ControlPlane, DisconnectedWorkerReconnectsWithoutBeingLost) {
  ServerLog slog;
  ControlServer server(server_options(50ms, 5000ms), slog.callbacks());
  ControlClientOptions options;
  options.initial_backoff = 20ms;
  ClientLog clog;
  ControlClient client(registration("worker-d"), options, clog.callbacks());
  client.connect(server.address());
  ASSERT_TRUE(slog.wait([&] { return slog.registered.size() == 1; }));
  ASSERT_TRUE(clog.wait([&] { return clog.connected.size() == 1; }));  // it got Registered
  server.disconnect("worker-d");
  EXPECT_FALSE(server.send("worker-d", proto::CoordinatorMessage()));  // gone at once
  EXPECT_TRUE(server.workers().empty());
  ASSERT_TRUE(clog.wait([&] { return clog.disconnected.size() == 1; }));
  EXPECT_EQ(clog.disconnected[0].rfind("control stream to coordinator " + server.address() + ": the stream ended (", 0),
            0u)
      << clog.disconnected[0];
  ASSERT_TRUE(slog.wait([&] { return slog.registered.size() == 2; }));
  ASSERT_TRUE(clog.wait([&] { return clog.connected.size() == 2; }));
  EXPECT_EQ(server.workers(), std::vector<std::string>{"worker-d"});
  std::lock_guard lock(slog.mu);
  EXPECT_TRUE(slog.lost.empty());
}

TEST(ControlPlane, ResolverWithoutLeaderKeepsAsking) {
  ServerLog slog;
  ControlServer server(server_options(50ms, 5000ms), slog.callbacks());
  std::atomic<int> asked{0};
  ControlClientOptions options;
  options.initial_backoff = 10ms;
  options.max_backoff = 20ms;
  options.resolver = [&] { return ++asked < 5 ? std::string() : server.address(); };
  ClientLog clog;
  ControlClient client(registration("worker-n"), options, clog.callbacks());
  client.connect("127.0.0.1:1");  // not used: the resolver decides
  ASSERT_TRUE(client.wait_connected(10s)) << client.last_error();
  EXPECT_EQ(asked.load(), 5);
  EXPECT_EQ(client.last_error(), "no coordinator address (the resolver knows no leader now)");
  EXPECT_EQ(client.target(), server.address());
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

TEST(ControlPlane, LargeMessagesBothWays) {
  constexpr int kMessages = 32, kBytes = 1 << 20;  // a big JobGraphSpec, a big snapshot description
  ServerLog slog;
  ControlServer server(server_options(100ms, 10000ms), slog.callbacks());
  ClientLog clog;
  ControlClient client(registration("worker-big"), {}, clog.callbacks());
  client.connect(server.address());
  ASSERT_TRUE(client.wait_connected(10s)) << client.last_error();
  auto start = Clock::now();
  for (int i = 0; i < kMessages; ++i) {
    proto::CoordinatorMessage deploy;
    deploy.mutable_deploy()->set_attempt(i);
    deploy.mutable_deploy()->set_spec_json(std::string(kBytes, static_cast<char>('a' + i % 26)));
    ASSERT_TRUE(server.send("worker-big", deploy));
  }
  ASSERT_TRUE(clog.wait([&] { return clog.messages.size() == kMessages; }, 30s));
  int64_t down_us = us_between(start, Clock::now());
  start = Clock::now();
  for (int i = 0; i < kMessages; ++i) {
    proto::WorkerMessage ack;
    ack.mutable_checkpoint_ack()->set_checkpoint_id(i);
    ack.mutable_checkpoint_ack()->set_snapshot_json(std::string(kBytes, static_cast<char>('a' + i % 26)));
    ASSERT_TRUE(client.send(ack));
  }
  ASSERT_TRUE(slog.wait([&] { return slog.messages.size() == kMessages; }, 30s));
  int64_t up_us = us_between(start, Clock::now());
  std::cout << "32 x 1 MiB: coordinator -> worker " << (kMessages * 1e6 / down_us) << " MiB/s, worker -> coordinator "
            << (kMessages * 1e6 / up_us) << " MiB/s\n";
  for (int i = 0; i < kMessages; ++i) {
    EXPECT_EQ(clog.messages[i].deploy().attempt(), i);
    EXPECT_EQ(clog.messages[i].deploy().spec_json(), std::string(kBytes, static_cast<char>('a' + i % 26)));
    EXPECT_EQ(slog.messages[i].second.checkpoint_ack().checkpoint_id(), i);
    EXPECT_EQ(slog.messages[i].second.checkpoint_ack().snapshot_json(), std::string(kBytes, static_cast<char>('a' + i % 26)));
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
