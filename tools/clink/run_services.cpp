#include "run_services.hpp"

#include <chrono>
#include <cstdio>
#include <thread>

#include <unistd.h>

#include <fmt/format.h>

#include "clink/core/error.hpp"

#include "sql_session.hpp"  // stop_requested

namespace clink::cli {

RunServices::RunServices(const RunOptions& options) {
  if (!options.quiet && ::isatty(STDERR_FILENO)) progress_ = std::make_unique<ProgressLine>(stderr);
  cluster::DispatcherOptions o;
  o.launcher = [](const std::string&, const JobGraph& graph, ExecutionOptions execution) {
    return execute_async(graph, std::move(execution));
  };
  dispatcher_ = std::make_unique<cluster::Dispatcher>(std::move(o));
  if (auto prom = cluster::prometheus_options(process_config(options.job.sets))) {
    prometheus_ = std::make_unique<cluster::PrometheusServer>(*dispatcher_, *prom);
    prometheus_->start();
    // stderr: stdout is the job's (a print sink's) output.
    std::fprintf(stderr, "prometheus: http://%s:%d/metrics\n", prometheus_->host().c_str(), prometheus_->port());
  }
  if (options.web_ui) {
    cluster::RestServerOptions rest;
    rest.address = "127.0.0.1";  // loopback: the UI can cancel and stop the job
    rest.port = options.rest_port;
    rest_ = std::make_unique<cluster::RestServer>(*dispatcher_, std::move(rest));
    try {
      rest_->start();
    } catch (const ClinkError&) {
      throw ClinkError(fmt::format("--web-ui: cannot listen on 127.0.0.1:{} (--rest-port): the port is in use",
                                   options.rest_port));
    }
    std::fprintf(stderr, "web UI: http://%s:%d/\n", rest_->address().c_str(), rest_->port());
  }
}

RunServices::~RunServices() {
  if (!rest_) return;
  constexpr auto kLinger = std::chrono::seconds(3);
  auto until = std::chrono::steady_clock::now() + kLinger;
  while (std::chrono::steady_clock::now() < until && !stop_requested().load())
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  rest_->stop();
}

JobHandle RunServices::launch(const JobGraph& graph, const ExecutionOptions& options, cluster::JobTexts texts) {
  std::string id = dispatcher_->launch(graph, options, std::move(texts));
  auto job = dispatcher_->job(id);
  if (progress_) progress_->watch(job);
  return job->handle;
}

}  // namespace clink::cli
