#pragma once
// Flink's PrometheusReporter, in clink: GET /metrics on its own port answers every job's
// metrics in the Prometheus text format 0.0.4, with Flink's names and labels
// (flink_taskmanager_job_task_operator_numRecordsIn{job_id=...,operator_name=...}),
// plus the process's SQL pipeline counters (clink_sql_*). docs/metrics.md lists them.
// Configured with Flink's key metrics.reporter.prom.port (a port or a range "9250-9260",
// the first free one is taken) and clink's metrics.reporter.prom.host (the address to
// bind; 127.0.0.1, loopback only, unless set).
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace clink::cluster {

class Dispatcher;

struct PrometheusOptions {
  std::string host = "127.0.0.1";
  int first_port = 9249;  // Flink's default
  int last_port = 9249;
};

// The reporter's options from a configuration (Flink's keys, as config.yaml or --set give
// them); nullopt when metrics.reporter.prom.port is not set. Throws ClinkError naming the
// key when a value is bad.
std::optional<PrometheusOptions> prometheus_options(const std::map<std::string, std::string>& config);

// The exposition text of everything `dispatcher` runs (the scrape's body).
std::string prometheus_text(const Dispatcher& dispatcher);

class PrometheusServer {
 public:
  PrometheusServer(const Dispatcher& dispatcher, PrometheusOptions options);
  ~PrometheusServer();
  PrometheusServer(const PrometheusServer&) = delete;
  PrometheusServer& operator=(const PrometheusServer&) = delete;

  // Binds the first free port of the range and serves; throws ClinkError naming the
  // address and the key when none is free.
  void start();
  void stop();
  int port() const;
  const std::string& host() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace clink::cluster
