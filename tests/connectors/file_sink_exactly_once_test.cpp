// The file sink under checkpoints: part files appear only when their checkpoint
// completes, and after failures, restores and rescaling the committed part files hold
// every record exactly once (Flink's FileSink with two-phase commit).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "clink/api/data_stream.hpp"
#include "clink/checkpoint/checkpoint_metadata.hpp"
#include "clink/connectors/datagen.hpp"
#include "clink/connectors/file_sink.hpp"
#include "clink/core/error.hpp"
#include "clink/state/keyed_state.hpp"
#include "connector_test_util.hpp"

#include "../support/checkpoint_support.hpp"

namespace clink::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Out = SequenceOut;

constexpr std::int64_t kKeys = kSequenceKeys;

ExecutionOptions checkpointing(const fs::path& dir, RestartStrategy restart = RestartStrategy::none()) {
  ExecutionOptions o;
  o.checkpoints.interval_ms = 30;
  o.checkpoints.directory = dir;
  o.restart = restart;
  return o;
}

std::vector<std::string> split_lines(const std::string& content) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t nl; (nl = content.find('\n', start)) != std::string::npos; start = nl + 1)
    lines.push_back(content.substr(start, nl - start));
  EXPECT_EQ(start, content.size()) << "a line without its newline";
  return lines;
}

std::int64_t to_int(const std::string& s) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  EXPECT_TRUE(ec == std::errc() && end == s.data() + s.size()) << "not a number: " << s;
  return v;
}

// What a reader of the sink's directory sees: the visible files' contents by name, and
// the hidden (in-progress) files' names.
struct DirContents {
  std::map<std::string, std::string> visible;
  std::vector<std::string> hidden;

  std::vector<std::string> lines() const {
    std::vector<std::string> all;
    for (const auto& [name, content] : visible)
      for (auto& l : split_lines(content)) all.push_back(std::move(l));
    return all;
  }
  // Every line of every file, hidden or not.
  std::vector<std::string> all_lines(const fs::path& dir) const {
    auto all = lines();
    for (const auto& name : hidden)
      for (auto& l : split_lines(read_file((dir / name).string()))) all.push_back(std::move(l));
    return all;
  }
};

DirContents read_dir(const fs::path& dir) {
  DirContents c;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.starts_with(".")) c.hidden.push_back(name);
    else c.visible[name] = read_file(e.path().string());
  }
  return c;
}

// "part-<subtask>-<n>.txt" -> (subtask, n)
std::optional<std::pair<int, std::int64_t>> parse_part(const std::string& name) {
  if (!name.starts_with("part-") || !name.ends_with(".txt")) return std::nullopt;
  std::string mid = name.substr(5, name.size() - 9);
  auto dash = mid.find('-');
  if (dash == std::string::npos) return std::nullopt;
  return std::make_pair(static_cast<int>(to_int(mid.substr(0, dash))), to_int(mid.substr(dash + 1)));
}

