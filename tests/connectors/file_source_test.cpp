#include "clink/connectors/file_source.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "clink/api/data_stream.hpp"
#include "clink/connectors/collect_sink.hpp"
#include "connector_test_util.hpp"

namespace clink::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(FileSource, TextKeepsEmptyLinesAndStripsCrLf) {
  TempDir dir;
  auto path = dir.write("in.txt", "one\r\n\r\ntwo\n\n  \nthree");
  EXPECT_THAT(read_all<std::string>(*FileSource<std::string>::text(path)),
              ElementsAre("one", "", "two", "", "  ", "three"));
  EXPECT_THAT(read_all<std::string>(*FileSource<std::string>::text(dir.write("nl.txt", "\n"))), ElementsAre(""));
  EXPECT_THAT(read_all<std::string>(*FileSource<std::string>::text(dir.write("last.txt", "a\nb\n"))),
              ElementsAre("a", "b"));
  EXPECT_TRUE(read_all<std::string>(*FileSource<std::string>::text(dir.write("empty.txt", ""))).empty());
}

TEST(FileSource, DirectoryIsReadInSortedOrderSkippingHiddenFiles) {
  TempDir dir;
  dir.write("b.txt", "b1\nb2");
  dir.write("a.txt", "a1\n");
  dir.write("sub/c.txt", "c1\n");
  dir.write(".hidden", "hidden\n");
  dir.write("_SUCCESS", "marker\n");
  dir.write(".staging/x.txt", "staged\n");
  dir.write("_temporary/y.txt", "temporary\n");
  dir.write(".a.txt.inprogress", "partial\n");
  EXPECT_THAT(list_input_files(dir.path.string()),
              ElementsAre(dir.file("a.txt"), dir.file("b.txt"), dir.file("sub/c.txt")));
  EXPECT_THAT(read_all<std::string>(*FileSource<std::string>::text(dir.path.string())),
              ElementsAre("a1", "b1", "b2", "c1"));
}

TEST(FileSource, FilesAreAssignedRoundRobinInSortedOrder) {
  TempDir dir;
  for (int i = 0; i < 5; ++i) dir.write("f" + std::to_string(i), "line" + std::to_string(i) + "\n");
  auto src = FileSource<std::string>::text(dir.path.string());
  EXPECT_THAT(read_all<std::string>(*src, 0, 2), ElementsAre("line0", "line2", "line4"));
  EXPECT_THAT(read_all<std::string>(*src, 1, 2), ElementsAre("line1", "line3"));
  // A single file: subtask 0 reads it, the others finish at once.
  auto one = FileSource<std::string>::text(dir.file("f3"));
  EXPECT_THAT(read_all<std::string>(*one, 0, 3), ElementsAre("line3"));
  EXPECT_TRUE(read_all<std::string>(*one, 1, 3).empty());
  EXPECT_TRUE(read_all<std::string>(*one, 2, 3).empty());
}

TEST(FileSource, LinesLongerThanTheReadBufferAndManyRefills) {
  TempDir dir;
  std::string content;
  std::vector<std::string> expected;
  for (int i = 0; i < 2000; ++i) {
    std::string line(static_cast<std::size_t>(i % 300), static_cast<char>('a' + i % 26));
    line += std::to_string(i);
    expected.push_back(line);
    content += line + (i % 3 == 0 ? "\r\n" : "\n");
  }
  auto path = dir.write("long.txt", content);
  FileSourceOptions small;
  small.read_buffer_bytes = 64;
  EXPECT_EQ(read_all<std::string>(*FileSource<std::string>::text(path, small)), expected);
  EXPECT_EQ(read_all<std::string>(*FileSource<std::string>::text(path)), expected);
}

TEST(FileSource, JsonLinesDecodeExactValues) {
  TempDir dir;
  auto events = dir.write("events.jsonl",
                          "{\"key\":\"a\",\"value\":1}\n"
                          "\n"
                          "{\"value\":-2,\"key\":\"b\\\"c\"}\r\n"
                          "   \n"
                          "{\"key\":\"\",\"value\":9223372036854775807,\"ignored\":true}");
  EXPECT_THAT(read_all<Event>(*FileSource<Event>::json_lines(events)),
              ElementsAre(Event{"a", 1}, Event{"b\"c", -2}, Event{"", 9223372036854775807LL}));
  EXPECT_THAT(read_all<std::int64_t>(*FileSource<std::int64_t>::json_lines(dir.write("n.jsonl", "1\n-2\n3"))),
              ElementsAre(1, -2, 3));
  EXPECT_THAT(read_all<std::string>(*FileSource<std::string>::json_lines(dir.write("s.jsonl", "\"x\"\n\"\\n\"\n"))),
              ElementsAre("x", "\n"));
  EXPECT_THAT(read_all<WordCount>(*FileSource<WordCount>::json_lines(
                  dir.write("w.jsonl", "{\"word\":\"hi\",\"count\":2}\n{\"count\":3,\"word\":\"yo\"}\n"))),
              ElementsAre(WordCount{"hi", 2}, WordCount{"yo", 3}));
}

