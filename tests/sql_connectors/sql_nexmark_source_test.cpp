// sql_nexmark_source: Nexmark's events as the rows of Nexmark's Flink DDL table, equal
// to the generator's events written through the general Value path; projection, the
// old bid shape, event times, schema and option errors, and exactly-once restore.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../support/checkpoint_support.hpp"
#include "clink/connectors/nexmark/nexmark_generator.hpp"
#include "clink/connectors/nexmark/nexmark_options.hpp"
#include "clink/connectors/sql/sql_nexmark_source.hpp"
#include "clink/connectors/sql/sql_sinks.hpp"
#include "clink/formats/json_row_format.hpp"
#include "clink/core/error.hpp"
#include "clink/runtime/executor.hpp"
#include "sql_job_support.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

using ::testing::HasSubstr;

const std::map<std::string, std::string> kOptions = {
    {"events.num", "300"}, {"max-emit-speed", "true"}, {"events.base-time", "1600000000000"}};

json options_json(std::map<std::string, std::string> extra = {}) {
  json j = json::object();
  for (const auto& [k, v] : kOptions) j[k] = v;
  for (const auto& [k, v] : extra) j[k] = v;
  return j;
}

Value ts(std::int64_t millis) { return Value(millis * 1000); }

// Event n's row through the slow, general path (Values), for comparison.
std::vector<Value> expected_row(const NexmarkEvent& e, bool channel_url) {
  Value person, auction, bid;
  switch (e.type) {
    case NexmarkEventType::kPerson: {
      const auto& p = e.person;
      person = ValueList{{p.id, std::string(p.name), std::string(p.email_address.view()),
                          std::string(p.credit_card.view()), std::string(p.city), std::string(p.state),
                          ts(p.date_time), p.extra.str()}};
      break;
    }
    case NexmarkEventType::kAuction: {
      const auto& a = e.auction;
      auction = ValueList{{a.id, std::string(a.item_name.view()), std::string(a.description.view()), a.initial_bid,
                           a.reserve, ts(a.date_time), ts(a.expires), a.seller, a.category, a.extra.str()}};
      break;
    }
    case NexmarkEventType::kBid: {
      const auto& b = e.bid;
      std::vector<Value> f = {b.auction, b.bidder, b.price};
      if (channel_url) {
        f.emplace_back(std::string(b.channel));
        f.emplace_back(std::string(b.url));
      }
      f.push_back(ts(b.date_time));
      f.emplace_back(b.extra.str());
      bid = ValueList{std::move(f)};
      break;
    }
  }
  return {static_cast<int>(e.type), person, auction, bid};
}

std::vector<std::string> expected_rows(std::size_t n, bool channel_url, const std::vector<std::size_t>& projected) {
  auto opts = channel_url ? kOptions : [] {
    auto o = kOptions;
    o["bid.channel-url"] = "false";
    return o;
  }();
  nexmark::NexmarkGenerator gen(nexmark::parse_nexmark_options(opts).generator);
  SchemaPtr table = nexmark_table_schema(channel_url);
  std::vector<RowField> fields;
  for (auto i : projected) fields.push_back(table->field(i));
  ColumnBatch batch(make_schema(fields));
  for (std::size_t i = 0; i < n; ++i) {
    auto row = expected_row(gen.event(static_cast<std::int64_t>(i)), channel_url);
    std::vector<Value> projected_row;
    for (auto c : projected) projected_row.push_back(row[c]);
    batch.append_row(projected_row);
  }
  return format_rows(batch);
}

// Captures every batch (clones) it receives, for event times.
struct Captured {
  std::mutex mu;
  std::vector<ColumnBatch> batches;
};
class CaptureSink final : public StreamOperator {
 public:
  explicit CaptureSink(std::shared_ptr<Captured> c) : c_(std::move(c)) {}
  void process_batch(int, BatchPtr b) override {
    std::lock_guard lock(c_->mu);
    c_->batches.push_back(column_batch_cast(*b));
  }
  void process_watermark(Watermark) override {}

 private:
  std::shared_ptr<Captured> c_;
};

std::vector<std::string> run_nexmark(json params, const std::string& name) {
  JobGraph g;
  g.add_node(registry_node("nx", "sql_nexmark_source", params));
  json schema = json::array();
  OperatorSpecContext ctx{"nx", params, {}};
  SqlConnectorParams p(ctx, "x", {"schema", "projected", "declared_schema"});
  SchemaPtr full = p.has("schema") ? p.schema() : nexmark_table_schema();
  std::vector<std::size_t> proj;
  if (params.contains("projected"))
    for (auto& i : params["projected"]) proj.push_back(i.get<std::size_t>());
  else
    for (std::size_t i = 0; i < full->size(); ++i) proj.push_back(i);
  for (auto i : proj) schema.push_back({{"name", full->name(i)}, {"type", full->type(i).to_string()}});
  g.add_node(registry_node("out", "sql_collect_sink", {{"name", name}, {"schema", schema}}));
  g.add_edge(forward("nx", "out"));
  execute(g);
  auto rows = SqlCollectResults::get(name)->changelog();
  SqlCollectResults::drop(name);
  return rows;
}

