// sql_datagen_source (Flink's datagen options), sql_print_sink (Flink's print format and
// prefixes), sql_collect_sink (retract and upsert materialisation), sql_blackhole_sink.
#include <chrono>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "clink/connectors/sql/sql_sinks.hpp"
#include "clink/core/error.hpp"
#include "clink/runtime/executor.hpp"
#include "clink/sql/common/temporal.hpp"
#include "sql_job_support.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// datagen(params) at `p` -> collect(name) at 1; returns the collected rows.
std::vector<std::string> run_datagen(const std::string& name, json params, int p = 1) {
  JobGraph g;
  g.add_node(registry_node("gen", "sql_datagen_source", params, p));
  g.add_node(registry_node("out", "sql_collect_sink", {{"name", name}, {"schema", params["schema"]}}));
  g.add_edge(rebalance("gen", "out"));
  execute(g);
  auto rows = SqlCollectResults::get(name)->changelog();
  SqlCollectResults::drop(name);
  return rows;
}

TEST(SqlDatagen, SequenceFieldsBoundTheRowsAndRunInOrder) {
  json schema = schema_json({{"id", "INT"}, {"s", "STRING"}, {"d", "DECIMAL(6, 2)"}});
  auto rows = run_datagen("dg-seq", {{"schema", schema}, {"rows-per-second", "0"}, {"fields.id.kind", "sequence"},
                                     {"fields.id.start", "5"}, {"fields.id.end", "8"}, {"fields.s.kind", "sequence"},
                                     {"fields.s.start", "100"}, {"fields.s.end", "200"}, {"fields.d.kind", "sequence"},
                                     {"fields.d.start", "1"}, {"fields.d.end", "9"}});
  EXPECT_THAT(rows, ElementsAre("+I[5, 100, 1.00]", "+I[6, 101, 2.00]", "+I[7, 102, 3.00]", "+I[8, 103, 4.00]"));
}

TEST(SqlDatagen, ASequenceIsSplitOverSubtasks) {
  json schema = schema_json({{"id", "BIGINT"}});
  auto rows = run_datagen("dg-par", {{"schema", schema}, {"rows-per-second", "0"}, {"fields.id.kind", "sequence"},
                                     {"fields.id.start", "1"}, {"fields.id.end", "1000"}},
                          3);
  std::set<std::string> distinct(rows.begin(), rows.end());
  EXPECT_EQ(rows.size(), 1000u);
  EXPECT_EQ(distinct.size(), 1000u);
  EXPECT_TRUE(distinct.count("+I[1]") && distinct.count("+I[1000]"));
}

