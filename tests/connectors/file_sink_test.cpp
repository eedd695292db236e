#include "clink/connectors/file_sink.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "clink/api/data_stream.hpp"
#include "clink/connectors/collect_sink.hpp"
#include "clink/connectors/datagen.hpp"
#include "clink/connectors/file_source.hpp"
#include "connector_test_util.hpp"

namespace clink {
namespace {

using ::testing::ElementsAre;
using test::read_file;
using test::TempDir;

template <class T>
Batch<T> batch_of(std::vector<T> values) {
  Batch<T> b;
  for (auto& v : values) b.push(std::move(v));
  return b;
}

TEST(FileSink, WritesExactlyTheNamedFileAtParallelismOne) {
  TempDir dir;
  auto path = dir.file("out/events.txt");  // the parent directory is created
  StreamExecutionEnvironment env;
  env.from_collection<Event>({{"a", 1}, {"b", 2}}).sink_to(std::make_shared<FileSink<Event>>(path));
  env.execute();
  EXPECT_EQ(read_file(path), "(a,1)\n(b,2)\n");
  EXPECT_THAT(dir.listing(), ElementsAre("out", "out/events.txt"));
}

TEST(FileSink, JsonLinesForEverySpecType) {
  TempDir dir;
  auto write = [&](auto sink, auto batch) {
    test::TestContext tc;
    auto w = sink->create_writer(0, 1);
    w->open(tc.ctx);
    w->write(batch);
    w->finish();
    w->close();
    return read_file(sink->path());
  };
  EXPECT_EQ(write(std::make_shared<FileSink<std::int64_t>>(dir.file("i"), LineFormat::kJson),
                  batch_of<std::int64_t>({5, -1})),
            "5\n-1\n");
  EXPECT_EQ(write(std::make_shared<FileSink<std::string>>(dir.file("s"), LineFormat::kJson),
                  batch_of<std::string>({"a", "q\"\n"})),
            "\"a\"\n\"q\\\"\\n\"\n");
  EXPECT_EQ(write(std::make_shared<FileSink<Event>>(dir.file("e"), LineFormat::kJson), batch_of<Event>({{"a", 1}})),
            "{\"key\":\"a\",\"value\":1}\n");
  EXPECT_EQ(write(std::make_shared<FileSink<WordCount>>(dir.file("w"), LineFormat::kJson),
                  batch_of<WordCount>({{"a", 1}})),
            "{\"word\":\"a\",\"count\":1}\n");
  EXPECT_EQ(write(std::make_shared<FileSink<WindowCount>>(dir.file("wc"), LineFormat::kJson),
                  batch_of<WindowCount>({{"k", 0, 3}})),
            "{\"key\":\"k\",\"window_start\":0,\"count\":3}\n");
  EXPECT_EQ(write(std::make_shared<FileSink<DeadLetter>>(dir.file("d"), LineFormat::kJson),
                  batch_of<DeadLetter>({{"src", "f", 2, "why", "raw"}})),
            "{\"source\":\"src\",\"file\":\"f\",\"line\":2,\"reason\":\"why\",\"raw\":\"raw\"}\n");
  EXPECT_EQ(write(std::make_shared<FileSink<WordCount>>(dir.file("t")), batch_of<WordCount>({{"a", 1}})), "(a,1)\n");
}

TEST(FileSink, PartFilesAtParallelismTwo) {
  TempDir dir;
  StreamExecutionEnvironment env;
  env.set_parallelism(2);
  env.from_source<std::int64_t>(DatagenSource<std::int64_t>::sequence(1, 6))
      .sink_to(std::make_shared<FileSink<std::int64_t>>(dir.file("out"), LineFormat::kJson));
  env.execute();
  EXPECT_THAT(dir.listing(), ElementsAre("out", "out/part-0-0.jsonl", "out/part-1-0.jsonl"));
  EXPECT_EQ(read_file(dir.file("out/part-0-0.jsonl")), "1\n3\n5\n");
  EXPECT_EQ(read_file(dir.file("out/part-1-0.jsonl")), "2\n4\n6\n");
}

TEST(FileSink, TrailingSlashOrExistingDirectoryMeansPartFiles) {
  TempDir dir;
  EXPECT_EQ(file_sink_target(dir.file("x/"), 0, 1, "txt"), dir.file("x/part-0-0.txt"));
  EXPECT_EQ(file_sink_target(dir.path().string(), 0, 1, "txt"), dir.file("part-0-0.txt"));
  EXPECT_EQ(file_sink_target(dir.file("y.txt"), 0, 1, "txt"), dir.file("y.txt"));
  EXPECT_EQ(file_sink_target(dir.file("y.txt"), 3, 4, "jsonl"), dir.file("y.txt/part-3-0.jsonl"));
}

TEST(FileSink, NothingIsVisibleUntilFinishAndAbortLeavesNothing) {
  TempDir dir;
  FileSink<std::string> sink(dir.file("out.txt"));
  test::TestContext tc;
  auto w = sink.create_writer(0, 1);
  w->open(tc.ctx);
  w->write(batch_of<std::string>({"a", "b"}));
  EXPECT_THAT(dir.listing(), ElementsAre(".out.txt.inprogress"));
  w->finish();
  w->close();
  EXPECT_THAT(dir.listing(), ElementsAre("out.txt"));
  EXPECT_EQ(read_file(dir.file("out.txt")), "a\nb\n");

  auto failed = FileSink<std::string>(dir.file("failed.txt")).create_writer(0, 1);
  failed->open(tc.ctx);
  failed->write(batch_of<std::string>({"partial"}));
  failed->close();  // no finish(): the job failed
  EXPECT_THAT(dir.listing(), ElementsAre("out.txt"));
}

TEST(FileSink, AFailedJobLeavesNoFile) {
  TempDir dir;
  auto in = dir.write("in/bad.jsonl", "1\n2\nthree\n");
  StreamExecutionEnvironment env;
  env.from_source<std::int64_t>(FileSource<std::int64_t>::json_lines(in))
      .sink_to(std::make_shared<FileSink<std::int64_t>>(dir.file("out.txt")));
  EXPECT_THROW(env.execute(), JobFailedError);
  EXPECT_THAT(dir.listing(), ElementsAre("in", "in/bad.jsonl"));
}

TEST(FileSink, JsonForATypeWithoutEncoderIsRejectedUpFront) {
  EXPECT_THROW(FileSink<double>("x", LineFormat::kJson), ClinkError);
}

}  // namespace
}  // namespace clink

