// clink bench json: JSON ingest against its physical limit (issue 22 item 1). One file of
// Nexmark events as JSON lines (the datagen table's rows, as the json format writes them),
// then, in one run, three figures in events/s per core of CPU time:
//   simdjson  simdjson's bare on-demand parse of each line, touching every field the
//             table declares (keys matched, integers and strings read): the limit;
//   decode    clink's json decoder (the one the filesystem and Kafka sources use) into the
//             columns of 1024-row batches;
//   q0        Nexmark q0 end to end: filesystem source (json) -> computed dateTime,
//             watermark, the bid view -> blackhole, at the given parallelism;
// and the ratios to simdjson. The file is written once per size and reused.
#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <simdjson.h>

#include "clink/connectors/sql/sql_nexmark_source.hpp"
#include "clink/formats/json_codec.hpp"
#include "clink/formats/json_row_format.hpp"
#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/parser/parser.hpp"
#include "commands.hpp"
#include "sql_session.hpp"

namespace clink::cli {
namespace {

namespace od = simdjson::ondemand;

struct JsonBenchOptions {
  std::int64_t events = 1'000'000;
  int parallelism = 1;
  int runs = 3;
  std::string only;  // one figure alone (to profile it): simdjson, decode or q0
  std::string file;  // default: <temp dir>/clink-bench-json-<events>.jsonl
};

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

const char* kDatagenColumns = R"(event_type INT,
  person ROW<id BIGINT, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR, city VARCHAR, state VARCHAR,
             dateTime TIMESTAMP(3), extra VARCHAR>,
  auction ROW<id BIGINT, itemName VARCHAR, description VARCHAR, initialBid BIGINT, reserve BIGINT,
              dateTime TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra VARCHAR>,
  bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, dateTime TIMESTAMP(3),
          extra VARCHAR>)";

// The generator's events (Nexmark's default proportions 1:3:46) through the json encoder.
void write_events(const std::string& path, std::int64_t events) {
  sql::SchemaPtr schema = sql::nexmark_table_schema();
  sql::NexmarkSqlSource source({{"max-emit-speed", "true"},
                                {"events.num", std::to_string(events)},
                                {"events.base-time", "1600000000000"}},
                               schema, {0, 1, 2, 3});
  auto reader = source.create_reader(0, 1);
  sql::JsonRowEncoder encoder(source.output_schema(), {});
  const std::string tmp = path + ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) throw ClinkError("cannot write " + tmp);
  std::string text;
  for (;;) {
    sql::ColumnBatch batch(source.output_schema(), 4096);
    auto status = reader->poll(batch, 4096);
    text.clear();
    for (std::size_t r = 0; r < batch.size(); ++r) {
      encoder.encode(batch, r, text);
      text += '\n';
    }
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (status == sql::SqlSourceReader::Status::kEnd) break;
  }
  out.close();
  if (!out) throw ClinkError("cannot write " + tmp);
  std::filesystem::rename(tmp, path);
}

// The file in memory, lines in place with kJsonPadding after the last (as the file
// source's line reader hands them to the decoder).
struct Lines {
  std::string buffer;
  std::vector<std::pair<std::size_t, std::size_t>> spans;
};

Lines read_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Lines l;
  l.buffer.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  std::size_t at = 0;
  while (at < l.buffer.size()) {
    std::size_t nl = l.buffer.find('\n', at);
    if (nl == std::string::npos) nl = l.buffer.size();
    if (nl > at) l.spans.emplace_back(at, nl - at);
    at = nl + 1;
  }
  l.buffer.append(kJsonPadding, ' ');
  return l;
}

// The field names of one nested ROW and which of them are integers (the others strings:
// VARCHAR and the TIMESTAMP(3) text).
struct RowFields {
  std::vector<std::string> names;
  std::vector<bool> integer;
};