TEST(SqlDatagen, RandomValuesRespectMinMaxLengthAndNullRate) {
  json schema = schema_json({{"i", "INT"}, {"d", "DOUBLE"}, {"s", "STRING"}, {"v", "VARCHAR(10)"}, {"n", "BIGINT"},
                             {"half", "BIGINT"}, {"dec", "DECIMAL(5, 2)"}, {"b", "BOOLEAN"}});
  json p = {{"schema", schema},          {"rows-per-second", "0"},       {"number-of-rows", "200"},
            {"fields.i.min", "-3"},      {"fields.i.max", "3"},          {"fields.d.min", "0.5"},
            {"fields.d.max", "1.5"},     {"fields.s.length", "6"},       {"fields.v.var-len", "true"},
            {"fields.n.null-rate", "1"}, {"fields.half.null-rate", "0.5"}, {"fields.dec.min", "-1.50"},
            {"fields.dec.max", "1.50"}};
  JobGraph g;
  g.add_node(registry_node("gen", "sql_datagen_source", p));
  g.add_node(registry_node("out", "sql_collect_sink", {{"name", "dg-rand"}, {"schema", schema}}));
  g.add_edge(forward("gen", "out"));
  execute(g);
  auto results = SqlCollectResults::get("dg-rand");
  std::vector<std::string> first = results->changelog();
  ASSERT_EQ(first.size(), 200u);
  // Check the values through a batch of the same rows: run again into a second name.
  int half_nulls = 0;
  std::set<std::int64_t> ints;
  for (const auto& line : first) {
    // "+I[i, d, s, v, n, half, dec, b]"
    std::vector<std::string> f;
    std::string body = line.substr(3, line.size() - 4);
    for (std::size_t pos = 0;;) {
      auto comma = body.find(", ", pos);
      f.push_back(body.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
      if (comma == std::string::npos) break;
      pos = comma + 2;
    }
    ASSERT_EQ(f.size(), 8u) << line;
    std::int64_t i = std::stoll(f[0]);
    EXPECT_TRUE(i >= -3 && i <= 3) << line;
    ints.insert(i);
    double d = std::stod(f[1]);
    EXPECT_TRUE(d >= 0.5 && d <= 1.5) << line;
    EXPECT_EQ(f[2].size(), 6u) << line;
    EXPECT_EQ(f[2].find_first_not_of("0123456789abcdef"), std::string::npos) << line;
    EXPECT_TRUE(f[3].size() >= 1 && f[3].size() <= 10) << line;
    EXPECT_EQ(f[4], "null") << line;
    half_nulls += f[5] == "null";
    double dec = std::stod(f[6]);
    EXPECT_TRUE(dec >= -1.5 && dec <= 1.5 && f[6].size() - f[6].find('.') == 3) << line;
    EXPECT_TRUE(f[7] == "true" || f[7] == "false") << line;
  }
  EXPECT_EQ(ints.size(), 7u);  // 200 draws cover -3..3
  EXPECT_GT(half_nulls, 60);
  EXPECT_LT(half_nulls, 140);
  SqlCollectResults::drop("dg-rand");
  // A row's values depend only on the row: a second run gives the same rows.
  EXPECT_EQ(run_datagen("dg-rand2", p), first);
}

TEST(SqlDatagen, DefaultRangesAreTheTypesWithoutOverflow) {
  json schema = schema_json({{"l", "BIGINT"}, {"d", "DOUBLE"}, {"dec", "DECIMAL(38, 0)"}, {"t", "TINYINT"}});
  auto rows = run_datagen("dg-range", {{"schema", schema}, {"rows-per-second", "0"}, {"number-of-rows", "100"},
                                       {"fields.t.min", "-1000"}, {"fields.t.max", "1e9"}});
  ASSERT_EQ(rows.size(), 100u);
  int negative = 0, positive = 0;
  for (const auto& r : rows) {
    EXPECT_EQ(r.find("Infinity"), std::string::npos) << r;
    EXPECT_EQ(r.find("NaN"), std::string::npos) << r;
    auto first = r.substr(3, r.find(',') - 3);
    (first[0] == '-' ? negative : positive)++;
    auto dec = r.substr(r.find(", ", r.find(", ") + 2) + 2);
    dec = dec.substr(0, dec.find(','));
    EXPECT_LE(dec.size() - (dec[0] == '-'), 38u) << r;
  }
  EXPECT_GT(negative, 20);  // the full BIGINT range, both signs
  EXPECT_GT(positive, 20);
}

TEST(SqlDatagen, TimestampsWithinMaxPast) {
  json schema = schema_json({{"ts", "TIMESTAMP(3)"}});
  auto before = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  JobGraph g;
  g.add_node(registry_node("gen", "sql_datagen_source",
                           {{"schema", schema}, {"number-of-rows", "50"}, {"rows-per-second", "0"}, {"fields.ts.max-past", "60000"}}));
  g.add_node(registry_node("out", "sql_collect_sink", {{"name", "dg-ts"}, {"schema", schema}}));
  g.add_edge(forward("gen", "out"));
  execute(g);
  auto after = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  auto lines = SqlCollectResults::get("dg-ts")->changelog();
  ASSERT_EQ(lines.size(), 50u);
  for (const auto& l : lines) {
    auto micros = parse_timestamp(l.substr(3, l.size() - 4));
    ASSERT_TRUE(micros) << l;
    EXPECT_GE(*micros / 1000, before - 60000) << l;
    EXPECT_LE(*micros / 1000, after) << l;
  }
  SqlCollectResults::drop("dg-ts");
}

std::string make_error(const std::string& factory, json params) {
  try {
    registry_node("op", factory, params);
  } catch (const ClinkError& e) {
    return e.what();
  }
  return "no error";
}

TEST(SqlDatagen, OptionErrors) {
  json s = schema_json({{"id", "INT"}, {"ts", "TIMESTAMP(3)"}});
  EXPECT_EQ(make_error("sql_datagen_source", {{"schema", s}, {"fields.id.kind", "seq"}}),
            "op 'op' (sql_datagen_source): option 'fields.id.kind' must be random or sequence, got 'seq'");
  EXPECT_EQ(make_error("sql_datagen_source", {{"schema", s}, {"fields.id.kind", "sequence"}, {"fields.id.start", "1"}}),
            "op 'op' (sql_datagen_source): options 'fields.id.start' and 'fields.id.end' are required for a sequence");
  EXPECT_EQ(make_error("sql_datagen_source", {{"schema", s}, {"fields.nope.kind", "random"}}),
            "op 'op' (sql_datagen_source): option 'fields.nope.kind' names no field of (`id` INT, `ts` TIMESTAMP(3))");
  EXPECT_EQ(make_error("sql_datagen_source", {{"schema", s}, {"fields.id.colour", "red"}}),
            "op 'op' (sql_datagen_source): unknown option 'fields.id.colour' = 'red' (known: rows-per-second, "
            "number-of-rows)");
  EXPECT_EQ(make_error("sql_datagen_source", {{"schema", s}, {"rows-per-second", "fast"}}),
            "op 'op' (sql_datagen_source): option 'rows-per-second' must be a number, got 'fast'");
  EXPECT_EQ(make_error("sql_datagen_source", {{"schema", s}, {"fields.id.min", "5"}, {"fields.id.max", "1"}}),
            "op 'op' (sql_datagen_source): option 'fields.id.min' = '5' is above 'fields.id.max' = '1'");
  EXPECT_EQ(make_error("sql_datagen_source", {{"schema", s}, {"fields.ts.kind", "sequence"}, {"fields.ts.start", "1"},
                                              {"fields.ts.end", "2"}}),
            "op 'op' (sql_datagen_source): option 'fields.ts.kind': a sequence cannot generate TIMESTAMP(3)");
  EXPECT_EQ(make_error("sql_datagen_source", {{"schema", s}, {"fields.id.null-rate", "2"}}),
            "op 'op' (sql_datagen_source): option 'fields.id.null-rate' must be between 0.000000 and 1.000000, got '2'");
}

ColumnBatch changelog(std::vector<std::pair<RowKind, std::vector<Value>>> rows) {
  ColumnBatch b(schema_of({{"k", "INT"}, {"v", "STRING"}}));
  for (auto& [kind, r] : rows) b.append_row(r, kind);
  return b;
}

std::shared_ptr<SqlCollectResults> collect_changelog(const std::string& name, json params, ColumnBatch batch) {
  params["name"] = name;
  params["schema"] = schema_json({{"k", "INT"}, {"v", "STRING"}});
  JobGraph g;
  g.add_node(batches_node("src", {std::move(batch)}));
  g.add_node(registry_node("out", "sql_collect_sink", params));
  g.add_edge(forward("src", "out"));
  execute(g);
  return SqlCollectResults::get(name);
}

TEST(SqlCollectSink, RetractModeKeepsTheChangelogAndMaterialisesAMultiset) {
  auto r = collect_changelog("c-retract", {{"mode", "retract"}},
                             changelog({{RowKind::kInsert, {1, "a"}}, {RowKind::kInsert, {2, "b"}},
                                        {RowKind::kUpdateBefore, {1, "a"}}, {RowKind::kUpdateAfter, {1, "c"}},
                                        {RowKind::kInsert, {2, "b"}}, {RowKind::kDelete, {2, "b"}}}));
  EXPECT_THAT(r->changelog(), ElementsAre("+I[1, a]", "+I[2, b]", "-U[1, a]", "+U[1, c]", "+I[2, b]", "-D[2, b]"));
  EXPECT_THAT(r->rows(), ElementsAre("+I[1, c]", "+I[2, b]"));  // -D took the earlier equal row
  SqlCollectResults::drop("c-retract");
}

TEST(SqlCollectSink, UpsertModeMaterialisesByPrimaryKey) {
  auto r = collect_changelog("c-upsert", {{"mode", "upsert"}, {"primary_key", {0}}},
                             changelog({{RowKind::kInsert, {1, "a"}}, {RowKind::kInsert, {2, "b"}},
                                        {RowKind::kUpdateAfter, {1, "c"}}, {RowKind::kInsert, {Value::null(), "n"}},
                                        {RowKind::kDelete, {2, "x"}}, {RowKind::kUpdateBefore, {1, "c"}}}));
  EXPECT_THAT(r->rows(), ElementsAre("+I[1, c]", "+I[null, n]"));
  SqlCollectResults::drop("c-upsert");
  EXPECT_EQ([] {
    try {
      registry_node("op", "sql_collect_sink", {{"name", "x"}, {"mode", "upsert"}, {"schema", schema_json({{"k", "INT"}})}});
    } catch (const ClinkError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  }(),
            "op 'op' (sql_collect_sink): mode upsert needs param 'primary_key'");
}

TEST(SqlPrintSink, PrefixesAsFlink) {
  EXPECT_EQ(SqlPrintSinkOperator::prefix("", 0, 1), "");
  EXPECT_EQ(SqlPrintSinkOperator::prefix("id", 0, 1), "id> ");
  EXPECT_EQ(SqlPrintSinkOperator::prefix("", 1, 2), "2> ");
  EXPECT_EQ(SqlPrintSinkOperator::prefix("id", 1, 2), "id:2> ");
}

// TIMESTAMP_LTZ prints as a java.time.Instant (UTC, Z) whatever the session zone, as Flink.
TEST(SqlPrintSink, PrintsRowsWithTheirKindAndInstantsInUtc) {
  ColumnBatch b(schema_of({{"k", "INT"}, {"t", "TIMESTAMP_LTZ(3)"}}));
  b.append_row({1, std::int64_t{1586937900000000}}, RowKind::kInsert);
  b.append_row({Value::null(), Value::null()}, RowKind::kUpdateBefore);
  JobGraph g;
  g.add_node(batches_node("src", {b}));
  g.add_node(registry_node("out", "sql_print_sink",
                           {{"schema", schema_json({{"k", "INT"}, {"t", "TIMESTAMP_LTZ(3)"}})},
                            {"print-identifier", "res"},
                            {"session", {{"table.local-time-zone", "Europe/Berlin"}}}}));
  g.add_edge(forward("src", "out"));
  ::testing::internal::CaptureStdout();
  execute(g);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "res> +I[1, 2020-04-15T08:05:00Z]\nres> -U[null, null]\n");
}

TEST(SqlBlackholeSink, TakesEveryRowKind) {
  JobGraph g;
  g.add_node(batches_node("src", {changelog({{RowKind::kDelete, {1, "a"}}})}));
  g.add_node(registry_node("out", "sql_blackhole_sink", {{"schema", schema_json({{"k", "INT"}, {"v", "STRING"}})}}));
  g.add_edge(forward("src", "out"));
  EXPECT_NO_THROW(execute(g));
  EXPECT_EQ(make_error("sql_blackhole_sink", {{"schema", schema_json({{"k", "INT"}})}, {"x", "1"}}),
            "op 'op' (sql_blackhole_sink): unknown option 'x' = '1' (known: )");
}

}  // namespace
}  // namespace clink::test
