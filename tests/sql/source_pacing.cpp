#include "source_pacing.hpp"

#include <stdexcept>
#include <string>

#include "clink/runtime/operator.hpp"
#include "clink/runtime/runtime_context.hpp"

namespace clink::test {

namespace {

// Runs the wrapped source on the same context, seeing its emissions through itself.
class PacedSource final : public SourceOperator, private Output {
 public:
  PacedSource(std::unique_ptr<StreamOperator> inner, std::shared_ptr<SourcePacing> pacing)
      : inner_(std::move(inner)), source_(dynamic_cast<SourceOperator*>(inner_.get())), pacing_(std::move(pacing)) {
    if (!source_) throw std::logic_error("pace_sources: a node without inputs is not a SourceOperator");
  }

  void open(RuntimeContext& ctx) override {
    SourceOperator::open(ctx);
    downstream_ = &ctx.output();
    ctx.set_output(this);
    inner_->open(ctx);
  }

  PollStatus poll_next() override {
    if (phase_ == Phase::kAwaitSnapshot || phase_ == Phase::kAwaitCompletion) return PollStatus::kNothingAvailable;
    if (phase_ == Phase::kCovered) {
      phase_ = Phase::kFree;
      step();
    }
    if (ended_) return PollStatus::kEnd;
    emitted_ = false;
    PollStatus status = source_->poll_next();
    if (!emitted_) return status;
    pacing_->batches.fetch_add(1);
    step();
    if (!pacing_->pace) return status;
    phase_ = Phase::kAwaitSnapshot;
    // The end waits for the checkpoint after the last batch too (polled once it completed).
    ended_ = status == PollStatus::kEnd;
    return ended_ ? PollStatus::kMore : status;
  }
  std::int64_t wait_hint_ms() const override { return phase_ == Phase::kFree ? source_->wait_hint_ms() : 1; }

  void snapshot_state(std::int64_t checkpoint_id) override {
    inner_->snapshot_state(checkpoint_id);
    if (phase_ == Phase::kAwaitSnapshot) {
      phase_ = Phase::kAwaitCompletion;
      awaited_ = checkpoint_id;
    }
  }
  void notify_checkpoint_complete(std::int64_t checkpoint_id) override {
    inner_->notify_checkpoint_complete(checkpoint_id);
    // A later checkpoint covers the batch too (the awaited one may have been aborted).
    if (phase_ == Phase::kAwaitCompletion && checkpoint_id >= awaited_) phase_ = Phase::kCovered;
  }
  void process_processing_time(std::int64_t now) override { inner_->process_processing_time(now); }
  void finish() override { inner_->finish(); }
  void close() override { inner_->close(); }

 private:
  // kFree: polls the source; then kAwaitSnapshot (a batch went out), kAwaitCompletion
  // (snapshotted), kCovered (that checkpoint completed: the next poll counts a step).
  enum class Phase { kFree, kAwaitSnapshot, kAwaitCompletion, kCovered };

  void step() {
    std::int64_t n = pacing_->steps.fetch_add(1) + 1;
    if (n == pacing_->fail_at) {
      pacing_->failed = true;
      throw std::runtime_error("matrix: injected failure at step " + std::to_string(n));
    }
  }

  // Output: the inner source's emissions.
  void emit(BatchPtr batch) override {
    if (batch && !batch->empty()) emitted_ = true;
    downstream_->emit(std::move(batch));
  }
  void emit_watermark(Watermark wm) override { downstream_->emit_watermark(wm); }
  void emit_side(const std::string& tag, BatchPtr batch) override { downstream_->emit_side(tag, std::move(batch)); }

  std::unique_ptr<StreamOperator> inner_;
  SourceOperator* source_;
  std::shared_ptr<SourcePacing> pacing_;
  Output* downstream_ = nullptr;
  Phase phase_ = Phase::kFree;
  std::int64_t awaited_ = 0;
  bool emitted_ = false;
  bool ended_ = false;
};

}  // namespace

void pace_sources(JobGraph& graph, std::shared_ptr<SourcePacing> pacing) {
  for (auto& node : graph.nodes) {
    if (node.num_inputs != 0) continue;
    node.build = [inner = node.build, pacing] { return std::make_unique<PacedSource>(inner(), pacing); };
  }
}

}  // namespace clink::test