template <class T>
std::vector<T> sorted(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// ---- part files appear when their checkpoint completes ----------------------------

// The part files a reader sees at one moment, by (subtask, n), with their contents.
// The listing of a directory is not atomic, so every part file numbered below a
// listed one of its subtask is looked up again afterwards: a subtask commits its
// parts in order, so all earlier parts it committed are found.
using PartSnapshot = std::map<std::pair<int, std::int64_t>, std::string>;

PartSnapshot snapshot_parts(const fs::path& dir) {
  std::map<int, std::int64_t> max_part;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (auto p = parse_part(it->path().filename().string()))
      max_part[p->first] = std::max(max_part[p->first], p->second);
  PartSnapshot snap;
  for (const auto& [subtask, max] : max_part)
    for (std::int64_t n = 0; n <= max; ++n) {
      auto path = dir / ("part-" + std::to_string(subtask) + "-" + std::to_string(n) + ".txt");
      if (fs::exists(path)) snap[{subtask, n}] = read_file(path.string());
    }
  return snap;
}

// Observed while the job runs and until it is cancelled, so that no part is committed
// at end of input (which commits at once what is pending): every visible part file
// comes from a completed checkpoint.
TEST(FileSinkExactlyOnce, PartFilesAppearOnlyWhenTheirCheckpointCompletes) {
  TempDir dir;
  const fs::path out = dir.path / "out";
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  DatagenOptions opts;
  opts.rows_per_second = 6000;
  env.from_source<std::int64_t>(DatagenSource<std::int64_t>::sequence(0, 10'000'000, opts))
      .set_parallelism(1)
      .uid("numbers")
      .rebalance()
      .sink_to(std::make_shared<FileSink<std::int64_t>>(out.string() + "/"));
  auto handle = execute_async(env.graph(), checkpointing(dir.path / "chk"));
  // What a reader saw, and the newest checkpoint completed by then.
  std::vector<std::pair<PartSnapshot, std::int64_t>> seen;
  while (handle.checkpoint_counts().completed < 10 && !handle.wait_for(std::chrono::milliseconds(3))) {
    auto snap = snapshot_parts(out);
    seen.emplace_back(std::move(snap), handle.checkpoint_counts().last_completed_id);
  }
  handle.cancel();
  handle.wait();
  ASSERT_EQ(handle.status(), JobStatus::kCanceled);

  // Committed part files never change: the reference for what was seen.
  const PartSnapshot final_parts = snapshot_parts(out);
  EXPECT_EQ(final_parts.size(), read_dir(out).visible.size());
  // Each subtask's parts, in order, hold what it received, in order, and no record twice.
  std::map<int, std::int64_t> last;
  std::set<std::int64_t> values;
  for (const auto& [part, content] : final_parts) {
    for (const auto& l : split_lines(content)) {
      auto v = to_int(l);
      EXPECT_TRUE(values.insert(v).second) << v << " twice";
      if (last.count(part.first)) {
        EXPECT_GT(v, last[part.first]) << "part " << part.second;
      }
      last[part.first] = v;
    }
  }
  ASSERT_EQ(last.size(), 2u) << "both subtasks committed parts";

  std::size_t partial = 0;
  for (const auto& [snap, completed] : seen) {
    std::size_t lines = 0;
    std::map<int, std::int64_t> max_part;
    for (const auto& [part, content] : snap) {
      // Every visible file is complete: what it holds in the end.
      auto it = final_parts.find(part);
      ASSERT_NE(it, final_parts.end()) << "part-" << part.first << "-" << part.second << " disappeared";
      ASSERT_EQ(content, it->second) << "part-" << part.first << "-" << part.second << " was incomplete";
      lines += split_lines(content).size();
      max_part[part.first] = std::max(max_part[part.first], part.second);
      // Part n is the transaction that checkpoint n + 1 (or a later one) pre-committed;
      // it is visible only once that checkpoint completed.
      EXPECT_GE(completed, part.second + 1) << "part-" << part.first << "-" << part.second << " visible too early";
    }
    // Prefix-closed per subtask: every part a subtask committed before its newest
    // visible one is visible too, so the lines seen are the first ones it received.
    for (const auto& [part, content] : final_parts) {
      auto m = max_part.find(part.first);
      if (m != max_part.end() && part.second < m->second) {
        EXPECT_TRUE(snap.count(part)) << "part-" << part.first << "-" << part.second << " missing";
      }
    }
    if (lines > 0 && lines < values.size()) ++partial;
  }
  EXPECT_GT(partial, 0u) << "no part file appeared while the job ran";
}

// ---- exactly-once output after failures ------------------------------------------


std::string format_out(std::int64_t key, std::int64_t value, std::int64_t count) {
  return std::to_string(key) + "," + std::to_string(value) + "," + std::to_string(count);
}

std::vector<std::string> expected_output(std::int64_t n) {
  std::vector<std::string> v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back(format_out(i % kKeys, i, i / kKeys + 1));
  return sorted(v);
}

// datagen 0..n-1 (rate-limited so checkpoints happen) -> failure injector -> keyBy ->
// checker -> format -> file sink, the last three at `parallelism`.
void build_job(StreamExecutionEnvironment& env, std::int64_t n, double rate, std::shared_ptr<Injector> injector,
               const std::string& path, int parallelism) {
  env.set_parallelism(parallelism);
  checked_sequence(env, n, rate, std::move(injector))
      .map([](const Out& o) { return format_out(std::get<0>(o), std::get<1>(o), std::get<2>(o)); }, "Format")
      .uid("format")
      .sink_to(std::make_shared<FileSink<std::string>>(path), "Files");
}

TEST(FileSinkExactlyOnce, CommittedPartFilesSurviveInjectedFailuresExactlyOnce) {
  for (int failures : {1, 3}) {
    TempDir dir;
    const fs::path out = dir.path / "out";
    StreamExecutionEnvironment env;
    auto injector = std::make_shared<Injector>();
    injector->at = 1234;
    injector->failures_left = failures;  // the same record fails `failures` attempts in a row
    build_job(env, 2000, 4000, injector, out.string() + "/", 2);
    auto handle = execute_async(env.graph(), checkpointing(dir.path / "chk", RestartStrategy::fixed_delay(5, 10)));
    handle.wait();
    EXPECT_EQ(handle.status(), JobStatus::kFinished);
    EXPECT_EQ(handle.checkpoint_counts().restarts, failures);
    EXPECT_GE(handle.checkpoint_counts().completed, 1);
    auto contents = read_dir(out);
    EXPECT_EQ(sorted(contents.lines()), expected_output(2000)) << failures << " failures";
    EXPECT_TRUE(contents.hidden.empty()) << contents.hidden.size() << " in-progress files left, e.g. "
                                         << contents.hidden.front();
  }
}

// Restores at other parallelisms: part names never collide, every pre-committed part is
// committed once, and the staging files of the stopped runs are cleaned up.
TEST(FileSinkExactlyOnce, RestoresAtOtherParallelismCommitEachRecordOnce) {
  TempDir dir;
  const fs::path out = dir.path / "out";
  const fs::path chk = dir.path / "chk";
  const std::int64_t n = 20000;  // at 6000 rows/s no part gets near the end
  std::optional<fs::path> from;
  std::size_t committed = 0;
  for (int p : {2, 1, 3}) {
    StreamExecutionEnvironment env;
    build_job(env, n, 6000, std::make_shared<Injector>(), out.string() + "/", p);
    auto options = checkpointing(chk);
    if (from) options.restore = RestoreSettings{*from};
    auto handle = execute_async(env.graph(), options);
    while (handle.checkpoint_counts().completed < 3 && !handle.wait_for(std::chrono::milliseconds(5))) {
    }
    handle.cancel();
    handle.wait();
    from = latest_checkpoint(chk);
    ASSERT_TRUE(from.has_value());
    auto lines = read_dir(out).lines();
    EXPECT_GT(lines.size(), committed) << "parallelism " << p << " committed more";
    committed = lines.size();
  }
  StreamExecutionEnvironment env;
  build_job(env, n, 0, std::make_shared<Injector>(), out.string() + "/", 2);
  auto options = checkpointing(chk);
  options.restore = RestoreSettings{*from};
  execute_async(env.graph(), options).wait();
  auto contents = read_dir(out);
  EXPECT_EQ(sorted(contents.lines()), expected_output(n));
  EXPECT_TRUE(contents.hidden.empty()) << contents.hidden.size() << " in-progress files left, e.g. "
                                       << contents.hidden.front();
}

// ---- a failed job -----------------------------------------------------------------

// Forwards batches; once armed, fails the job on the first batch after it forwarded
// one since the last checkpoint, so the sink's open transaction surely holds records.
struct ArmedFailure {
  std::atomic<bool> armed{false};
  std::atomic<std::int64_t> first_uncommitted{-1};  // first value forwarded after the last checkpoint
};

TEST(FileSinkExactlyOnce, AFailedJobLeavesNoVisiblePartOfTheOpenTransaction) {
  TempDir dir;
  const fs::path out = dir.path / "out";
  auto failure = std::make_shared<ArmedFailure>();
  StreamExecutionEnvironment env;
  DatagenOptions opts;
  opts.rows_per_second = 3000;
  env.from_source<std::int64_t>(DatagenSource<std::int64_t>::sequence(0, 1'000'000, opts))
      .uid("numbers")
      .then<std::int64_t>("armed_failure", "ArmedFailure", [failure] {
        struct Op final : StreamOperator {
          explicit Op(std::shared_ptr<ArmedFailure> f) : f_(std::move(f)) {}
          void process_batch(int, BatchPtr b) override {
            const auto& records = batch_cast<std::int64_t>(*b).records;
            if (records.empty()) return;
            if (f_->armed.load() && forwarded_) throw std::runtime_error("injected failure");
            if (!forwarded_) f_->first_uncommitted = records.front().value;
            forwarded_ = true;
            output().emit(std::move(b));
          }
          void snapshot_state(std::int64_t) override { forwarded_ = false; }
          std::shared_ptr<ArmedFailure> f_;
          bool forwarded_ = false;
        };
        return std::make_unique<Op>(failure);
      })
      .uid("armed")
      .sink_to(std::make_shared<FileSink<std::int64_t>>(out.string() + "/"));
  auto handle = execute_async(env.graph(), checkpointing(dir.path / "chk"));
  // Fail once some part file is committed.
  while (!handle.wait_for(std::chrono::milliseconds(5))) {
    std::error_code ec;
    bool visible = false;
    for (fs::directory_iterator it(out, ec), end; !ec && it != end; it.increment(ec))
      visible = visible || parse_part(it->path().filename().string()).has_value();
    if (visible) failure->armed = true;
  }
  EXPECT_THROW(handle.wait(), JobFailedError);
  EXPECT_THAT(handle.error(), HasSubstr("injected failure"));
  ASSERT_TRUE(failure->armed.load());

  const std::int64_t first_uncommitted = failure->first_uncommitted.load();
  auto contents = read_dir(out);
  std::vector<std::int64_t> visible;
  for (const auto& l : contents.lines()) visible.push_back(to_int(l));
  visible = sorted(visible);
  // What is visible is complete part files holding 0..k-1, all from before the last
  // checkpoint.
  ASSERT_FALSE(visible.empty());
  for (std::size_t i = 0; i < visible.size(); ++i) ASSERT_EQ(visible[i], static_cast<std::int64_t>(i));
  EXPECT_LE(static_cast<std::int64_t>(visible.size()), first_uncommitted);
  // The open transaction is gone even from the staging files (pre-committed ones of a
  // checkpoint that never completed may remain, for a restore to clean up).
  for (const auto& l : contents.all_lines(out)) EXPECT_LT(to_int(l), first_uncommitted);
  for (const auto& name : contents.hidden) EXPECT_THAT(name, ::testing::EndsWith(".inprogress"));
}

TEST(FileSinkExactlyOnce, SingleFileModeRejectsCheckpointing) {
  TempDir dir;
  StreamExecutionEnvironment env;
  DatagenOptions opts;
  opts.rows_per_second = 5000;
  const std::string path = dir.file("out.txt");
  env.from_source<std::int64_t>(DatagenSource<std::int64_t>::sequence(0, 100'000, opts))
      .sink_to(std::make_shared<FileSink<std::int64_t>>(path));
  auto handle = execute_async(env.graph(), checkpointing(dir.path / "chk"));
  EXPECT_THROW(handle.wait(), JobFailedError);
  EXPECT_THAT(handle.error(), HasSubstr("file sink '" + path +
                                        "' writes a single file; with checkpointing give a directory (a path ending "
                                        "in '/')"));
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(staging_path_for(path)));
}

}  // namespace
}  // namespace clink::test
