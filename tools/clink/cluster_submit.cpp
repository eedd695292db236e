// `clink run FILE --coordinator HOST:PORT`: a JobGraphSpec is posted as loaded (with -p
// and --set applied the way `clink run` applies them); a SQL script is planned here,
// statement by statement as `clink run` runs it, and each job it makes is posted
// instead of run. Each job id is printed on its own line; the jobs outlive the client.
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "clink/core/error.hpp"
#include "clink/sql/parser/parser.hpp"
#include "cluster_client.hpp"
#include "commands.hpp"
#include "sql_session.hpp"

namespace clink::cli {

nlohmann::json rest_call(cluster::RestClient& client, const std::string& method, const std::string& path,
                         const nlohmann::json& body) {
  cluster::RestResponse r = method == "GET"     ? client.get(path)
                            : method == "PATCH" ? client.patch(path, body.dump())
                                                : client.post(path, body.dump());
  std::string where = fmt::format("{}:{}", client.host(), client.port());
  if (r.status == 0) throw ClinkError(fmt::format("cannot reach the coordinator at {}: {}", where, r.error));
  nlohmann::json parsed = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  if (r.status >= 200 && r.status < 300) {
    if (parsed.is_discarded()) throw ClinkError(fmt::format("{} {} at {}: the answer is not JSON", method, path, where));
    return parsed;
  }
  std::string message;
  if (!parsed.is_discarded() && parsed.contains("errors"))
    for (const auto& e : parsed["errors"]) message += (message.empty() ? "" : "; ") + e.get<std::string>();
  if (message.empty()) message = r.body;
  throw ClinkError(fmt::format("coordinator {} (HTTP {}): {}", where, r.status, message));
}

std::string absolute_location(const std::string& location) {
  if (location.empty() || location.find("://") != std::string::npos) return location;
  return std::filesystem::absolute(location).lexically_normal().string();
}

namespace {

// The run flags as the "options" of POST /api/v1/jobs/spec (Flink's config keys).
nlohmann::json submit_options(const RunOptions& opts) {
  if (!opts.savepoint_on_stop.empty())
    throw ClinkError("--savepoint-on-stop applies to jobs run here; stop a coordinator's job with "
                     "`clink stop JOB --savepoint DIR --coordinator HOST:PORT`");
  if (opts.metrics)
    throw ClinkError("--metrics applies to jobs run here; a coordinator's job shows its metrics at GET /jobs/<job id>");
  if (!opts.from_checkpoint.empty() && !opts.from_savepoint.empty())
    throw ClinkError("give --from-checkpoint or --from-savepoint, not both");
  nlohmann::json o = nlohmann::json::object();
  if (opts.job.parallelism > 0) o["parallelism.default"] = opts.job.parallelism;
  if (!opts.checkpoint_dir.empty()) o["execution.checkpointing.dir"] = absolute_location(opts.checkpoint_dir);
  if (opts.checkpoint_interval_ms > 0) o["execution.checkpointing.interval"] = opts.checkpoint_interval_ms;
  if (opts.retained != 1) o["execution.checkpointing.num-retained"] = opts.retained;
  if (opts.at_least_once) o["execution.checkpointing.mode"] = "AT_LEAST_ONCE";
  if (opts.state_backend != "memory") o["state.backend.type"] = opts.state_backend;
  std::string from = !opts.from_checkpoint.empty() ? opts.from_checkpoint : opts.from_savepoint;
  if (!from.empty()) o["execution.state-recovery.path"] = absolute_location(from);
  if (opts.allow_non_restored) o["execution.state-recovery.ignore-unclaimed-state"] = true;
  if (opts.failover_strategy != "region") o["jobmanager.execution.failover-strategy"] = opts.failover_strategy;
  if (opts.restart_attempts > 0) {
    if (opts.restart_backoff) {
      o["restart-strategy.type"] = "exponential-delay";
      o["restart-strategy.exponential-delay.attempts-before-reset-backoff"] = opts.restart_attempts;
      o["restart-strategy.exponential-delay.initial-backoff"] = fmt::format("{} ms", opts.restart_delay_ms);
    } else {
      o["restart-strategy.type"] = "fixed-delay";
      o["restart-strategy.fixed-delay.attempts"] = opts.restart_attempts;
      o["restart-strategy.fixed-delay.delay"] = fmt::format("{} ms", opts.restart_delay_ms);
    }
  }
  return o;
}

std::string post_spec(cluster::RestClient& client, const nlohmann::json& spec, const nlohmann::json& options) {
  auto r = rest_call(client, "POST", "/api/v1/jobs/spec", {{"spec", spec}, {"options", options}});
  std::string id = r.value("jobid", "");
  std::printf("%s\n", id.c_str());
  std::fflush(stdout);
  return id;
}

// A script for the coordinator's SQL (materialized-table statements): the ids of the
// jobs it started are printed like a submitted spec's.
void post_sql(cluster::RestClient& client, const std::string& script, const nlohmann::json& options) {
  auto r = rest_call(client, "POST", "/api/v1/jobs/sql", {{"script", script}, {"options", options}});
  for (const auto& id : r.value("jobids", nlohmann::json::array())) std::printf("%s\n", id.get<std::string>().c_str());
  std::fflush(stdout);
}

int submit_sql(const RunOptions& opts, cluster::RestClient& client, const nlohmann::json& options) {
  const std::string& path = opts.job.path;
  sql::ast::Script script;
  std::unique_ptr<SqlSession> session;
  SqlJobSettings settings;
  settings.sets = opts.job.sets;  // -p goes in the options: the coordinator applies it
  settings.submit = [&](nlohmann::json& spec) { post_spec(client, spec, options); };
  settings.forward_sql = [&](const std::string& sql) { post_sql(client, sql, options); };
  try {
    script = sql::parse(read_file(path));  // the whole script parses before anything is submitted
    session = std::make_unique<SqlSession>(settings, opts.catalog_dir, stdout);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s: %s\n", path.c_str(), e.what());
    return kExitError;
  }
  for (const auto& st : script.statements) {
    try {
      session->execute(st);
    } catch (const std::exception& e) {
      std::fflush(stdout);
      std::fprintf(stderr, "error: %s: %s\n", path.c_str(), describe_error(e, st.pos).c_str());
      return kExitError;
    }
  }
  return kExitOk;
}

}  // namespace

int submit_to_coordinator(const RunOptions& opts) {
  try {
    cluster::RestClient client(opts.coordinator);
    nlohmann::json options = submit_options(opts);
    if (is_sql_file(opts.job.path)) return submit_sql(opts, client, options);
    if (!opts.catalog_dir.empty()) throw ClinkError("--catalog-dir applies to SQL scripts only");
    nlohmann::json spec = nlohmann::json::parse(read_file(opts.job.path), nullptr, /*allow_exceptions=*/false);
    if (spec.is_discarded() || !spec.is_object())
      throw ClinkError(fmt::format("job spec '{}' is not a JSON object", opts.job.path));
    for (const auto& s : opts.job.sets) apply_override(spec, s);
    post_spec(client, spec, options);
    return kExitOk;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitError;
  }
}

}  // namespace clink::cli
