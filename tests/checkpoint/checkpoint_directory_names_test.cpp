// Checkpoint directories are named chk-<digits>: any other chk-* entry (a user's
// "chk-abc", "chk-5x") is neither restored from nor swept away (issue 16, item 8).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "clink/checkpoint/checkpoint_metadata.hpp"
#include "../support/temp_dir.hpp"

namespace clink::test {
namespace {

TEST(CheckpointDirectoryNames, OnlyChkDigitsIsACheckpoint) {
  EXPECT_EQ(checkpoint_id_of("chk-42"), std::optional<std::int64_t>(42));
  EXPECT_EQ(checkpoint_id_of("chk-0"), std::optional<std::int64_t>(0));
  for (const char* other : {"chk-", "chk-abc", "chk-5x", "chk--1", "chk-1 ", "chk-99999999999999999999", "shared", "x"})
    EXPECT_EQ(checkpoint_id_of(other), std::nullopt) << other;
}

TEST(CheckpointDirectoryNames, LatestCheckpointIgnoresOtherNames) {
  TempDir dir;
  for (const char* name : {"chk-3", "chk-abc", "chk-12x"}) {
    std::filesystem::create_directories(dir.path / name);
    std::ofstream(dir.path / name / kMetadataFile) << "{}";
  }
  auto latest = latest_checkpoint(dir.path);
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->filename(), "chk-3");
}

}  // namespace
}  // namespace clink::test
