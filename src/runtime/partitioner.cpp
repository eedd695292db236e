#include "clink/runtime/partitioner.hpp"

#include "clink/core/error.hpp"

namespace clink {

const char* partitioning_name(Partitioning p) {
  switch (p) {
    case Partitioning::kForward: return "forward";
    case Partitioning::kHash: return "hash";
    case Partitioning::kRebalance: return "rebalance";
    case Partitioning::kBroadcast: return "broadcast";
  }
  return "?";
}

Partitioning parse_partitioning(const std::string& name) {
  if (name == "forward") return Partitioning::kForward;
  if (name == "hash") return Partitioning::kHash;
  if (name == "rebalance") return Partitioning::kRebalance;
  if (name == "broadcast") return Partitioning::kBroadcast;
  throw ClinkError("unknown partitioning '" + name + "' (known: forward, hash, rebalance, broadcast)");
}

namespace {

class ForwardPartitioner final : public Partitioner {
 public:
  explicit ForwardPartitioner(int target) : target_(static_cast<std::size_t>(target)) {}
  void partition(BatchPtr batch, std::vector<BatchPtr>& out) override { out[target_] = std::move(batch); }

 private:
  std::size_t target_;
};

// Whole batches round-robin: balances load without splitting batches.
class RebalancePartitioner final : public Partitioner {
 public:
  RebalancePartitioner(int start, int targets) : next_(start % targets), targets_(targets) {}
  void partition(BatchPtr batch, std::vector<BatchPtr>& out) override {
    out[static_cast<std::size_t>(next_)] = std::move(batch);
    next_ = (next_ + 1) % targets_;
  }

 private:
  int next_;
  int targets_;
};

class BroadcastPartitioner final : public Partitioner {
 public:
  explicit BroadcastPartitioner(int targets) : targets_(targets) {}
  void partition(BatchPtr batch, std::vector<BatchPtr>& out) override {
    for (int i = 1; i < targets_; ++i) out[static_cast<std::size_t>(i)] = batch->clone();
    out[0] = std::move(batch);
  }

 private:
  int targets_;
};

}  // namespace

std::unique_ptr<Partitioner> make_forward_partitioner(int subtask, int targets) {
  return std::make_unique<ForwardPartitioner>(subtask % targets);
}
std::unique_ptr<Partitioner> make_rebalance_partitioner(int subtask, int targets) {
  return std::make_unique<RebalancePartitioner>(subtask, targets);
}
std::unique_ptr<Partitioner> make_broadcast_partitioner(int targets) {
  return std::make_unique<BroadcastPartitioner>(targets);
}

}  // namespace clink
