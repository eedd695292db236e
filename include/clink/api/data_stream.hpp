#pragma once
// The typed DataStream API (Flink's): sources, transformations, keying, side
// outputs, unions, two-input streams, sinks.
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "clink/api/environment.hpp"
#include "clink/api/functions.hpp"
#include "clink/api/operators.hpp"
#include "clink/api/sink.hpp"
#include "clink/api/two_phase_commit_sink.hpp"
#include "clink/connectors/print_sink.hpp"
#include "clink/operators/watermark_assigner_operator.hpp"

namespace clink {

template <class T, class K, class KeyFn>
class KeyedStream;
template <class A, class B>
class ConnectedStreams;
template <class T, class K, class KeyFn>
class WindowedStream;  // clink/api/windowed_stream.hpp

template <class T>
class DataStream {
 public:
  // One upstream of the next operator: a node's main or side output, and how to route.
  struct Producer {
    std::string node;
    std::string side_output;
    Partitioning partitioning = Partitioning::kForward;
    std::string key;
    PartitionerFactory hash;
  };

  DataStream(StreamExecutionEnvironment* env, std::string node, std::string side_output = {})
      : env_(env) {
    Producer p;
    p.node = std::move(node);
    p.side_output = std::move(side_output);
    producers_.push_back(std::move(p));
  }
  DataStream(StreamExecutionEnvironment* env, std::vector<Producer> producers)
      : env_(env), producers_(std::move(producers)) {}

  template <class F>
  auto map(F fn, std::string name = "Map") {
    using Out = std::decay_t<std::invoke_result_t<F&, const T&>>;
    return then<Out>("map", std::move(name), [fn] { return std::make_unique<MapOperator<T, Out, F>>(fn); });
  }
  template <class F>
  DataStream<T> filter(F fn, std::string name = "Filter") {
    return then<T>("filter", std::move(name), [fn] { return std::make_unique<FilterOperator<T, F>>(fn); });
  }
  // fn(const T&, Collector<Out>&)
  template <class Out, class F>
  DataStream<Out> flat_map(F fn, std::string name = "FlatMap") {
    return then<Out>("flat_map", std::move(name),
                     [fn] { return std::make_unique<FlatMapOperator<T, Out, F>>(fn); });
  }
  // fn: a ProcessFunction<T, Out> subclass, copied for every subtask.
  template <class Fn>
  auto process(Fn fn, std::string name = "Process") {
    using Out = typename Fn::output_type;
    static_assert(std::is_base_of_v<ProcessFunction<T, Out>, Fn>, "process() takes a ProcessFunction<T, Out>");
    return then<Out>("process", std::move(name),
                     [fn] { return std::make_unique<ProcessOperator<T, Out>>(std::make_shared<Fn>(fn)); });
  }

  // Flink's assignTimestampsAndWatermarks: stamps event time with the strategy's
  // timestamp assigner (if any) and emits its watermarks ("watermark_assigner"). Each
  // subtask gets its own copy of the strategy.
  DataStream<T> assign_timestamps_and_watermarks(const WatermarkStrategy<T>& strategy,
                                                 std::string name = "Timestamps/Watermarks") {
    std::shared_ptr<const WatermarkStrategy<T>> proto = strategy.clone();
    auto out = then<T>("watermark_assigner", std::move(name),
                       [proto] { return std::make_unique<WatermarkAssignerOperator<T>>(*proto); });
    out.node().params = watermark_strategy_params(strategy);
    return out;
  }

  template <class KeyFn>
  auto key_by(KeyFn key_fn, std::string key_name = "key") {
    using K = std::decay_t<std::invoke_result_t<KeyFn&, const T&>>;
    DataStream<T> s = routed(Partitioning::kHash);
    for (auto& p : s.producers_) {
      p.key = key_name;
      p.hash = hash_partitioner_factory<T>(key_fn);
    }
    return KeyedStream<T, K, KeyFn>(s, key_fn);
  }
  DataStream<T> rebalance() const { return routed(Partitioning::kRebalance); }
  DataStream<T> broadcast() const { return routed(Partitioning::kBroadcast); }
  DataStream<T> forward() const { return routed(Partitioning::kForward); }

