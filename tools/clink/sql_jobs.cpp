// The SQL client's job statements in `clink sql`: SHOW JOBS and STOP JOB 'id' [WITH
// SAVEPOINT] [WITH DRAIN], answered as Flink's SQL client answers them (a table of
// `job id`, `job name`, `status`, `start time`; a `savepoint path`). With --coordinator
// they go to its REST API (Flink's /jobs/overview, /jobs/:id/stop, PATCH /jobs/:id);
// embedded, SHOW JOBS lists the jobs this session ran (each ran in the foreground).
#include <chrono>
#include <ctime>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "clink/cluster/rest/rest_server.hpp"
#include "clink/core/error.hpp"
#include "clink/sql/handler/catalog_ddl.hpp"
#include "cluster_client.hpp"
#include "sql_session.hpp"

namespace clink::cli {
namespace {

// TIMESTAMP_LTZ(3) in the session's (the machine's) time zone, as the client prints it.
std::string local_timestamp(std::int64_t ms) {
  std::time_t s = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  localtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return fmt::format("{}.{:03}", buf, ms % 1000);
}

std::string random_job_id() {
  std::random_device rd;
  std::mt19937_64 gen((static_cast<std::uint64_t>(rd()) << 32) ^ rd());
  return fmt::format("{:016x}{:016x}", gen(), gen());
}

}  // namespace

void SqlSession::record_job(const JobGraph& graph, const JobHandle& handle, std::int64_t start_ms) {
  JobStatus status = handle.status();
  jobs_.push_back({random_job_id(), graph.name, job_status_name(status == JobStatus::kRunning ? JobStatus::kCanceled : status),
                   start_ms});
}

std::string SqlSession::show_jobs() const {
  std::vector<std::vector<std::string>> rows;
  if (!settings_.coordinator.empty()) {
    cluster::RestClient client(settings_.coordinator);
    auto r = rest_call(client, "GET", "/jobs/overview");
    for (const auto& j : r.at("jobs"))
      rows.push_back({j.value("jid", ""), j.value("name", ""), j.value("state", ""),
                      local_timestamp(j.value("start-time", std::int64_t{0}))});
  } else {
    for (const auto& j : jobs_) rows.push_back({j.id, j.name, j.status, local_timestamp(j.start_ms)});
  }
  if (rows.empty()) return "Empty set\n";
  return sql::format_tableau({"job id", "job name", "status", "start time"}, rows);
}

std::string SqlSession::stop_job(const sql::ast::StopJob& st) {
  if (settings_.coordinator.empty())
    throw ClinkError(fmt::format(
        "Could not stop job {}: it is not running. An embedded `clink sql` runs each job in the foreground "
        "(Ctrl-C stops it); connect to a cluster with `clink sql --coordinator HOST:PORT` to stop its jobs",
        st.job_id));
  cluster::RestClient client(settings_.coordinator);
  if (!st.with_savepoint) {  // Flink's client cancels the job
    rest_call(client, "PATCH", fmt::format("/jobs/{}?mode=cancel", st.job_id));
    return "[INFO] Execute statement succeeded.\n";
  }
  const auto& session = runner_.session();
  nlohmann::json dir;  // null: the coordinator's execution.checkpointing.savepoint-dir
  for (const char* key : {"execution.checkpointing.savepoint-dir", "state.savepoints.dir"})
    if (auto it = session.find(key); it != session.end()) dir = absolute_location(it->second);
  auto r = rest_call(client, "POST", fmt::format("/jobs/{}/stop", st.job_id), {{"targetDirectory", dir}, {"drain", st.with_drain}});
  const std::string trigger = r.at("request-id").get<std::string>();
  for (;;) {
    auto s = rest_call(client, "GET", fmt::format("/jobs/{}/savepoints/{}", st.job_id, trigger));
    if (s.at("status").value("id", "") == "COMPLETED") {
      const auto& op = s.at("operation");
      if (!op.contains("location"))
        throw ClinkError(fmt::format("Could not stop job {} with savepoint: {}", st.job_id,
                                     op.contains("failure-cause") ? op["failure-cause"].value("stack-trace", "") : ""));
      return sql::format_tableau({"savepoint path"}, {{op["location"].get<std::string>()}});
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace clink::cli
