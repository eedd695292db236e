#pragma once
// What a `clink run` serves while its jobs run. Every job it starts (a JobGraphSpec or
// each job of a SQL script) is launched here and registered with an in-process
// Dispatcher, the job table the coordinator's REST API reads, so the same REST server,
// web UI, Prometheus endpoint and the terminal's progress line see an embedded job as
// they see a job on a cluster.
#include <memory>

#include "clink/cluster/rest/dispatcher.hpp"
#include "clink/cluster/rest/rest_server.hpp"
#include "clink/cluster/rest/prometheus.hpp"
#include "clink/runtime/executor.hpp"
#include "commands.hpp"
#include "progress_line.hpp"

namespace clink::cli {

class RunServices {
 public:
  // With --web-ui, starts the REST server and web UI on 127.0.0.1:--rest-port and
  // prints "web UI: http://127.0.0.1:PORT/" on stderr; throws ClinkError naming the
  // address when it cannot bind.
  explicit RunServices(const RunOptions& options);
  // With the web UI: keeps it up a few seconds first, so that an open page shows how the
  // job ended (it refreshes every 2 s), unless the user interrupted the run.
  ~RunServices();
  RunServices(const RunServices&) = delete;
  RunServices& operator=(const RunServices&) = delete;

  // Starts the job in this process (as execute_async) and registers it.
  JobHandle launch(const JobGraph& graph, const ExecutionOptions& options, cluster::JobTexts texts = {});

  cluster::Dispatcher& dispatcher() { return *dispatcher_; }
  // The job ended or is being stopped: the progress line goes before the command prints.
  void progress_done() {
    if (progress_) progress_->watch(nullptr);
  }

 private:
  std::unique_ptr<cluster::Dispatcher> dispatcher_;
  std::unique_ptr<cluster::RestServer> rest_;  // --web-ui; stopped before the dispatcher goes
  std::unique_ptr<ProgressLine> progress_;  // stderr is a terminal and not --quiet
  // --set metrics.reporter.prom.port=PORT: Flink's Prometheus endpoint (stopped before
  // the dispatcher goes).
  std::unique_ptr<cluster::PrometheusServer> prometheus_;
};

}  // namespace clink::cli
