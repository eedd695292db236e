// Word count with the C++ DataStream API: the same job as examples/word_count.json.
//
//   build/release/example_word_count [path]      (default: examples/data/words.txt)
//
// Prints one "(word,count)" line per word, prefixed with the counting subtask
// ("1> ", "2> "), as `clink run examples/word_count.json` does.
#include <cstdio>
#include <exception>
#include <string>

#include "clink/api/data_stream.hpp"
#include "clink/connectors/file_source.hpp"
#include "clink/operators/builtin_streams.hpp"

int main(int argc, char** argv) {
  std::string path = argc > 1 ? argv[1] : "examples/data/words.txt";
  try {
    clink::StreamExecutionEnvironment env;
    env.set_parallelism(2);

    auto lines = env.from_source<std::string>(clink::FileSource<std::string>::text(path), "lines");
    lines.set_parallelism(1);
    auto words = clink::tokenize(lines, "tokenize");  // lower-case alphanumeric tokens
    words.set_parallelism(1);
    // Hash-partitioned by the word; each of the 2 subtasks emits its sorted counts at
    // the end of the input.
    auto counts = clink::count(words, clink::CountEmit::kFinal, "count");
    counts.print("print");

    env.execute("word_count");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
