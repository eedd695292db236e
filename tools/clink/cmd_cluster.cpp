// The cluster's client commands `clink list|cancel|stop|savepoint --coordinator HOST:PORT`, which
// print what Flink's CLI prints for the same commands.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "clink/cluster/config/cluster_config.hpp"
#include "clink/cluster/rest/dispatcher.hpp"
#include "clink/cluster/rest/rest_server.hpp"
#include "clink/core/error.hpp"
#include "cluster_client.hpp"
#include "commands.hpp"

namespace clink::cli {
namespace {

// ---- client commands ----

struct ClientOptions {
  std::string coordinator = "127.0.0.1:8081";
  std::string job;
  std::string directory;
  bool drain = false;
  bool all = false;
};

void add_coordinator_option(CLI::App& cmd, ClientOptions& o) {
  cmd.add_option("--coordinator,-m", o.coordinator, "HOST:PORT of the coordinator's REST API")->default_val("127.0.0.1:8081");
}

std::string format_time(std::int64_t ms) {
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm local{};
  localtime_r(&t, &local);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%d.%m.%Y %H:%M:%S", &local);
  return buf;
}

// As `flink list`: running and scheduled jobs, and with --all the terminated ones.
int list_jobs(const ClientOptions& o) {
  cluster::RestClient client(o.coordinator);
  auto r = rest_call(client, "GET", "/jobs/overview");
  std::vector<nlohmann::json> running, scheduled, terminated;
  for (const auto& j : r.at("jobs")) {
    std::string state = j.value("state", "");
    if (state == "RUNNING" || state == "RESTARTING") running.push_back(j);
    else if (state == "CREATED" || state == "INITIALIZING") scheduled.push_back(j);
    else terminated.push_back(j);
  }
  auto print = [](const char* title, std::vector<nlohmann::json> jobs) {
    std::sort(jobs.begin(), jobs.end(),
              [](const auto& a, const auto& b) { return a.value("start-time", 0LL) < b.value("start-time", 0LL); });
    std::printf("%s\n", title);
    for (const auto& j : jobs)
      std::printf("%s : %s : %s (%s)\n", format_time(j.value("start-time", 0LL)).c_str(), j.value("jid", "").c_str(),
                  j.value("name", "").c_str(), j.value("state", "").c_str());
    std::printf("--------------------------------------------------------------\n");
  };
  if (running.empty()) std::printf("No running jobs.\n");
  else print("------------------ Running/Restarting Jobs -------------------", running);
  if (scheduled.empty()) std::printf("No scheduled jobs.\n");
  else print("----------------------- Scheduled Jobs -----------------------", scheduled);
  if (o.all) {
    if (terminated.empty()) std::printf("No terminated jobs.\n");
    else print("---------------------- Terminated Jobs -----------------------", terminated);
  }
  return kExitOk;
}

int cancel_job(const ClientOptions& o) {
  cluster::RestClient client(o.coordinator);
  rest_call(client, "PATCH", fmt::format("/jobs/{}?mode=cancel", o.job));
  std::printf("Cancelled job %s.\n", o.job.c_str());
  return kExitOk;
}

// Polls a savepoint trigger until it completed; returns the savepoint's path.
std::string await_savepoint(cluster::RestClient& client, const std::string& job, const std::string& trigger) {
  for (;;) {
    auto r = rest_call(client, "GET", fmt::format("/jobs/{}/savepoints/{}", job, trigger));
    if (r.at("status").value("id", "") == "COMPLETED") {
      const auto& op = r.at("operation");
      if (op.contains("location")) return op["location"].get<std::string>();
      std::string cause = op.contains("failure-cause") ? op["failure-cause"].value("stack-trace", "") : "";
      throw ClinkError(cause.empty() ? fmt::format("the savepoint of job {} failed", job) : cause);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

int savepoint_job(const ClientOptions& o, bool stop) {
  cluster::RestClient client(o.coordinator);
  std::string dir = absolute_location(o.directory);
  nlohmann::json r = stop ? rest_call(client, "POST", fmt::format("/jobs/{}/stop", o.job),
                                      {{"targetDirectory", dir.empty() ? nlohmann::json() : nlohmann::json(dir)},
                                       {"drain", o.drain}})
                          : rest_call(client, "POST", fmt::format("/jobs/{}/savepoints", o.job),
                                      {{"target-directory", dir.empty() ? nlohmann::json() : nlohmann::json(dir)},
                                       {"cancel-job", false}});
  std::printf("%s\n", await_savepoint(client, o.job, r.at("request-id").get<std::string>()).c_str());
  return kExitOk;
}

int guarded(const std::function<int()>& fn) {
  try {
    return fn();
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitError;
  }
}

}  // namespace

void add_cluster_commands(CLI::App& app, int& exit_code) {
  auto lopts = std::make_shared<ClientOptions>();
  auto* list = app.add_subcommand("list", "List a coordinator's jobs (as `flink list`)");
  add_coordinator_option(*list, *lopts);
  list->add_flag("-a,--all", lopts->all, "Also the terminated jobs");
  list->callback([lopts, &exit_code] { exit_code = guarded([&] { return list_jobs(*lopts); }); });

  auto xopts = std::make_shared<ClientOptions>();
  auto* cancel = app.add_subcommand("cancel", "Cancel a coordinator's job");
  add_coordinator_option(*cancel, *xopts);
  cancel->add_option("job", xopts->job, "The job id")->required();
  cancel->callback([xopts, &exit_code] { exit_code = guarded([&] { return cancel_job(*xopts); }); });

  auto sopts = std::make_shared<ClientOptions>();
  auto* stop = app.add_subcommand("stop", "Stop a coordinator's job with a savepoint; prints the savepoint's path");
  add_coordinator_option(*stop, *sopts);
  stop->add_option("job", sopts->job, "The job id")->required();
  stop->add_option("--savepoint,-p", sopts->directory,
                   "Directory the savepoint goes into (default: the coordinator's execution.checkpointing.savepoint-dir)");
  stop->add_flag("--drain,-d", sopts->drain, "Advance event time to the end before stopping");
  stop->callback([sopts, &exit_code] { exit_code = guarded([&] { return savepoint_job(*sopts, true); }); });

  auto popts = std::make_shared<ClientOptions>();
  auto* savepoint = app.add_subcommand("savepoint", "Take a savepoint of a coordinator's job; prints its path");
  add_coordinator_option(*savepoint, *popts);
  savepoint->add_option("job", popts->job, "The job id")->required();
  savepoint->add_option("directory", popts->directory,
                        "Directory the savepoint goes into (default: the coordinator's execution.checkpointing.savepoint-dir)");
  savepoint->callback([popts, &exit_code] { exit_code = guarded([&] { return savepoint_job(*popts, false); }); });
}

}  // namespace clink::cli