TEST(FileSource, MissingPathIsAClearError) {
  TempDir dir;
  auto src = FileSource<std::string>::text(dir.file("nope.txt"));
  TestContext tc;
  auto reader = src->create_reader(0, 1);
  try {
    reader->open(tc.ctx);
    FAIL() << "expected an error";
  } catch (const ClinkError& e) {
    EXPECT_EQ(std::string(e.what()), "file source: no such file or directory: " + dir.file("nope.txt"));
  }
}

TEST(FileSource, MalformedLineFailsWithFileLineAndReason) {
  TempDir dir;
  auto path = dir.write("events.jsonl", "{\"key\":\"a\",\"value\":1}\n\n{\"key\":\"b\"}\n{\"key\":\"c\",\"value\":3}\n");
  TestContext tc;
  auto reader = FileSource<Event>::json_lines(path)->create_reader(0, 1);
  reader->open(tc.ctx);
  Batch<Event> b;
  try {
    reader->poll(b, 100);
    FAIL() << "expected an error";
  } catch (const ClinkError& e) {
    EXPECT_EQ(std::string(e.what()), "malformed JSON in " + path + " line 3: missing field \"value\"");
  }
}

TEST(FileSource, MalformedLineFailsTheJob) {
  TempDir dir;
  auto path = dir.write("events.jsonl", "{\"key\":\"a\",\"value\":1}\n{\"key\":\"b\",\"value\":\"2\"}\n");
  StreamExecutionEnvironment env;
  auto sink = std::make_shared<CollectSink<Event>>();
  env.from_source<Event>(FileSource<Event>::json_lines(path)).sink_to(sink);
  try {
    env.execute();
    FAIL() << "expected the job to fail";
  } catch (const JobFailedError& e) {
    EXPECT_THAT(e.what(), HasSubstr("malformed JSON in " + path + " line 2: field \"value\" must be an integer"));
  }
}

TEST(FileSource, DeadLettersGoToTheSideOutputAndReadingContinues) {
  TempDir dir;
  dir.write("a.jsonl",
            "{\"key\":\"a\",\"value\":1}\n"
            "{\"key\":\"b\"}\n"
            "\n"
            "{\"key\":\"c\",\"value\":3}\n");
  auto b_path = dir.write("b.jsonl", "not json\r\n{\"key\":\"d\",\"value\":4}");
  FileSourceOptions options;
  options.on_error = OnError::kDeadLetter;

  StreamExecutionEnvironment env;
  auto good = std::make_shared<CollectSink<Event>>();
  auto dead = std::make_shared<CollectSink<DeadLetter>>();
  auto stream = env.from_source<Event>(FileSource<Event>::json_lines(dir.path.string(), options));
  stream.sink_to(good);
  stream.side_output(OutputTag<DeadLetter>("dead-letter")).sink_to(dead);
  auto handle = env.execute_async();
  handle.wait();

  EXPECT_THAT(good->values(), ElementsAre(Event{"a", 1}, Event{"c", 3}, Event{"d", 4}));
  auto letters = dead->values();
  ASSERT_EQ(letters.size(), 2u);
  EXPECT_EQ(letters[0], (DeadLetter{stream.id(), dir.file("a.jsonl"), 2, "missing field \"value\"", "{\"key\":\"b\"}"}));
  EXPECT_EQ(letters[1], (DeadLetter{stream.id(), b_path, 1, "expected a JSON object", "not json"}));
  EXPECT_EQ(handle.metrics().total(stream.id()).dead_letters, 2);
}

TEST(FileSource, DeadLettersThatNothingReadsFailTheJobInsteadOfVanishing) {
  TempDir dir;
  auto path = dir.write("e.jsonl", "{\"key\":\"a\",\"value\":1}\nbroken\n");
  FileSourceOptions options;
  options.on_error = OnError::kDeadLetter;
  StreamExecutionEnvironment env;
  env.from_source<Event>(FileSource<Event>::json_lines(path, options)).sink_to(std::make_shared<CollectSink<Event>>());
  try {
    env.execute();
    FAIL() << "expected the job to fail";
  } catch (const JobFailedError& e) {
    EXPECT_THAT(e.what(), HasSubstr("routed to the 'dead-letter' side output, but nothing reads it"));
  }
}

TEST(FileSource, DeadLettersWhenPolledDirectly) {
  TempDir dir;
  auto path = dir.write("n.jsonl", "1\nx\n2\n\"3\"\n");
  FileSourceOptions options;
  options.on_error = OnError::kDeadLetter;
  TestContext tc(0, 1, "numbers");
  auto reader = FileSource<std::int64_t>::json_lines(path, options)->create_reader(0, 1);
  reader->open(tc.ctx);
  EXPECT_THAT(values_of(drain(*reader)), ElementsAre(1, 2));
  auto letters = tc.output.side_values<DeadLetter>("dead-letter");
  ASSERT_EQ(letters.size(), 2u);
  EXPECT_EQ(letters[0].line, 2);
  EXPECT_EQ(letters[0].raw, "x");
  EXPECT_EQ(letters[1], (DeadLetter{"numbers", path, 4, "expected an integer", "\"3\""}));
  EXPECT_EQ(tc.metrics->dead_letters.load(), 2);
}

}  // namespace
}  // namespace clink::test
