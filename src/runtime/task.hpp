#pragma once
// Internal to the executor: one task runs a chain of operators at one subtask index
// on its own thread.
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "clink/metrics/metric_registry.hpp"
#include "clink/runtime/input_gate.hpp"
#include "clink/runtime/job_graph.hpp"
#include "clink/runtime/operator.hpp"
#include "clink/runtime/partitioner.hpp"

namespace clink::detail {

// Where one output of an operator goes: the next operator of the chain, or channels.
class Target {
 public:
  virtual ~Target() = default;
  virtual void push(BatchPtr batch) = 0;
  virtual void push_watermark(Watermark wm) = 0;
  virtual void push_end() = 0;
};

struct OperatorHost;

class HostOutput final : public Output {
 public:
  void emit(BatchPtr batch) override;
  void emit_watermark(Watermark wm) override;
  void emit_side(const std::string& tag, BatchPtr batch) override;
  void end_network_outputs();

  OperatorMetrics* metrics = nullptr;
  std::vector<std::unique_ptr<Target>> main;
  std::map<std::string, std::vector<std::unique_ptr<Target>>> sides;

 private:
  static void fan_out(std::vector<std::unique_ptr<Target>>& targets, BatchPtr batch);
};

struct OperatorHost {
  const JobNode* node = nullptr;
  std::unique_ptr<StreamOperator> op;
  std::unique_ptr<RuntimeContext> ctx;
  HostOutput output;
  std::shared_ptr<OperatorMetrics> metrics;
  std::string display_name;  // "Map (1/2)"
};

// Thrown when an operator inside a chain fails, carrying the attributed message.
class OperatorFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Calls into a chained operator, attributing its failures.
class ChainedTarget final : public Target {
 public:
  explicit ChainedTarget(OperatorHost* next) : next_(next) {}
  void push(BatchPtr batch) override;
  void push_watermark(Watermark wm) override;
  void push_end() override {}

 private:
  OperatorHost* next_;
};

class NetworkTarget final : public Target {
 public:
  NetworkTarget(std::unique_ptr<Partitioner> partitioner, std::vector<InputGate*> gates,
                std::vector<std::size_t> channels, TaskTimeMetrics* time)
      : partitioner_(std::move(partitioner)),
        gates_(std::move(gates)),
        channels_(std::move(channels)),
        scratch_(gates_.size()),
        time_(time) {}
  void push(BatchPtr batch) override;
  void push_watermark(Watermark wm) override;
  void push_end() override;

 private:
  std::unique_ptr<Partitioner> partitioner_;
  std::vector<InputGate*> gates_;
  std::vector<std::size_t> channels_;  // our channel index at each target's gate
  std::vector<BatchPtr> scratch_;
  TaskTimeMetrics* time_;
};

class JobControl {
 public:
  virtual ~JobControl() = default;
  virtual bool cancelled() const = 0;
  virtual void fail(const std::string& message) = 0;
};

class Task {
 public:
  Task(std::string name, JobControl& job, const ProcessingTimeClock& clock)
      : name_(std::move(name)), job_(job), clock_(clock), time_(std::make_shared<TaskTimeMetrics>()) {}

  void run();  // the thread body: never throws

  std::vector<std::unique_ptr<OperatorHost>> chain;  // head first
  std::unique_ptr<InputGate> gate;                   // null for source tasks
  const std::string& name() const { return name_; }
  std::shared_ptr<TaskTimeMetrics> time_metrics() const { return time_; }

 private:
  void run_source();
  void run_inputs();
  void fire_processing_timers();
  std::chrono::steady_clock::time_point next_wakeup() const;
  void end_of_input();
  void call_head(const char* what, const std::function<void()>& fn);

  std::string name_;
  JobControl& job_;
  const ProcessingTimeClock& clock_;
  std::shared_ptr<TaskTimeMetrics> time_;
};

}  // namespace clink::detail
