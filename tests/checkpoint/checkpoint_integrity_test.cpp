// Corrupted checkpoints (issue 16, item 6): every checkpoint file is recorded in
// `_metadata` with its size and xxh64, and `_metadata` carries a checksum of itself. A
// bit flip in keyed state, a source position or the metadata, a truncated RocksDB
// MANIFEST, or an empty newest `_metadata` never restores different state: a checkpoint
// the user named fails, naming the checkpoint and the file; where clink chooses (the
// newest of a directory, a restart after a failure, HA's latest) it falls back to the
// previous retained checkpoint, and the job goes on with exact output.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <thread>

#include "clink/api/data_stream.hpp"
#include "clink/checkpoint/checkpoint_integrity.hpp"
#include "clink/connectors/exactly_once_collect_sink.hpp"
#include "clink/core/error.hpp"
#include "../support/checkpoint_support.hpp"

namespace clink::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Out = SequenceOut;

constexpr std::int64_t kRows = 20000;

// The rows of the sequence job from input position `from` on (exact: the count column
// comes from the restored keyed state).
std::vector<Out> expected_from(std::int64_t from) {
  std::vector<Out> v;
  for (std::int64_t i = from; i < kRows; ++i) v.push_back({i % kSequenceKeys, i, i / kSequenceKeys + 1});
  std::sort(v.begin(), v.end());
  return v;
}

std::int64_t min_value(const std::vector<Out>& rows) {
  std::int64_t m = kRows;
  for (const auto& r : rows) m = std::min(m, std::get<1>(r));
  return m;
}

std::int64_t max_value(const std::vector<Out>& rows) {
  std::int64_t m = -1;
  for (const auto& r : rows) m = std::max(m, std::get<1>(r));
  return m;
}

// The completed chk-<n> under `dir`, oldest first.
std::vector<fs::path> completed_checkpoints(const fs::path& dir) {
  std::vector<std::pair<std::int64_t, fs::path>> found;
  for (const auto& e : fs::directory_iterator(dir))
    if (auto id = checkpoint_id_of(e.path().filename().string()); id && fs::exists(e.path() / kMetadataFile))
      found.emplace_back(*id, e.path());
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  for (auto& [id, p] : found) out.push_back(p);
  return out;
}

void flip_byte(const fs::path& file, std::uintmax_t at) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f) << file;
  f.seekg(static_cast<std::streamoff>(at));
  char c = 0;
  f.get(c);
  f.seekp(static_cast<std::streamoff>(at));
  f.put(static_cast<char>(c ^ 0x10));
}

fs::path find_file(const fs::path& dir, const std::function<bool(const fs::path&)>& match) {
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && match(e.path().lexically_relative(dir))) return e.path();
  ADD_FAILURE() << "no such file in " << dir;
  return {};
}

enum class Damage { kKeyedState, kSourcePosition, kMetadataBitFlip, kEmptyMetadata };
const char* damage_name(Damage d) {
  switch (d) {
    case Damage::kKeyedState: return "KeyedState";
    case Damage::kSourcePosition: return "SourcePosition";
    case Damage::kMetadataBitFlip: return "MetadataBitFlip";
    case Damage::kEmptyMetadata: return "EmptyMetadata";
  }
  return "?";
}

// Damages the checkpoint; returns the file's name the error must name.
std::string damage(const fs::path& chk, Damage what, const std::string& backend) {
  switch (what) {
    case Damage::kKeyedState:
      if (backend == "rocksdb") {  // a truncated RocksDB MANIFEST
        auto manifest = find_file(chk, [](const fs::path& p) {
          return p.string().starts_with("rocksdb-checker-0/") && p.filename().string().starts_with("MANIFEST");
        });
        fs::resize_file(manifest, fs::file_size(manifest) / 2);
        return manifest.filename().string();
      } else {
        auto file = chk / "keyed-checker-0.bin";
        flip_byte(file, fs::file_size(file) / 2);
        return file.filename().string();
      }
    case Damage::kSourcePosition: {
      auto file = chk / "numbers-0" / "operator_state";
      flip_byte(file, fs::file_size(file) - 1);
      return "numbers-0/operator_state";
    }
    case Damage::kMetadataBitFlip: {
      // A digit of the checkpoint id: the JSON still parses; only the checksum tells.
      std::ifstream in(chk / kMetadataFile);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      auto at = text.find("\"checkpoint_id\": ");
      EXPECT_NE(at, std::string::npos);
      flip_byte(chk / kMetadataFile, at + 17);
      return kMetadataFile;
    }
    case Damage::kEmptyMetadata:
      fs::resize_file(chk / kMetadataFile, 0);
      return kMetadataFile;
  }
  return {};
}