std::uint64_t touch_row(od::object obj, const RowFields& f) {
  std::uint64_t sum = 0;
  for (auto field : obj) {
    od::raw_json_string key = field.key();
    for (std::size_t i = 0; i < f.names.size(); ++i) {
      if (!key.unsafe_is_equal(f.names[i])) continue;
      if (f.integer[i]) {
        sum += static_cast<std::uint64_t>(field.value().get_int64().value());
      } else {
        od::value v = field.value();
        if (!v.is_null()) sum += v.get_string().value().size();
      }
      break;
    }
  }
  return sum;
}

// simdjson alone: every line parsed, every declared field read. Returns the checksum.
std::uint64_t bare_parse(const Lines& lines) {
  const RowFields person{{"id", "name", "emailAddress", "creditCard", "city", "state", "dateTime", "extra"},
                         {true, false, false, false, false, false, false, false}};
  const RowFields auction{
      {"id", "itemName", "description", "initialBid", "reserve", "dateTime", "expires", "seller", "category", "extra"},
      {true, false, false, true, true, false, false, true, true, false}};
  const RowFields bid{{"auction", "bidder", "price", "channel", "url", "dateTime", "extra"},
                      {true, true, true, false, false, false, false}};
  const RowFields* rows[] = {&person, &auction, &bid};
  const char* names[] = {"person", "auction", "bid"};
  od::parser parser;
  std::uint64_t sum = 0;
  for (auto [off, len] : lines.spans) {
    od::document doc = parser.iterate(lines.buffer.data() + off, len, lines.buffer.size() - off);
    for (auto field : doc.get_object()) {
      od::raw_json_string key = field.key();
      if (key.unsafe_is_equal("event_type")) {
        sum += static_cast<std::uint64_t>(field.value().get_int64().value());
        continue;
      }
      for (int k = 0; k < 3; ++k) {
        if (!key.unsafe_is_equal(names[k])) continue;
        od::value v = field.value();
        if (!v.is_null()) sum += touch_row(v.get_object(), *rows[k]);
        break;
      }
    }
  }
  return sum;
}

// clink's decoder into 1024-row batches of the datagen table's columns.
std::size_t decode_all(const Lines& lines) {
  sql::SchemaPtr schema = sql::nexmark_table_schema();
  sql::JsonRowDecoder decoder(schema, {});
  sql::ColumnBatch batch(schema, 1024);
  std::string reason;
  std::size_t rows = 0, in_batch = 0;
  for (auto [off, len] : lines.spans) {
    if (!decoder.decode(std::string_view(lines.buffer.data() + off, len), lines.buffer.size() - off, batch.columns(),
                        reason))
      throw ClinkError(fmt::format("line {}: {}", rows + 1, reason));
    ++rows;
    if (++in_batch == 1024) {
      batch.commit_rows(in_batch);
      batch.clear();
      in_batch = 0;
    }
  }
  return rows;
}

std::string q0_script(const std::string& path) {
  return fmt::format(R"(
CREATE TABLE datagen ({},
  dateTime AS CASE WHEN event_type = 0 THEN person.dateTime WHEN event_type = 1 THEN auction.dateTime
                   ELSE bid.dateTime END,
  WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND
) WITH ('connector' = 'filesystem', 'path' = '{}', 'format' = 'json');
CREATE VIEW bid AS
SELECT bid.auction, bid.bidder, bid.price, bid.channel, bid.url, dateTime, bid.extra FROM datagen WHERE event_type = 2;
CREATE TABLE nexmark_q0 (auction BIGINT, bidder BIGINT, price BIGINT, dateTime TIMESTAMP(3), extra VARCHAR)
WITH ('connector' = 'blackhole');
INSERT INTO nexmark_q0 SELECT auction, bidder, price, dateTime, extra FROM bid;
)",
                     kDatagenColumns, path);
}

struct Figure {
  double wall = 0, cpu = 0;
};

void print_row(const char* what, const Figure& f, double events, double limit_per_core) {
  const double per_core = f.cpu > 0 ? events / f.cpu : 0;
  std::printf("%-9s %10.3f %10.3f %18.0f %10.2f\n", what, f.wall, f.cpu, per_core,
              per_core > 0 ? limit_per_core / per_core : 0.0);
}

