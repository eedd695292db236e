#include "run_services.hpp"

#include <unistd.h>

namespace clink::cli {

RunServices::RunServices(const RunOptions& run) {
  if (!run.quiet && ::isatty(STDERR_FILENO)) progress_ = std::make_unique<ProgressLine>(stderr);
  cluster::DispatcherOptions o;
  o.launcher = [](const std::string&, const JobGraph& graph, ExecutionOptions options) {
    return execute_async(graph, std::move(options));
  };
  dispatcher_ = std::make_unique<cluster::Dispatcher>(std::move(o));
}

RunServices::~RunServices() = default;

JobHandle RunServices::launch(const JobGraph& graph, const ExecutionOptions& options, cluster::JobTexts texts) {
  std::string id = dispatcher_->launch(graph, options, std::move(texts));
  auto job = dispatcher_->job(id);
  if (progress_) progress_->watch(job);
  return job->handle;
}

}  // namespace clink::cli