TEST(SqlNexmarkSource, RowsAreTheGeneratorsEventsAsNexmarksTable) {
  auto rows = run_nexmark(options_json(), "nx-all");
  ASSERT_EQ(rows.size(), 300u);
  EXPECT_EQ(rows, expected_rows(300, true, {0, 1, 2, 3}));
  // Nexmark's proportions: per 50 events 1 person, 3 auctions, 46 bids.
  std::map<char, int> kinds;
  for (const auto& r : rows) ++kinds[r[3]];
  EXPECT_EQ(kinds, (std::map<char, int>{{'0', 6}, {'1', 18}, {'2', 276}}));
}

TEST(SqlNexmarkSource, ProjectionFillsOnlyTheProjectedColumns) {
  json params = options_json();
  params["projected"] = {3, 0};
  EXPECT_EQ(run_nexmark(params, "nx-proj"), expected_rows(300, true, {3, 0}));
}

TEST(SqlNexmarkSource, TheOlderBidRowWithoutChannelAndUrl) {
  json params = options_json();
  json schema = json::array();
  SchemaPtr old_shape = nexmark_table_schema(false);
  for (const auto& f : old_shape->fields())
    schema.push_back({{"name", f.name}, {"type", f.type.to_string()}});
  params["schema"] = schema;
  EXPECT_EQ(run_nexmark(params, "nx-old"), expected_rows(300, false, {0, 1, 2, 3}));
}

std::string make_error(json params);

// Nested projection push-down: ROWs narrowed to some fields (here the fields q7 reads of
// a bid, which are also the older bid shape's) hold exactly the full events' values of
// those fields; the generator stops each event's draws after the last field read.
TEST(SqlNexmarkSource, NarrowedRowsHoldTheFullEventsValuesOfTheirFields) {
  const std::vector<std::pair<std::string, std::string>> narrowed = {
      {"event_type", "INT"},
      {"person", "ROW<`name` STRING, `city` STRING>"},
      {"auction", "ROW<`seller` BIGINT, `category` BIGINT>"},
      {"bid", "ROW<`auction` BIGINT, `bidder` BIGINT, `price` BIGINT, `dateTime` TIMESTAMP(3), `extra` STRING>"}};
  json params = options_json();
  params["schema"] = schema_json(narrowed);
  json declared = json::array();
  const SchemaPtr full_shape = nexmark_table_schema(true), old_shape = nexmark_table_schema(false);
  for (const auto& f : full_shape->fields())
    declared.push_back({{"name", f.name}, {"type", f.type.to_string()}});
  params["declared_schema"] = declared;
  params["projected"] = {2, 1, 3};
  // Expected: the full events' rows, each ROW cut to the same fields.
  nexmark::NexmarkGenerator gen(nexmark::parse_nexmark_options(kOptions).generator);
  std::vector<RowField> fields;
  for (std::size_t c : {2u, 1u, 3u}) fields.push_back({narrowed[c].first, parse_logical_type(narrowed[c].second)});
  ColumnBatch batch(make_schema(fields));
  for (std::int64_t i = 0; i < 300; ++i) {
    auto row = expected_row(gen.event(i), true);
    auto pick = [](const Value& v, std::vector<std::size_t> at) {
      if (v.is_null()) return Value();
      std::vector<Value> out;
      for (std::size_t f : at) out.push_back(v.as_list().items[f]);
      return Value(ValueList{std::move(out)});
    };
    batch.append_row({pick(row[2], {7, 8}), pick(row[1], {1, 4}), pick(row[3], {0, 1, 2, 5, 6})});
  }
  EXPECT_EQ(run_nexmark(params, "nx-narrowed"), format_rows(batch));

  // The older bid shape is never narrowed (its narrowed form would not say which bids).
  json old_declared = json::array();
  for (const auto& f : old_shape->fields())
    old_declared.push_back({{"name", f.name}, {"type", f.type.to_string()}});
  params["declared_schema"] = old_declared;
  EXPECT_THAT(make_error(params), HasSubstr("or its ROWs narrowed to some of their fields"));
  params["declared_schema"] = declared;
  params["schema"][3]["type"] = "ROW<`price` BIGINT, `auction` BIGINT>";  // out of order
  EXPECT_THAT(make_error(params), HasSubstr("the nexmark source reads"));
}

