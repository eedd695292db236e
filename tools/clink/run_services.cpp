#include "run_services.hpp"

#include <cstdio>

namespace clink::cli {

RunServices::RunServices(const RunOptions& opts) {
  cluster::DispatcherOptions o;
  o.launcher = [](const std::string&, const JobGraph& graph, ExecutionOptions options) {
    return execute_async(graph, std::move(options));
  };
  dispatcher_ = std::make_unique<cluster::Dispatcher>(std::move(o));
  if (auto prom = cluster::prometheus_options(process_config(opts.job.sets))) {
    prometheus_ = std::make_unique<cluster::PrometheusServer>(*dispatcher_, *prom);
    prometheus_->start();
    // stderr: stdout is the job's (a print sink's) output.
    std::fprintf(stderr, "prometheus: http://%s:%d/metrics\n", prometheus_->host().c_str(), prometheus_->port());
  }
}

RunServices::~RunServices() = default;

JobHandle RunServices::launch(const JobGraph& graph, const ExecutionOptions& options, cluster::JobTexts texts) {
  std::string id = dispatcher_->launch(graph, options, std::move(texts));
  return dispatcher_->job(id)->handle;
}

}  // namespace clink::cli
