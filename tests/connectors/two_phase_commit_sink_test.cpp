// The two-phase-commit sink operator's transaction numbering: the transaction after
// checkpoint n is (subtask << 40) + n + 1, and a restored run starts above every
// checkpoint the job issued, not only above the one it restored. A restart that falls
// back past a damaged newest checkpoint restores an older one while the newer one's
// transactions may have committed: reusing their ids made a sink that skips committed
// ids drop the restored run's first transaction.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "clink/api/two_phase_commit_sink.hpp"
#include "connector_test_util.hpp"

namespace clink::test {
namespace {

// Records the transactions its writers begin.
class RecordingSink final : public TransactionalSink<std::int64_t> {
 public:
  std::shared_ptr<std::vector<std::int64_t>> begun = std::make_shared<std::vector<std::int64_t>>();

  std::unique_ptr<TransactionalSinkWriter<std::int64_t>> create_writer(int, int) const override {
    return std::make_unique<Writer>(begun);
  }
  std::string factory_name() const override { return "recording"; }

 private:
  class Writer final : public TransactionalSinkWriter<std::int64_t> {
   public:
    explicit Writer(std::shared_ptr<std::vector<std::int64_t>> begun) : begun_(std::move(begun)) {}
    void begin_transaction(std::int64_t id) override { begun_->push_back(id); }
    void write(const Batch<std::int64_t>&) override {}
    std::string pre_commit() override { return {}; }
    void commit(const std::string&) override {}

   private:
    std::shared_ptr<std::vector<std::int64_t>> begun_;
  };
};

constexpr std::int64_t kSubtask1 = std::int64_t{1} << 40;

TEST(TwoPhaseCommitSink, AFreshRunNumbersTransactionsAfterCheckpoints) {
  auto sink = std::make_shared<RecordingSink>();
  TwoPhaseCommitSinkOperator<std::int64_t> op(sink);
  TestContext tc(1, 2);
  op.open(tc.ctx);
  op.snapshot_state(1);
  op.snapshot_state(2);
  EXPECT_EQ(*sink->begun, (std::vector<std::int64_t>{kSubtask1 + 1, kSubtask1 + 2, kSubtask1 + 3}));
}

TEST(TwoPhaseCommitSink, ARestoredRunNumbersItsTransactionsAboveEveryCheckpointTheJobIssued) {
  // The job's first attempt checkpoints 5 and 6; 6 is damaged, so the restart restores 5
  // while the job has issued checkpoints up to 7.
  auto first = std::make_shared<RecordingSink>();
  TwoPhaseCommitSinkOperator<std::int64_t> before(first);
  TestContext t1(1, 2);
  before.open(t1.ctx);
  before.snapshot_state(5);
  OperatorStateStore at5 = t1.ctx.operator_state();
  before.snapshot_state(6);  // its transaction (id 6) commits when 6 completes

  auto second = std::make_shared<RecordingSink>();
  TwoPhaseCommitSinkOperator<std::int64_t> after(second);
  TestContext t2(1, 2);
  t2.ctx.set_operator_state(OperatorStateStore::redistribute({OperatorStateStore{}, at5}, 1, 2));
  t2.ctx.set_restored(true);
  t2.ctx.set_restored_checkpoint_id(5);
  t2.ctx.set_last_checkpoint_id(7);
  after.open(t2.ctx);
  after.snapshot_state(8);
  EXPECT_EQ(*first->begun, (std::vector<std::int64_t>{kSubtask1 + 1, kSubtask1 + 6, kSubtask1 + 7}));
  EXPECT_EQ(*second->begun, (std::vector<std::int64_t>{kSubtask1 + 8, kSubtask1 + 9}));
}

}  // namespace
}  // namespace clink::test