TEST(SqlNexmarkSource, EachRowsEventTimeIsItsDateTime) {
  auto captured = std::make_shared<Captured>();
  JobGraph g;
  json params = options_json();
  params["projected"] = {0};
  g.add_node(registry_node("nx", "sql_nexmark_source", params));
  JobNode sink;
  sink.id = sink.name = sink.uid = "cap";
  sink.factory = "test_capture";
  sink.out_type = kSqlRowType;
  sink.build = [captured] { return std::make_unique<CaptureSink>(captured); };
  g.add_node(sink);
  g.add_edge(forward("nx", "cap"));
  execute(g);
  nexmark::NexmarkGenerator gen(nexmark::parse_nexmark_options(kOptions).generator);
  std::int64_t n = 0;
  for (const auto& b : captured->batches)
    for (std::size_t r = 0; r < b.size(); ++r, ++n) ASSERT_EQ(b.event_times()[r], gen.event(n).date_time()) << n;
  EXPECT_EQ(n, 300);
}

std::string make_error(json params) {
  try {
    registry_node("op", "sql_nexmark_source", params);
  } catch (const ClinkError& e) {
    return e.what();
  }
  return "no error";
}

TEST(SqlNexmarkSource, SchemaAndOptionErrors) {
  EXPECT_THAT(make_error({{"schema", schema_json({{"event_type", "INT"}})}}),
              HasSubstr("op 'op' (sql_nexmark_source): the nexmark table's schema must be (`event_type` INT, `person` "
                        "ROW<`id` BIGINT"));
  EXPECT_THAT(make_error({{"events.num", "ten"}}), HasSubstr("op 'op' (sql_nexmark_source): "));
  EXPECT_THAT(make_error({{"events.num", "ten"}}), HasSubstr("events.num"));
  EXPECT_THAT(make_error({{"evnts.num", "10"}}), HasSubstr("evnts.num"));
}

class SqlNexmarkRestore : public BackendTest {};

// nexmark (paced) -> failing pass-through -> json sink: every event's row exactly once.
TEST_P(SqlNexmarkRestore, ExactlyOnceAcrossAFailure) {
  TempDir dir;
  const int n = 6000;
  json params = {{"events.num", std::to_string(n)}, {"tps", "12000"}, {"events.base-time", "1600000000000"},
                 {"projected", {0, 3}}};
  json out_schema = json::array();
  for (auto i : {0, 3})
    out_schema.push_back({{"name", nexmark_table_schema()->name(static_cast<std::size_t>(i))},
                          {"type", nexmark_table_schema()->type(static_cast<std::size_t>(i)).to_string()}});
  auto fail = std::make_shared<FailOnce>();
  fail->fail_at = 1500;
  JobGraph g;
  g.add_node(registry_node("nx", "sql_nexmark_source", params, 2));
  g.add_node(failing_node("pass", fail, 2));
  g.add_node(registry_node("sink", "sql_filesystem_sink",
                           {{"path", (dir.path / "out").string()}, {"format", "json"}, {"schema", out_schema}}, 2));
  g.add_edge(forward("nx", "pass"));
  g.add_edge(forward("pass", "sink"));
  auto handle = execute_async(g, checkpointing(dir.path / "ckpt", 30));
  handle.wait();
  ASSERT_EQ(handle.restart_causes().size(), 1u);
  // Expected: the generator's rows through the json encoder.
  SchemaPtr schema = make_schema({nexmark_table_schema()->field(0), nexmark_table_schema()->field(3)});
  ColumnBatch batch(schema);
  std::map<std::string, std::string> opts = {
      {"events.num", std::to_string(n)}, {"tps", "12000"}, {"events.base-time", "1600000000000"}};
  nexmark::NexmarkGenerator g2(nexmark::parse_nexmark_options(opts).generator);
  for (int i = 0; i < n; ++i) {
    auto row = expected_row(g2.event(i), true);
    batch.append_row({row[0], row[3]});
  }
  JsonRowEncoder enc(schema, {});
  std::vector<std::string> expected;
  for (std::size_t r = 0; r < batch.size(); ++r) {
    std::string line;
    enc.encode(batch, r, line);
    expected.push_back(line);
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(committed_lines(dir.path / "out"), expected);
}

INSTANTIATE_TEST_SUITE_P(Backends, SqlNexmarkRestore, ::testing::Values("memory", "rocksdb"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace clink::test
