#include "run_services.hpp"

namespace clink::cli {

RunServices::RunServices(const RunOptions&) {
  cluster::DispatcherOptions o;
  o.launcher = [](const std::string&, const JobGraph& graph, ExecutionOptions options) {
    return execute_async(graph, std::move(options));
  };
  dispatcher_ = std::make_unique<cluster::Dispatcher>(std::move(o));
}

RunServices::~RunServices() = default;

JobHandle RunServices::launch(const JobGraph& graph, const ExecutionOptions& options, cluster::JobTexts texts) {
  std::string id = dispatcher_->launch(graph, options, std::move(texts));
  return dispatcher_->job(id)->handle;
}

}  // namespace clink::cli
