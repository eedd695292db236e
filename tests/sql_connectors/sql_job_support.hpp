#pragma once
// Building small jobs of SQL connectors for tests: nodes from the registry by factory
// name and params (as the planner's spec would), plus test-only operators (a source of
// given changelog batches, a pass-through that fails once).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "clink/connectors/sql/sql_connector_params.hpp"
#include "clink/registry/builtin_registry.hpp"
#include "clink/runtime/job_graph.hpp"
#include "clink/runtime/operator_registry.hpp"
#include "clink/sql/common/column_batch.hpp"

namespace clink::test {

namespace fs = std::filesystem;
using nlohmann::json;

inline json schema_json(const std::vector<std::pair<std::string, std::string>>& fields) {
  json s = json::array();
  for (const auto& [n, t] : fields) s.push_back({{"name", n}, {"type", t}});
  return s;
}

inline sql::SchemaPtr schema_of(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::vector<sql::RowField> f;
  for (const auto& [n, t] : fields) f.push_back({n, sql::parse_logical_type(t)});
  return sql::make_schema(std::move(f));
}

// A node built by the registry's factory `factory` from `params`.
inline JobNode registry_node(const std::string& id, const std::string& factory, json params, int parallelism = 1) {
  const auto& info = builtin_registry().get(factory);
  std::vector<std::string> inputs(static_cast<std::size_t>(info.num_inputs), sql::kSqlRowType);
  OperatorSpecContext ctx{id, params, inputs};
  JobNode n;
  n.id = n.name = n.uid = id;
  n.factory = factory;
  n.params = params;
  n.num_inputs = info.num_inputs;
  n.out_type = info.out_type(ctx);
  n.parallelism = parallelism;
  n.build = info.make(ctx);
  return n;
}

inline JobEdge forward(const std::string& from, const std::string& to, std::string side = {}) {
  JobEdge e;
  e.from = from;
  e.to = to;
  e.side_output = std::move(side);
  return e;
}
inline JobEdge rebalance(const std::string& from, const std::string& to) {
  JobEdge e = forward(from, to);
  e.partitioning = Partitioning::kRebalance;
  return e;
}

// Emits the given batches, one per poll, then ends.
class BatchesSource final : public SourceOperator {
 public:
  explicit BatchesSource(std::vector<sql::ColumnBatch> batches) : batches_(std::move(batches)) {}
  PollStatus poll_next() override {
    if (next_ < batches_.size()) output().emit(std::make_unique<sql::ColumnBatch>(batches_[next_++]));
    return next_ < batches_.size() ? PollStatus::kMore : PollStatus::kEnd;
  }

 private:
  std::vector<sql::ColumnBatch> batches_;
  std::size_t next_ = 0;
};

inline JobNode batches_node(const std::string& id, std::vector<sql::ColumnBatch> batches) {
  JobNode n;
  n.id = n.name = n.uid = id;
  n.factory = "test_batches";
  n.out_type = sql::kSqlRowType;
  n.num_inputs = 0;
  n.parallelism = 1;
  n.build = [batches] { return std::make_unique<BatchesSource>(batches); };
  return n;
}

// Passes batches on, sleeping `pause_ms` per batch (so that checkpoints happen while
// the job runs) and failing once, `failures` times in all, when the rows it passed
// reach `fail_at`.
struct FailOnce {
  std::atomic<int> failures{1};
  std::int64_t fail_at = -1;
  int pause_ms = 0;
};
class FailingPassThrough final : public StreamOperator {
 public:
  explicit FailingPassThrough(std::shared_ptr<FailOnce> f) : f_(std::move(f)) {}
  void process_batch(int, BatchPtr batch) override {
    if (f_->pause_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(f_->pause_ms));
    seen_ += static_cast<std::int64_t>(batch->size());
    if (f_->fail_at >= 0 && seen_ >= f_->fail_at && f_->failures.fetch_sub(1) > 0)
      throw std::runtime_error("injected failure after " + std::to_string(seen_) + " rows");
    output().emit(std::move(batch));
  }

 private:
  std::shared_ptr<FailOnce> f_;
  std::int64_t seen_ = 0;
};
inline JobNode failing_node(const std::string& id, std::shared_ptr<FailOnce> f, int parallelism = 1) {
  JobNode n;
  n.id = n.name = n.uid = id;
  n.factory = "test_failing";
  n.out_type = sql::kSqlRowType;
  n.parallelism = parallelism;
  n.build = [f] { return std::make_unique<FailingPassThrough>(f); };
  return n;
}

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_file(const fs::path& p, const std::string& content) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << content;
}

// Relative paths of the files below `dir` (hidden ones included), sorted.
inline std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out.push_back(fs::relative(e.path(), dir).string());
  std::sort(out.begin(), out.end());
  return out;
}

// Every line of the visible files below `dir`, sorted.
inline std::vector<std::string> committed_lines(const fs::path& dir) {
  std::vector<std::string> lines;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().filename().string()[0] == '.') continue;
    std::istringstream in(slurp(e.path()));
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

}  // namespace clink::test
