#pragma once
#include <memory>
#include <string>
#include <vector>

#include "clink/api/collection_source.hpp"
#include "clink/api/source.hpp"
#include "clink/core/type_name.hpp"
#include "clink/runtime/executor.hpp"
#include "clink/runtime/job_graph.hpp"

namespace clink {

template <class T>
class DataStream;

// Entry point of the DataStream API: builds a JobGraph and runs it.
class StreamExecutionEnvironment {
 public:
  StreamExecutionEnvironment& set_parallelism(int p) {
    graph_.config.default_parallelism = p;
    return *this;
  }
  StreamExecutionEnvironment& set_max_parallelism(int p) {
    graph_.config.max_parallelism = p;
    return *this;
  }
  StreamExecutionEnvironment& set_channel_capacity(std::size_t batches) {
    graph_.config.channel_capacity = batches;
    return *this;
  }
  StreamExecutionEnvironment& disable_operator_chaining() {
    graph_.config.chaining = false;
    return *this;
  }
  StreamExecutionEnvironment& set_clock(const ProcessingTimeClock& clock) {
    options_.clock = &clock;
    return *this;
  }
  int parallelism() const { return graph_.config.default_parallelism; }

  template <class T>
  DataStream<T> from_source(std::shared_ptr<const Source<T>> source, std::string name = "Source");
  // Flink's fromSource(source, watermarkStrategy, name): the source applies the strategy
  // to each of its splits (a Kafka partition) and emits their minimum (split_watermarks.hpp).
  template <class T>
  DataStream<T> from_source(std::shared_ptr<const Source<T>> source, const WatermarkStrategy<T>& watermarks,
                            std::string name = "Source");
  template <class T>
  DataStream<T> from_collection(std::vector<T> values, std::string name = "Collection") {
    return from_source<T>(CollectionSource<T>::of(std::move(values)), std::move(name));
  }

  JobGraph& graph() { return graph_; }
  const JobGraph& graph() const { return graph_; }

  void execute(std::string job_name = "") {
    if (!job_name.empty()) graph_.name = std::move(job_name);
    clink::execute(graph_, options_);
  }
  JobHandle execute_async(std::string job_name = "") {
    if (!job_name.empty()) graph_.name = std::move(job_name);
    return clink::execute_async(graph_, options_);
  }

  // Adds a node with a fresh id derived from `kind`; returns the id.
  std::string add_node(JobNode node) {
    node.id = graph_.unique_id(node.factory);
    if (node.uid.empty()) node.uid = node.id;
    return graph_.add_node(std::move(node)).id;
  }

 private:
  JobGraph graph_;
  ExecutionOptions options_;
};

template <class T>
DataStream<T> StreamExecutionEnvironment::from_source(std::shared_ptr<const Source<T>> source, std::string name) {
  JobNode n;
  n.factory = source->factory_name();
  n.name = std::move(name);
  n.num_inputs = 0;
  n.out_type = type_name<T>();
  if (source->max_parallelism() > 0 && source->max_parallelism() < graph_.config.default_parallelism)
    n.parallelism = source->max_parallelism();
  n.build = [source] { return std::make_unique<ReaderSourceOperator<T>>(source); };
  return DataStream<T>(this, add_node(std::move(n)));
}

template <class T>
DataStream<T> StreamExecutionEnvironment::from_source(std::shared_ptr<const Source<T>> source,
                                                      const WatermarkStrategy<T>& watermarks, std::string name) {
  DataStream<T> s = from_source(source, std::move(name));
  std::shared_ptr<const WatermarkStrategy<T>> strategy = watermarks.clone();
  SplitWatermarkStrategies<T> check(*strategy);  // fail now, not in every subtask
  s.node().build = [source, strategy] {
    return std::make_unique<ReaderSourceOperator<T>>(source, kDefaultBatchSize, strategy);
  };
  return s;
}

}  // namespace clink
