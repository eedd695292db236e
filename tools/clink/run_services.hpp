#pragma once
// What a `clink run` serves while its jobs run. Every job it starts (a JobGraphSpec or
// each job of a SQL script) is launched here and registered with an in-process
// Dispatcher, the job table the coordinator's REST API reads, so the same REST server,
// web UI, Prometheus endpoint and the terminal's progress line see an embedded job as
// they see a job on a cluster.
#include <memory>

#include "clink/cluster/rest/dispatcher.hpp"
#include "clink/cluster/rest/prometheus.hpp"
#include "clink/runtime/executor.hpp"
#include "commands.hpp"

namespace clink::cli {

class RunServices {
 public:
  explicit RunServices(const RunOptions& options);
  ~RunServices();
  RunServices(const RunServices&) = delete;
  RunServices& operator=(const RunServices&) = delete;

  // Starts the job in this process (as execute_async) and registers it.
  JobHandle launch(const JobGraph& graph, const ExecutionOptions& options, cluster::JobTexts texts = {});

  cluster::Dispatcher& dispatcher() { return *dispatcher_; }

 private:
  std::unique_ptr<cluster::Dispatcher> dispatcher_;
  // --set metrics.reporter.prom.port=PORT: Flink's Prometheus endpoint (stopped before
  // the dispatcher goes).
  std::unique_ptr<cluster::PrometheusServer> prometheus_;
};

}  // namespace clink::cli