  // Flink's union: the next operator reads all of these streams as one input.
  DataStream<T> union_with(const DataStream<T>& other) const {
    auto producers = producers_;
    producers.insert(producers.end(), other.producers_.begin(), other.producers_.end());
    return DataStream<T>(env_, std::move(producers));
  }
  template <class U>
  ConnectedStreams<T, U> connect(const DataStream<U>& other) const {
    return ConnectedStreams<T, U>(*this, other);
  }

  // The records this stream's operator sent to `tag`.
  template <class X>
  DataStream<X> side_output(const OutputTag<X>& tag) const {
    return DataStream<X>(env_, last_node(), tag.name);
  }

  void sink_to(std::shared_ptr<const Sink<T>> sink, std::string name = "Sink") {
    auto s = then<T>(sink->factory_name(), std::move(name),
                     [sink] { return std::make_unique<SinkOperator<T>>(sink); });
    if (sink->max_parallelism() > 0 && sink->max_parallelism() < env_->graph().parallelism_of(s.node()))
      s.set_parallelism(sink->max_parallelism());
  }
  // Exactly-once: commits on checkpoint completion (two-phase commit).
  void sink_to(std::shared_ptr<const TransactionalSink<T>> sink, std::string name = "Sink") {
    then<T>(sink->factory_name(), std::move(name),
            [sink] { return std::make_unique<TwoPhaseCommitSinkOperator<T>>(sink); });
  }
  void print(std::string name = "Print", PrintTarget target = PrintTarget::kStdout) {
    sink_to(std::make_shared<PrintSink<T>>(target), std::move(name));
  }

  // Settings of the operator that produces this stream.
  DataStream<T>& set_parallelism(int p) {
    node().parallelism = p;
    return *this;
  }
  DataStream<T>& set_max_parallelism(int p) {
    node().max_parallelism = p;
    return *this;
  }
  DataStream<T>& name(std::string n) {
    node().name = std::move(n);
    return *this;
  }
  DataStream<T>& uid(std::string u) {
    node().uid = std::move(u);
    return *this;
  }
  const std::string& id() const { return last_node(); }
  JobNode& node() { return env_->graph().node(last_node()); }
  StreamExecutionEnvironment& env() const { return *env_; }
  const std::vector<Producer>& producers() const { return producers_; }

  // Adds an operator reading this stream (input `input` of the new node).
  template <class Out>
  DataStream<Out> then(std::string factory, std::string name, OperatorBuilder build, int num_inputs = 1) {
    JobNode n;
    n.factory = std::move(factory);
    n.name = std::move(name);
    n.num_inputs = num_inputs;
    n.out_type = type_name<Out>();
    n.build = std::move(build);
    std::string id = env_->add_node(std::move(n));
    connect_to(id, 0);
    return DataStream<Out>(env_, id);
  }
  void connect_to(const std::string& target, int input) const {
    for (const auto& p : producers_) {
      JobEdge e;
      e.from = p.node;
      e.to = target;
      e.to_input = input;
      e.side_output = p.side_output;
      e.partitioning = p.partitioning;
      e.key = p.key;
      e.hash_partitioner = p.hash;
      env_->graph().add_edge(std::move(e));
    }
  }

 private:
  DataStream<T> routed(Partitioning p) const {
    auto producers = producers_;
    for (auto& pr : producers) {
      pr.partitioning = p;
      pr.hash = nullptr;
      pr.key.clear();
    }
    return DataStream<T>(env_, std::move(producers));
  }
  const std::string& last_node() const { return producers_.back().node; }

