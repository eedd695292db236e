// Window state is not durable yet: a checkpoint of a job with a window fails, naming
// the window, instead of losing the windows' contents on a later restore.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "clink/core/error.hpp"
#include "window_test_support.hpp"

namespace clink {
namespace {
using namespace clink::testing;

TEST(WindowCheckpoint, ACheckpointFailsNamingTheWindow) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("clink-window-ckpt-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  StreamExecutionEnvironment env;
  auto src = source(env, [](ScriptedSource<KV>& s) {
    auto until = std::make_shared<std::chrono::steady_clock::time_point>();
    s.records({{{"a", 1}, 1000}}).wait_until([until] {
      if (*until == std::chrono::steady_clock::time_point{}) *until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      return std::chrono::steady_clock::now() > *until;
    });
  });
  probe(keyed(src).window(TumblingEventTimeWindows::of(10000)).reduce(SumReducer{}, "my-window"));
  ExecutionOptions options;
  options.checkpoints.interval_ms = 20;
  options.checkpoints.directory = dir;
  try {
    execute(env.graph(), options);
    FAIL() << "expected the job to fail";
  } catch (const JobFailedError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("my-window"), std::string::npos) << msg;
    EXPECT_NE(msg.find("window state is not checkpointed yet"), std::string::npos) << msg;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace clink