class CheckpointIntegrity : public ::testing::TestWithParam<std::tuple<std::string, Damage>> {
 protected:
  std::string backend() const { return std::get<0>(GetParam()); }
  ExecutionOptions checkpointing(const fs::path& dir) const {
    ExecutionOptions o;
    o.checkpoints.interval_ms = 50;
    o.checkpoints.directory = dir;
    o.checkpoints.retained = 3;
    o.checkpoints.state_backend.kind = backend();
    o.checkpoints.state_backend.working_dir = dir / "working";
    o.restart = RestartStrategy::none();
    return o;
  }
};

INSTANTIATE_TEST_SUITE_P(
    Backends, CheckpointIntegrity,
    ::testing::Combine(::testing::Values("memory", "rocksdb"),
                       ::testing::Values(Damage::kKeyedState, Damage::kSourcePosition, Damage::kMetadataBitFlip,
                                         Damage::kEmptyMetadata)),
    [](const auto& info) { return std::get<0>(info.param) + std::string("_") + damage_name(std::get<1>(info.param)); });

TEST_P(CheckpointIntegrity, ADamagedNewestCheckpointFailsByNameAndTheDirectoryFallsBackToThePreviousOne) {
  TempDir dir;
  auto first = std::make_shared<ExactlyOnceCollectSink<Out>>();
  {
    StreamExecutionEnvironment env;
    checked_sequence(env, kRows, 6000, std::make_shared<Injector>()).set_parallelism(2).sink_to(first, "Sink");
    run_until_checkpoints(env, checkpointing(dir.path), 3);
  }
  auto chks = completed_checkpoints(dir.path);
  ASSERT_GE(chks.size(), 2u);
  const fs::path newest = chks.back(), previous = chks[chks.size() - 2];
  // Intact as written: every file recorded, and it verifies.
  auto meta = read_verified_checkpoint(newest);
  EXPECT_TRUE(meta.files.count("numbers-0/operator_state"));
  EXPECT_EQ(meta.files.count(kMetadataFile), 0u);

  const std::string file = damage(newest, std::get<1>(GetParam()), backend());

  // Named explicitly: fails, naming the checkpoint and the file.
  {
    StreamExecutionEnvironment env;
    checked_sequence(env, kRows, 0, std::make_shared<Injector>()).set_parallelism(2).sink_to(
        std::make_shared<ExactlyOnceCollectSink<Out>>(), "Sink");
    auto options = checkpointing(dir.path / "explicit");
    options.restore = RestoreSettings{newest};
    try {
      execute_async(env.graph(), options).wait();
      FAIL() << "restored a damaged checkpoint";
    } catch (const CorruptCheckpointError& e) {
      EXPECT_THAT(e.what(), HasSubstr(newest.string()));
      EXPECT_THAT(e.what(), HasSubstr(file));
    }
  }

  // The directory: the newest intact one, the damaged one passed over with its reason.
  std::vector<std::string> passed_over;
  auto chosen = latest_intact_checkpoint(dir.path, &passed_over);
  ASSERT_TRUE(chosen.has_value());
  EXPECT_EQ(*chosen, previous);
  ASSERT_EQ(passed_over.size(), 1u);
  EXPECT_THAT(passed_over[0], HasSubstr(file));
  EXPECT_EQ(intact_checkpoint_or_older(newest), previous);  // HA's latest, the same way

  // Restored from it, the job goes on exactly: every row from its position on, each
  // with the count its restored keyed state gives, none missing between the runs.
  auto second = std::make_shared<ExactlyOnceCollectSink<Out>>();
  StreamExecutionEnvironment env;
  checked_sequence(env, kRows, 0, std::make_shared<Injector>()).set_parallelism(2).sink_to(second, "Sink");
  auto options = checkpointing(dir.path);
  options.restore = RestoreSettings{*chosen};
  auto handle = execute_async(env.graph(), options);
  handle.wait();
  EXPECT_EQ(handle.status(), JobStatus::kFinished);
  EXPECT_EQ(handle.checkpoint_counts().last_restored_id, *checkpoint_id_of(previous.filename().string()));
  auto rows = sorted(second->values());
  const std::int64_t from = min_value(rows);
  EXPECT_EQ(rows, expected_from(from));
  EXPECT_LE(from, max_value(first->values()) + 1) << "a gap between the runs";
}

