// Collect, blackhole and print sinks.
#include <fcntl.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <sstream>

#include "clink/api/data_stream.hpp"
#include "clink/connectors/blackhole_sink.hpp"
#include "clink/connectors/collect_sink.hpp"
#include "clink/connectors/datagen.hpp"
#include "clink/connectors/print_sink.hpp"
#include "connector_test_util.hpp"

namespace clink::test {
namespace {

using ::testing::ElementsAre;

// Runs `fn` with file descriptor `fd` (1 or 2) redirected to a file; returns the
// lines written, sorted (subtasks write concurrently).
std::vector<std::string> captured_lines(int fd, const std::function<void()>& fn) {
  TempDir dir;
  std::string path = dir.file("captured");
  std::fflush(nullptr);
  int saved = ::dup(fd);
  int file = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::dup2(file, fd);
  ::close(file);
  fn();
  std::fflush(nullptr);
  ::dup2(saved, fd);
  ::close(saved);
  std::vector<std::string> lines;
  std::istringstream in(read_file(path));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

TEST(CollectSink, KeepsValuesAndEventTimes) {
  StreamExecutionEnvironment env;
  auto sink = std::make_shared<CollectSink<std::string>>();
  env.from_source<std::string>(CollectionSource<std::string>::with_timestamps({{"a", 10}, {"b", kNoEventTime}}))
      .sink_to(sink);
  env.execute();
  EXPECT_THAT(sink->records(), ElementsAre(Record<std::string>{"a", 10, kNoPartition},
                                           Record<std::string>{"b", kNoEventTime, kNoPartition}));
  EXPECT_THAT(sink->values(), ElementsAre("a", "b"));
  EXPECT_EQ(sink->size(), 2u);
  sink->clear();
  EXPECT_EQ(sink->size(), 0u);
}

TEST(CollectSink, GathersAllSubtasks) {
  StreamExecutionEnvironment env;
  env.set_parallelism(3);
  auto sink = std::make_shared<CollectSink<std::int64_t>>();
  env.from_source<std::int64_t>(DatagenSource<std::int64_t>::sequence(1, 3000)).sink_to(sink);
  env.execute();
  auto v = sink->values();
  std::sort(v.begin(), v.end());
  ASSERT_EQ(v.size(), 3000u);
  for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], static_cast<std::int64_t>(i + 1));
}

TEST(BlackholeSink, DiscardsAndCounts) {
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  auto sink = std::make_shared<BlackholeSink<Event>>();
  env.from_source<Event>(DatagenSource<Event>::sequence(0, 4999)).sink_to(sink);
  env.execute();
  EXPECT_EQ(sink->count(), 5000);
}

TEST(PrintSink, PrefixesTheSubtaskAtParallelismTwo) {
  auto lines = captured_lines(1, [] {
    StreamExecutionEnvironment env;
    env.set_parallelism(2);
    env.from_source<std::int64_t>(DatagenSource<std::int64_t>::sequence(1, 4)).print();
    env.execute();
  });
  EXPECT_THAT(lines, ElementsAre("1> 1", "1> 3", "2> 2", "2> 4"));
}

TEST(PrintSink, NoPrefixAtParallelismOneAndStderrTarget) {
  auto out = captured_lines(1, [] {
    StreamExecutionEnvironment env;
    env.from_collection<Event>({{"a", 1}, {"b", 2}}).print();
    env.execute();
  });
  EXPECT_THAT(out, ElementsAre("(a,1)", "(b,2)"));
  auto err = captured_lines(2, [] {
    StreamExecutionEnvironment env;
    env.from_collection<std::string>({"x"}).print("Print", PrintTarget::kStderr);
    env.execute();
  });
  EXPECT_THAT(err, ElementsAre("x"));
}

}  // namespace
}  // namespace clink::test
