#pragma once
// Deterministic fault injection (docs/fault-injection.md): rules that make chosen
// operator subtasks throw at chosen points - after their k-th record, after or while
// a checkpoint numbered n or later, or at random from a seed. An injected failure is
// an ordinary task failure: the restart strategy and failover apply to it.
//
// One FailureInjector lives as long as the job (ExecutionOptions::failures, shared by
// its copies): how many failures each rule may still inject and where each random
// stream stands carry over from attempt to attempt. Each attempt's operator subtasks
// get a FailureProbe (only those a rule selects), which the task calls once per batch
// and at checkpoints; a subtask without one pays a null check per batch.
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace clink {

struct FailureRule {
  enum class Trigger {
    kAfterRecords,      // after-records=K: on the batch that brings the subtask's count to K
    kAfterCheckpoint,   // after-checkpoint=N: once a checkpoint numbered N or later completed
    kDuringCheckpoint,  // during-checkpoint=N: while snapshotting a checkpoint numbered N or later
    kProbability,       // probability=P: each record (per=batch: each batch) fails with P
  };
  std::string text;            // the spec as written, for messages
  std::string operator_glob;   // operator=GLOB (uid or name, * and ?); empty: every operator
  int subtask = -1;            // subtask=I (0-based); -1: every subtask
  Trigger trigger = Trigger::kAfterRecords;
  std::uint64_t threshold = 0;  // K or N
  double probability = 0;
  bool per_batch = false;
  std::uint64_t seed = 0;
  std::int64_t times = 1;  // failures this rule injects in all; -1: no limit

  // Parses "key=value,key=value" (docs/fault-injection.md); throws ClinkError naming
  // the spec, the key and its position.
  static FailureRule parse(const std::string& spec);
  bool selects(const std::string& uid, const std::string& name, int subtask) const;
};

class FailureInjector;

// One operator subtask's view of the rules that select it, for one attempt.
class FailureProbe {
 public:
  // Once per batch the operator processes (a source: emits). Throws when a rule fires.
  void on_batch(std::size_t records) {
    records_ += records;
    ++batches_;
    if (records_ >= next_record_ || batches_ >= next_batch_) fire_due();
  }
  // Before the subtask snapshots checkpoint `id`, and after it committed it.
  void on_snapshot(std::int64_t id) { on_checkpoint(id, FailureRule::Trigger::kDuringCheckpoint); }
  void on_checkpoint_complete(std::int64_t id) { on_checkpoint(id, FailureRule::Trigger::kAfterCheckpoint); }

 private:
  friend class FailureInjector;
  struct Armed {
    std::size_t rule;
    std::uint64_t at = 0;  // record or batch count it fires at (record rules)
  };
  void fire_due();
  void on_checkpoint(std::int64_t id, FailureRule::Trigger when);
  void rearm();  // next_record_ / next_batch_ from the armed record rules

  FailureInjector* injector_ = nullptr;
  std::string target_;  // "<uid>#<subtask>": which random streams it draws from
  std::vector<Armed> armed_;
  std::uint64_t records_ = 0, batches_ = 0;
  std::uint64_t next_record_ = UINT64_MAX, next_batch_ = UINT64_MAX;
};

class FailureInjector {
 public:
  explicit FailureInjector(std::vector<FailureRule> rules);
  // From specs as given on the command line (each parsed by FailureRule::parse).
  static std::shared_ptr<FailureInjector> parse(const std::vector<std::string>& specs);

  // The probe of one operator subtask for a new attempt; null when no rule selects it.
  std::unique_ptr<FailureProbe> probe(const std::string& uid, const std::string& name, int subtask);
  // Failures injected so far (all rules, all attempts).
  int injected() const { return injected_.load(); }
  const std::vector<FailureRule>& rules() const { return rules_; }

 private:
  friend class FailureProbe;
  // Takes one of the rule's remaining failures; false: it has none left.
  bool claim(std::size_t rule);
  // The rule's next random gap (records or batches, >= 1) on `target`'s stream.
  std::uint64_t draw_gap(std::size_t rule, const std::string& target);
  [[noreturn]] void fail(std::size_t rule, const std::string& what);

  std::vector<FailureRule> rules_;
  std::unique_ptr<std::atomic<std::int64_t>[]> remaining_;  // by rule; < 0: unlimited
  std::atomic<int> injected_{0};
  std::mutex mu_;
  std::map<std::pair<std::size_t, std::string>, std::uint64_t> draws_;  // (rule, target) -> draws taken
};

}  // namespace clink