// A savepoint named explicitly never falls back: a bit flip fails the restore by name.
TEST(CheckpointIntegrityOfSavepoints, ADamagedSavepointFailsNamingTheFile) {
  TempDir dir;
  StreamExecutionEnvironment env;
  checked_sequence(env, kRows, 6000, std::make_shared<Injector>()).set_parallelism(2).sink_to(
      std::make_shared<ExactlyOnceCollectSink<Out>>(), "Sink");
  ExecutionOptions o;
  o.checkpoints.directory = dir.path;
  auto handle = execute_async(env.graph(), o);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto sp = handle.stop_with_savepoint(dir.path / "sp");
  auto file = sp / "keyed-checker-1.bin";
  flip_byte(file, fs::file_size(file) / 2);
  StreamExecutionEnvironment again;
  checked_sequence(again, kRows, 0, std::make_shared<Injector>()).set_parallelism(2).sink_to(
      std::make_shared<ExactlyOnceCollectSink<Out>>(), "Sink");
  ExecutionOptions r;
  r.restore = RestoreSettings{sp};
  try {
    execute_async(again.graph(), r).wait();
    FAIL() << "restored a damaged savepoint";
  } catch (const CorruptCheckpointError& e) {
    EXPECT_THAT(e.what(), HasSubstr("keyed-checker-1.bin fails its checksum"));
    EXPECT_THAT(e.what(), HasSubstr(sp.string()));
  }
}

// A restart after a failure passes over a damaged newest checkpoint: the job restores
// the previous retained one and finishes; no row is lost. (The damage is done while the
// restart waits out its delay: the failed attempt is gone, no checkpoint completes.)
TEST(CheckpointIntegrityOnRestart, ARestartFallsBackFromADamagedNewestCheckpoint) {
  TempDir dir;
  auto sink = std::make_shared<ExactlyOnceCollectSink<Out>>();
  StreamExecutionEnvironment env;
  auto injector = std::make_shared<Injector>();
  injector->at = 5000;  // at 6000 rows/s, after several checkpoints
  injector->failures_left = 1;
  checked_sequence(env, kRows, 6000, injector).set_parallelism(2).sink_to(sink, "Sink");
  ExecutionOptions o;
  o.checkpoints.interval_ms = 50;
  o.checkpoints.directory = dir.path;
  o.checkpoints.retained = 2;
  o.restart = RestartStrategy::fixed_delay(1, 1000);
  auto handle = execute_async(env.graph(), o);
  while (handle.checkpoint_counts().restarts == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  auto chks = completed_checkpoints(dir.path);
  ASSERT_EQ(chks.size(), 2u);
  const std::int64_t damaged = *checkpoint_id_of(chks.back().filename().string());
  damage(chks.back(), Damage::kSourcePosition, "memory");
  handle.wait();
  EXPECT_EQ(handle.status(), JobStatus::kFinished);
  EXPECT_EQ(handle.checkpoint_counts().last_restored_id, *checkpoint_id_of(chks.front().filename().string()));
  EXPECT_LT(handle.checkpoint_counts().last_restored_id, damaged);
  // Output committed after the older checkpoint is written again (the fallback's
  // price, as in Flink's); nothing is lost.
  auto rows = sink->values();
  std::set<Out> distinct(rows.begin(), rows.end());
  EXPECT_EQ(std::vector<Out>(distinct.begin(), distinct.end()), expected_from(0));
}

}  // namespace
}  // namespace clink::test