int bench_json(const JsonBenchOptions& opts) {
  try {
    std::string path = opts.file;
    if (path.empty())
      path = (std::filesystem::temp_directory_path() / fmt::format("clink-bench-json-{}.jsonl", opts.events)).string();
    if (!std::filesystem::exists(path)) write_events(path, opts.events);
    Lines lines = read_lines(path);
    const double events = static_cast<double>(lines.spans.size());
    std::printf("json ingest: %zu events (%.1f MiB, %.0f bytes per event) from %s\n", lines.spans.size(),
                static_cast<double>(lines.buffer.size()) / (1 << 20),
                static_cast<double>(lines.buffer.size()) / events, path.c_str());

    auto timed = [](auto&& body, auto cpu_now) {
      Figure f;
      double c0 = cpu_now();
      auto w0 = std::chrono::steady_clock::now();
      body();
      f.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
      f.cpu = cpu_now() - c0;
      return f;
    };
    // Each figure the best of --runs (the least CPU time): on a shared machine the
    // others' load only ever adds time.
    auto best = [&](auto&& body, auto cpu_now) {
      Figure b = timed(body, cpu_now);
      for (int r = 1; r < opts.runs; ++r) {
        Figure f = timed(body, cpu_now);
        if (f.cpu < b.cpu) b = f;
      }
      return b;
    };
    auto wanted = [&](const char* figure) { return opts.only.empty() || opts.only == figure; };
    std::uint64_t checksum = 0;
    Figure bare, decode, q0;
    if (wanted("simdjson")) bare = best([&] { checksum = bare_parse(lines); }, thread_cpu_seconds);
    std::size_t decoded = lines.spans.size();
    if (wanted("decode")) decode = best([&] { decoded = decode_all(lines); }, thread_cpu_seconds);
    if (decoded != lines.spans.size()) throw ClinkError("the decoder read a different number of rows");

    const auto script = sql::parse(q0_script(path));
    if (wanted("q0")) q0 = best(
        [&] {
          SqlJobSettings settings;
          settings.parallelism = opts.parallelism;
          SqlSession session(settings, "", stdout);
          for (const auto& st : script.statements) session.execute(st);
        },
        process_cpu_seconds);

    const double limit = bare.cpu > 0 ? events / bare.cpu : 0;
    std::printf("(best of %d runs; simdjson checksum %llu; q0 at parallelism %d, its CPU time the whole process's)\n\n",
                opts.runs, static_cast<unsigned long long>(checksum), opts.parallelism);
    std::printf("%-9s %10s %10s %18s %10s\n", "", "wall s", "cpu s", "events/s per core", "x simdjson");
    print_row("simdjson", bare, events, limit);
    print_row("decode", decode, events, limit);
    print_row("q0", q0, events, limit);
    return kExitOk;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitError;
  }
}

}  // namespace

void add_bench_json_command(CLI::App& bench, int& exit_code) {
  auto opts = std::make_shared<JsonBenchOptions>();
  auto* cmd = bench.add_subcommand("json", "Nexmark events as JSON lines: simdjson's bare parse, clink's decoder and "
                                           "q0 over the filesystem source, in events/s per core and as ratios");
  cmd->add_option("-n,--events", opts->events, "Events in the file")->default_val(1'000'000)->check(CLI::Range(1LL, 1LL << 40));
  cmd->add_option("-p,--parallelism", opts->parallelism, "Parallelism of q0")->default_val(1)->check(CLI::Range(1, 256));
  cmd->add_option("-r,--runs", opts->runs, "Runs of each measurement; the best is reported")->default_val(3)->check(CLI::Range(1, 100));
  cmd->add_option("--only", opts->only, "Measure one figure alone, e.g. under a profiler")
      ->check(CLI::IsMember({"simdjson", "decode", "q0"}));
  cmd->add_option("-f,--file", opts->file, "The JSON-lines file (written first when missing; default: in the temp dir)");
  cmd->callback([opts, &exit_code] { exit_code = bench_json(*opts); });
}

}  // namespace clink::cli