  StreamExecutionEnvironment* env_;
  std::vector<Producer> producers_;
};

template <class T, class K, class KeyFn>
class KeyedStream {
 public:
  KeyedStream(DataStream<T> stream, KeyFn key_fn) : stream_(std::move(stream)), key_fn_(std::move(key_fn)) {}

  // fn: a KeyedProcessFunction<K, T, Out> subclass, copied for every subtask.
  template <class Fn>
  auto process(Fn fn, std::string name = "KeyedProcess") {
    using Out = typename Fn::output_type;
    static_assert(std::is_base_of_v<KeyedProcessFunction<K, T, Out>, Fn>,
                  "process() on a keyed stream takes a KeyedProcessFunction<K, T, Out>");
    auto key_fn = key_fn_;
    return stream_.template then<Out>("keyed_process", std::move(name), [fn, key_fn] {
      return std::make_unique<KeyedProcessOperator<K, T, Out, KeyFn>>(std::make_shared<Fn>(fn), key_fn);
    });
  }
  // Flink's keyed windows: keyed.window(TumblingEventTimeWindows::of(10000)).reduce(...)
  // (include clink/api/windowed_stream.hpp).
  template <class Assigner>
  WindowedStream<T, K, KeyFn> window(const Assigner& assigner) const {
    return WindowedStream<T, K, KeyFn>(*this, assigner);
  }
  // Operators after key_by that do not need the key still receive hash-routed input.
  template <class F>
  auto map(F fn, std::string name = "Map") { return stream_.map(std::move(fn), std::move(name)); }
  template <class F>
  DataStream<T> filter(F fn, std::string name = "Filter") { return stream_.filter(std::move(fn), std::move(name)); }
  void sink_to(std::shared_ptr<const Sink<T>> sink, std::string name = "Sink") { stream_.sink_to(sink, name); }
  void sink_to(std::shared_ptr<const TransactionalSink<T>> sink, std::string name = "Sink") {
    stream_.sink_to(sink, name);
  }
  void print(std::string name = "Print") { stream_.print(std::move(name)); }

  const DataStream<T>& stream() const { return stream_; }
  const KeyFn& key_selector() const { return key_fn_; }

 private:
  DataStream<T> stream_;
  KeyFn key_fn_;
};

template <class A, class B>
class ConnectedStreams {
 public:
  ConnectedStreams(DataStream<A> first, DataStream<B> second) : first_(std::move(first)), second_(std::move(second)) {}

  // fn: a CoProcessFunction<A, B, Out> subclass, copied for every subtask.
  template <class Fn>
  auto process(Fn fn, std::string name = "CoProcess") {
    using Out = typename Fn::output_type;
    static_assert(std::is_base_of_v<CoProcessFunction<A, B, Out>, Fn>, "process() takes a CoProcessFunction<A, B, Out>");
    auto out = first_.template then<Out>(
        "co_process", std::move(name),
        [fn] { return std::make_unique<CoProcessOperator<A, B, Out>>(std::make_shared<Fn>(fn)); }, 2);
    second_.connect_to(out.id(), 1);
    return out;
  }
  // Two functions, one per input, with the same result type.
  template <class F1, class F2>
  auto map(F1 f1, F2 f2, std::string name = "CoMap") {
    using Out = std::decay_t<std::invoke_result_t<F1&, const A&>>;
    struct Fn final : CoProcessFunction<A, B, Out> {
      F1 f1;
      F2 f2;
      Fn(F1 a, F2 b) : f1(std::move(a)), f2(std::move(b)) {}
      void process_element1(const A& v, typename CoProcessFunction<A, B, Out>::Context&, Collector<Out>& out) override {
        out.collect(f1(v));
      }
      void process_element2(const B& v, typename CoProcessFunction<A, B, Out>::Context&, Collector<Out>& out) override {
        out.collect(f2(v));
      }
    };
    return process(Fn(std::move(f1), std::move(f2)), std::move(name));
  }

 private:
  DataStream<A> first_;
  DataStream<B> second_;
};

}  // namespace clink
