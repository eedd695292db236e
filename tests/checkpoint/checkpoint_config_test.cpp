#include "clink/checkpoint/checkpoint_config.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "clink/core/error.hpp"

namespace clink::test {
namespace {

TEST(CheckpointConfig, StorageIsADirectoryOrAFileUri) {
  EXPECT_EQ(storage_path("/data/ckpt"), std::filesystem::path("/data/ckpt"));
  EXPECT_EQ(storage_path("file:///data/ckpt"), std::filesystem::path("/data/ckpt"));
  EXPECT_EQ(storage_path("relative/dir"), std::filesystem::path("relative/dir"));
  try {
    storage_path("s3://bucket/ckpt");
    FAIL();
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("'s3://bucket/ckpt': only directories and file:// are supported"));
  }
}

TEST(CheckpointConfig, RestartDelays) {
  auto fixed = RestartStrategy::fixed_delay(3, 250);
  EXPECT_EQ(fixed.delay_for(1), 250);
  EXPECT_EQ(fixed.delay_for(3), 250);
  auto backoff = RestartStrategy::exponential_backoff(10, 100, 1000, 2.0);
  EXPECT_EQ(backoff.delay_for(1), 100);
  EXPECT_EQ(backoff.delay_for(2), 200);
  EXPECT_EQ(backoff.delay_for(4), 800);
  EXPECT_EQ(backoff.delay_for(5), 1000);  // capped
  EXPECT_EQ(backoff.delay_for(9), 1000);
}

}  // namespace
}  // namespace clink::test
