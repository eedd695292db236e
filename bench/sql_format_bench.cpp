// Decoding rows of the SQL json and csv formats straight into columns, one core: the
// issue's target is >= 2 M rows/s for a 6-column row. Lines are decoded in place from
// one buffer with padding (as the filesystem source's line reader hands them over).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "clink/connectors/sql/sql_nexmark_source.hpp"
#include "clink/formats/csv_row_format.hpp"
#include "clink/formats/json_codec.hpp"
#include "clink/formats/json_row_format.hpp"
#include "clink/formats/record_format.hpp"

namespace clink::sql {
namespace {

SchemaPtr six_columns() {
  return make_schema({{"id", LogicalType::bigint()},
                      {"name", LogicalType::string()},
                      {"price", LogicalType::decimal(10, 2)},
                      {"qty", LogicalType::int_type()},
                      {"score", LogicalType::double_type()},
                      {"ts", LogicalType::timestamp(3)}});
}

// `n` lines, each followed by '\n', in one buffer with kJsonPadding to spare.
struct Lines {
  std::string buffer;
  std::vector<std::pair<std::size_t, std::size_t>> spans;
};

template <class MakeLine>
Lines make_lines(std::size_t n, MakeLine make) {
  Lines l;
  for (std::size_t i = 0; i < n; ++i) {
    std::string line = make(i);
    l.spans.emplace_back(l.buffer.size(), line.size());
    l.buffer += line;
    l.buffer += '\n';
  }
  l.buffer.append(kJsonPadding, ' ');
  return l;
}

void BM_JsonDecodeSixColumns(benchmark::State& state) {
  auto schema = six_columns();
  Lines lines = make_lines(4096, [](std::size_t i) {
    return "{\"id\":" + std::to_string(1000000 + i) + ",\"name\":\"item-" + std::to_string(i % 97) +
           "\",\"price\":" + std::to_string(i % 1000) + ".25,\"qty\":" + std::to_string(i % 50) +
           ",\"score\":0." + std::to_string(i % 9999) + ",\"ts\":\"2020-04-15 08:05:" + std::to_string(10 + i % 50) +
           ".123\"}";
  });
  JsonRowDecoder dec(schema, {});
  ColumnBatch batch(schema, 1024);
  std::string reason;
  std::size_t rows = 0;
  for (auto _ : state) {
    batch.clear();
    for (std::size_t k = 0; k < 1024; ++k) {
      auto [off, len] = lines.spans[(rows + k) % lines.spans.size()];
      if (!dec.decode(std::string_view(lines.buffer.data() + off, len), lines.buffer.size() - off, batch.columns(), reason))
        state.SkipWithError(reason.c_str());
    }
    batch.commit_rows(1024);
    rows += 1024;
    benchmark::DoNotOptimize(batch);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(rows));
}
BENCHMARK(BM_JsonDecodeSixColumns);

void BM_CsvDecodeSixColumns(benchmark::State& state) {
  auto schema = six_columns();
  Lines lines = make_lines(4096, [](std::size_t i) {
    return std::to_string(1000000 + i) + ",item-" + std::to_string(i % 97) + "," + std::to_string(i % 1000) + ".25," +
           std::to_string(i % 50) + ",0." + std::to_string(i % 9999) + ",2020-04-15 08:05:" +
           std::to_string(10 + i % 50) + ".123";
  });
  CsvRowDecoder dec(schema, {0, 1, 2, 3, 4, 5}, {});
  ColumnBatch batch(schema, 1024);
  std::string reason;
  std::size_t rows = 0;
  for (auto _ : state) {
    batch.clear();
    for (std::size_t k = 0; k < 1024; ++k) {
      auto [off, len] = lines.spans[(rows + k) % lines.spans.size()];
      if (dec.decode(std::string_view(lines.buffer.data() + off, len), batch.columns(), reason) !=
          CsvRowDecoder::Result::kRow)
        state.SkipWithError(reason.c_str());
    }
    batch.commit_rows(1024);
    rows += 1024;
    benchmark::DoNotOptimize(batch);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(rows));
}
BENCHMARK(BM_CsvDecodeSixColumns);

void BM_JsonEncodeSixColumns(benchmark::State& state) {
  auto schema = six_columns();
  ColumnBatch batch(schema, 1024);
  JsonRowDecoder dec(schema, {});
  std::string reason;
  for (std::size_t i = 0; i < 1024; ++i) {
    std::string line = "{\"id\":" + std::to_string(i) + ",\"name\":\"item\",\"price\":1.25,\"qty\":3,\"score\":0.5,"
                       "\"ts\":\"2020-04-15 08:05:00.123\"}";
    dec.decode(line, line.size(), batch.columns(), reason);
  }
  batch.commit_rows(1024);
  JsonRowEncoder enc(schema, {});
  std::string out;
  std::size_t rows = 0;
  for (auto _ : state) {
    out.clear();
    for (std::size_t r = 0; r < 1024; ++r) {
      enc.encode(batch, r, out);
      out += '\n';
    }
    rows += 1024;
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(rows));
}
BENCHMARK(BM_JsonEncodeSixColumns);

// The changelog JSON formats: one update message (two rows) per item, arg 0 debezium-json
// (Debezium's documented 456-byte MySQL update), 1 canal-json, 2 maxwell-json.
void BM_ChangelogJsonDecodeUpdate(benchmark::State& state) {
  static const char* kFormats[] = {"debezium-json", "canal-json", "maxwell-json"};
  static const char* kMessages[] = {
      R"j({"before":{"id":111,"name":"scooter","description":"Big 2-wheel scooter","weight":5.18},)j"
      R"j("after":{"id":111,"name":"scooter","description":"Big 2-wheel scooter","weight":5.15},)j"
      R"j("source":{"version":"1.1.1.Final","connector":"mysql","name":"dbserver1","ts_ms":0,"snapshot":"true",)j"
      R"j("db":"inventory","table":"products","server_id":0,"gtid":null,"file":"mysql-bin.000003","pos":154,"row":0,)j"
      R"j("thread":2,"query":null},"op":"u","ts_ms":1589362330904,"transaction":null})j",
      R"j({"data":[{"id":"111","name":"scooter","description":"Big 2-wheel scooter","weight":"5.15"}],)j"
      R"j("database":"inventory","es":1589373560000,"id":9,"isDdl":false,"mysqlType":{"id":"INTEGER",)j"
      R"j("name":"VARCHAR(255)","description":"VARCHAR(512)","weight":"FLOAT"},"old":[{"weight":"5.18"}],)j"
      R"j("pkNames":["id"],"sql":"","sqlType":{"id":4,"name":12,"description":12,"weight":7},)j"
      R"j("table":"products","ts":1589373560798,"type":"UPDATE"})j",
      R"j({"database":"test","table":"product","type":"update","ts":1596684906,"xid":7152,"commit":true,)j"
      R"j("data":{"id":111,"name":"scooter","description":"Big 2-wheel scooter","weight":5.15},)j"
      R"j("old":{"weight":5.18}})j"};
  const auto f = static_cast<std::size_t>(state.range(0));
  auto schema = make_schema({{"id", LogicalType::int_type()},
                             {"name", LogicalType::string()},
                             {"description", LogicalType::string()},
                             {"weight", LogicalType::double_type()}});
  auto dec = make_record_decoder(kFormats[f], schema, {});
  const std::string message = kMessages[f];
  ColumnBatch batch(schema, 2048);
  std::vector<Column*> cols;
  for (auto& c : batch.columns()) cols.push_back(&c);
  std::vector<RowKind> kinds;
  std::string reason;
  std::size_t messages = 0;
  for (auto _ : state) {
    for (auto& c : batch.columns()) c.clear();
    kinds.clear();
    for (std::size_t k = 0; k < 1024; ++k)
      if (dec->decode(message, cols, kinds, reason) != 2) state.SkipWithError(reason.c_str());
    messages += 1024;
    benchmark::DoNotOptimize(batch);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(messages));
  state.SetLabel(kFormats[f]);
}
BENCHMARK(BM_ChangelogJsonDecodeUpdate)->Arg(0)->Arg(1)->Arg(2);

// sql_nexmark_source's reader at max-emit-speed: events/s generated into columns, all
// four columns (arg 0) or the bid column only (arg 1, as q0-q2 read it).
void BM_NexmarkIntoColumns(benchmark::State& state) {
  std::vector<std::size_t> projected = state.range(0) == 0 ? std::vector<std::size_t>{0, 1, 2, 3}
                                                           : std::vector<std::size_t>{0, 3};
  NexmarkSqlSource source({{"max-emit-speed", "true"}, {"events.base-time", "1600000000000"}}, nexmark_table_schema(),
                          projected);
  auto reader = source.create_reader(0, 1);
  std::size_t rows = 0;
  for (auto _ : state) {
    ColumnBatch batch(source.output_schema(), 1024);
    reader->poll(batch, 1024);
    rows += batch.size();
    benchmark::DoNotOptimize(batch);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(rows));
}
BENCHMARK(BM_NexmarkIntoColumns)->Arg(0)->Arg(1);

}  // namespace
}  // namespace clink::sql
BENCHMARK_MAIN();
