#include "clink/connectors/file_sink.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "clink/api/data_stream.hpp"
#include "clink/connectors/collect_sink.hpp"
#include "clink/connectors/datagen.hpp"
#include "clink/connectors/file_source.hpp"
#include "connector_test_util.hpp"

namespace clink::test {
namespace {

using ::testing::ElementsAre;

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
    TestContext tc;
    auto w = sink->create_writer(0, 1);
    w->open(tc.ctx);
    w->begin_transaction(1);
    w->write(batch);
    w->commit(w->pre_commit());
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
  EXPECT_EQ(file_sink_target(dir.file("x/"), 0, 1, "txt", 0), dir.file("x/part-0-0.txt"));
  EXPECT_EQ(file_sink_target(dir.path.string(), 0, 1, "txt", 0), dir.file("part-0-0.txt"));
  EXPECT_EQ(file_sink_target(dir.file("y.txt"), 0, 1, "txt", 0), dir.file("y.txt"));
  EXPECT_EQ(file_sink_target(dir.file("y.txt"), 3, 4, "jsonl", 0), dir.file("y.txt/part-3-0.jsonl"));
  EXPECT_EQ(file_sink_target(dir.file("y.txt"), 3, 4, "jsonl", 17), dir.file("y.txt/part-3-17.jsonl"));
  EXPECT_EQ(file_sink_target(dir.file("x/"), 0, 1, "txt", 5), dir.file("x/part-0-5.txt"));
  EXPECT_TRUE(file_sink_single_file(dir.file("y.txt"), 1));
  EXPECT_FALSE(file_sink_single_file(dir.file("y.txt"), 2));
  EXPECT_FALSE(file_sink_single_file(dir.file("x/"), 1));
  EXPECT_FALSE(file_sink_single_file(dir.path.string(), 1));
}

TEST(FileSink, NothingIsVisibleUntilCommitAndAbortLeavesNothing) {
  TempDir dir;
  FileSink<std::string> sink(dir.file("out.txt"));
  TestContext tc;
  auto w = sink.create_writer(0, 1);
  w->open(tc.ctx);
  w->begin_transaction(1);
  w->write(batch_of<std::string>({"a", "b"}));
  EXPECT_THAT(dir.listing(), ElementsAre(".out.txt.inprogress"));
  auto committable = w->pre_commit();  // durable, still invisible
  EXPECT_THAT(dir.listing(), ElementsAre(".out.txt.inprogress"));
  w->commit(committable);
  w->close();
  EXPECT_THAT(dir.listing(), ElementsAre("out.txt"));
  EXPECT_EQ(read_file(dir.file("out.txt")), "a\nb\n");

  auto failed = FileSink<std::string>(dir.file("failed.txt")).create_writer(0, 1);
  failed->open(tc.ctx);
  failed->begin_transaction(1);
  failed->write(batch_of<std::string>({"partial"}));
  failed->abort();  // the job failed
  failed->close();
  EXPECT_THAT(dir.listing(), ElementsAre("out.txt"));

  auto closed = FileSink<std::string>(dir.file("closed.txt")).create_writer(0, 1);
  closed->open(tc.ctx);
  closed->begin_transaction(1);
  closed->write(batch_of<std::string>({"partial"}));
  closed->close();  // closing without a commit aborts too
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

TEST(FileSink, EachTransactionWithRecordsWritesOnePartFile) {
  TempDir dir;
  FileSink<std::int64_t> sink(dir.file("out/"));
  TestContext tc(1, 2);
  auto w = sink.create_writer(1, 2);
  w->open(tc.ctx);
  const std::int64_t first = (std::int64_t{1} << 40) + 1;  // the operator's first transaction of subtask 1
  w->begin_transaction(first);
  w->write(batch_of<std::int64_t>({1, 2}));
  auto c0 = w->pre_commit();
  w->begin_transaction(first + 1);
  w->write(Batch<std::int64_t>{});
  EXPECT_EQ(w->pre_commit(), "");  // no records: nothing to commit, no file
  w->begin_transaction(first + 2);
  w->write(batch_of<std::int64_t>({3}));
  auto c2 = w->pre_commit();
  w->begin_transaction(first + 3);
  w->write(batch_of<std::int64_t>({4}));
  EXPECT_THAT(dir.listing(), ElementsAre("out", "out/.part-1-0.txt.inprogress", "out/.part-1-2.txt.inprogress",
                                         "out/.part-1-3.txt.inprogress"));
  w->commit(c0);
  w->commit("");
  w->commit(c2);
  w->close();  // the open transaction is aborted
  EXPECT_THAT(dir.listing(), ElementsAre("out", "out/part-1-0.txt", "out/part-1-2.txt"));
  EXPECT_EQ(read_file(dir.file("out/part-1-0.txt")), "1\n2\n");
  EXPECT_EQ(read_file(dir.file("out/part-1-2.txt")), "3\n");
}

TEST(FileSink, PartNumbersCountEachSubtasksTransactions) {
  EXPECT_EQ(FilePartWriter::part_number(1, 0), 0);
  EXPECT_EQ(FilePartWriter::part_number(6, 0), 5);
  EXPECT_EQ(FilePartWriter::part_number((std::int64_t{2} << 40) + 1, 2), 0);
  EXPECT_EQ(FilePartWriter::part_number((std::int64_t{2} << 40) + 4, 2), 3);
  // After a restore a subtask may continue in a higher subtask's range: its numbers
  // then lie above all of its own range, so they never repeat an earlier part.
  EXPECT_EQ(FilePartWriter::part_number((std::int64_t{3} << 40) + 1, 1), std::int64_t{2} << 40);
}

TEST(FileSink, AJobWithoutRecordsWritesNoPartFilesButTheSingleFile) {
  TempDir dir;
  auto run = [](int parallelism, const std::string& path) {
    StreamExecutionEnvironment env;
    env.set_parallelism(parallelism);
    env.from_source<std::int64_t>(DatagenSource<std::int64_t>::sequence(1, 10))
        .filter([](std::int64_t) { return false; })
        .sink_to(std::make_shared<FileSink<std::int64_t>>(path));
    env.execute();
  };
  run(2, dir.file("parts"));
  run(1, dir.file("dir/"));
  run(1, dir.file("single.txt"));
  EXPECT_THAT(dir.listing(), ElementsAre("dir", "parts", "single.txt"));
  EXPECT_EQ(read_file(dir.file("single.txt")), "");
}

TEST(FileSink, CommitIsIdempotent) {
  TempDir dir;
  FileSink<std::string> sink(dir.file("out/"));
  TestContext tc;
  auto w = sink.create_writer(0, 1);
  w->open(tc.ctx);
  w->begin_transaction(1);
  w->write(batch_of<std::string>({"a", "b"}));
  auto c = w->pre_commit();
  w->begin_transaction(2);
  w->commit(c);
  w->commit(c);  // the same committable twice
  EXPECT_THAT(dir.listing(), ElementsAre("out", "out/part-0-0.txt"));
  EXPECT_EQ(read_file(dir.file("out/part-0-0.txt")), "a\nb\n");

  // A restored run commits again what its checkpoint pre-committed, though the file
  // was renamed already.
  TestContext tc2;
  auto restored = sink.create_writer(0, 1);
  restored->open(tc2.ctx);
  restored->commit(c);
  EXPECT_THAT(dir.listing(), ElementsAre("out", "out/part-0-0.txt"));
  EXPECT_EQ(read_file(dir.file("out/part-0-0.txt")), "a\nb\n");

  // Neither the staging file nor the part file: the pre-committed data is lost.
  std::filesystem::remove(dir.file("out/part-0-0.txt"));
  EXPECT_THROW(restored->commit(c), ClinkError);
  restored->close();
  w->close();
}

TEST(FileSink, StagedFilePersistsAndCommitsByPath) {
  TempDir dir;
  std::string staging;
  {
    StagedFile f(dir.file("d/x.txt"));
    f.append("x\n");
    f.persist();
    staging = f.staging_path();
  }  // a persisted file survives its StagedFile
  EXPECT_EQ(staging, staging_path_for(dir.file("d/x.txt")));
  EXPECT_THAT(dir.listing(), ElementsAre("d", "d/.x.txt.inprogress"));
  commit_staged_file(staging, dir.file("d/x.txt"));
  commit_staged_file(staging, dir.file("d/x.txt"));  // committed already: nothing to do
  EXPECT_THAT(dir.listing(), ElementsAre("d", "d/x.txt"));
  EXPECT_EQ(read_file(dir.file("d/x.txt")), "x\n");
  EXPECT_THROW(commit_staged_file(dir.file("d/.y.inprogress"), dir.file("d/y")), ClinkError);
}

TEST(FileSink, ACheckpointInSingleFileModeFailsClearly) {
  TempDir dir;
  TestContext tc;
  auto w = FileSink<std::string>(dir.file("one.txt")).create_writer(0, 1);
  w->open(tc.ctx);
  w->begin_transaction(1);
  w->write(batch_of<std::string>({"a"}));
  w->pre_commit();
  try {
    w->begin_transaction(2);  // what a checkpoint does after pre-committing
    FAIL() << "expected ClinkError";
  } catch (const ClinkError& e) {
    EXPECT_EQ(std::string(e.what()), "file sink '" + dir.file("one.txt") +
                                         "' writes a single file; with checkpointing give a directory (a path "
                                         "ending in '/')");
  }
  w->close();
  EXPECT_TRUE(dir.listing().empty());
}

// A restored writer deletes the staging files a failed run left behind (its own, and
// subtask 0 those of subtasks that no longer exist) but keeps every one the restored
// checkpoint still commits, whichever subtask commits it.
TEST(FileSink, RestoreRemovesStaleStagingFilesButKeepsPreCommittedOnes) {
  TempDir dir;
  FileSink<std::string> sink(dir.file("out/"));
  std::vector<OperatorStateStore> checkpoint;
  std::string c0, c1;
  {
    TestContext tc0(0, 2), tc1(1, 2);
    auto w0 = sink.create_writer(0, 2);
    auto w1 = sink.create_writer(1, 2);
    w0->open(tc0.ctx);
    w1->open(tc1.ctx);
    w0->begin_transaction(1);
    w1->begin_transaction((std::int64_t{1} << 40) + 1);
    w0->write(batch_of<std::string>({"a"}));
    w1->write(batch_of<std::string>({"x"}));
    c0 = w0->pre_commit();  // checkpoint 1 completes; its commits never happen
    c1 = w1->pre_commit();
    checkpoint = {tc0.ctx.operator_state(), tc1.ctx.operator_state()};
    w0->begin_transaction(2);
    w0->write(batch_of<std::string>({"b"}));
    w0->pre_commit();  // checkpoint 2 never completes
  }
  // Left by a crash (no abort), and by an earlier run at parallelism 4.
  dir.write("out/.part-0-2.txt.inprogress", "c\n");
  dir.write("out/.part-1-1.txt.inprogress", "y\n");
  dir.write("out/.part-3-0.txt.inprogress", "old\n");
  dir.write("out/.part-0-7.jsonl.inprogress", "another format\n");
  dir.write("out/.other", "");
  EXPECT_THAT(dir.listing(),
              ElementsAre("out", "out/.other", "out/.part-0-0.txt.inprogress", "out/.part-0-1.txt.inprogress",
                          "out/.part-0-2.txt.inprogress", "out/.part-0-7.jsonl.inprogress",
                          "out/.part-1-0.txt.inprogress", "out/.part-1-1.txt.inprogress",
                          "out/.part-3-0.txt.inprogress"));

  // Subtask 1 of 2 removes only its own stale files.
  TestContext r1(1, 2);
  r1.ctx.set_operator_state(OperatorStateStore::redistribute(checkpoint, 1, 2));
  r1.ctx.set_restored(true);
  auto w1 = sink.create_writer(1, 2);
  w1->open(r1.ctx);
  EXPECT_THAT(dir.listing(),
              ElementsAre("out", "out/.other", "out/.part-0-0.txt.inprogress", "out/.part-0-1.txt.inprogress",
                          "out/.part-0-2.txt.inprogress", "out/.part-0-7.jsonl.inprogress",
                          "out/.part-1-0.txt.inprogress", "out/.part-3-0.txt.inprogress"));
  w1->close();

  // Restored at parallelism 1, subtask 0 also cleans up after the subtasks that are gone.
  TestContext r0(0, 1);
  r0.ctx.set_operator_state(OperatorStateStore::redistribute(checkpoint, 0, 1));
  r0.ctx.set_restored(true);
  auto w0 = sink.create_writer(0, 1);
  w0->open(r0.ctx);
  EXPECT_THAT(dir.listing(), ElementsAre("out", "out/.other", "out/.part-0-0.txt.inprogress",
                                         "out/.part-0-7.jsonl.inprogress", "out/.part-1-0.txt.inprogress"));
  w0->commit(c0);
  w0->commit(c1);
  w0->close();
  EXPECT_THAT(dir.listing(),
              ElementsAre("out", "out/.other", "out/.part-0-7.jsonl.inprogress", "out/part-0-0.txt", "out/part-1-0.txt"));
  EXPECT_EQ(read_file(dir.file("out/part-0-0.txt")), "a\n");
  EXPECT_EQ(read_file(dir.file("out/part-1-0.txt")), "x\n");
}

TEST(FileSink, JsonForATypeWithoutEncoderIsRejectedUpFront) {
  EXPECT_THROW(FileSink<double>("x", LineFormat::kJson), ClinkError);
}

}  // namespace
}  // namespace clink::test

namespace clink::test {
namespace {

// Whatever the sink writes as JSON lines, the source reads back exactly, across read
// buffer boundaries and at parallelism 3 on both sides.
TEST(FileSink, JsonLinesRoundTripThroughTheFileSource) {
  TempDir dir;
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
}  // namespace clink::test