namespace clink {
namespace {

// Whatever the sink writes as JSON lines, the source reads back exactly, across read
// buffer boundaries and at parallelism 3 on both sides.
TEST(FileSink, JsonLinesRoundTripThroughTheFileSource) {
  test::TempDir dir;
  std::vector<Event> events;
  for (std::int64_t i = 0; i < 20000; ++i)
    events.push_back(Event{std::string(static_cast<std::size_t>(i % 17), 'k') + "\"\\\n\t" + std::to_string(i),
                           i * 7919 - 1000000});
  {
    StreamExecutionEnvironment env;
    env.set_parallelism(3);
    env.from_collection<Event>(events).rebalance().sink_to(
        std::make_shared<FileSink<Event>>(dir.file("events"), LineFormat::kJson));
    env.execute();
  }
  FileSourceOptions small;
  small.read_buffer_bytes = 4096;
  StreamExecutionEnvironment env;
  env.set_parallelism(3);
  auto sink = std::make_shared<CollectSink<Event>>();
  env.from_source<Event>(FileSource<Event>::json_lines(dir.file("events"), small)).sink_to(sink);
  env.execute();
  auto got = sink->values();
  auto by_value = [](const Event& a, const Event& b) { return a.value < b.value; };
  std::sort(got.begin(), got.end(), by_value);
  EXPECT_EQ(got, events);
}

}  // namespace
}  // namespace clink
