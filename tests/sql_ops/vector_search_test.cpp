// sql_vector_search run directly (OpHarness) on a real filesystem vector table:
// corpus_refresh_ms reads the table again once its interval has passed (and only then),
// row kinds and event times follow their input rows; and the index itself: HNSW finds
// what the exact flat search finds on a small set, and both order ties by corpus row.
#include <chrono>
#include <fstream>
#include <random>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../support/temp_dir.hpp"
#include "clink/sql/ops/vector_index.hpp"
#include "clink/sql/spec/expr_json.hpp"
#include "sql_ops_test_support.hpp"

namespace clink::test {
namespace {

using ::testing::ElementsAre;
using sql::ValueList;
namespace ex = sql::expr;

const LogicalType kVector = LogicalType::array(LogicalType::double_type());

SchemaPtr queries() { return sql::make_schema({{"qid", LogicalType::int_type()}, {"q", kVector}}); }
SchemaPtr docs() { return sql::make_schema({{"id", LogicalType::int_type()}, {"emb", kVector}}); }

void write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::trunc);
  out << text;
}

json params(const std::filesystem::path& table, const std::string& refresh_ms) {
  const SchemaPtr table_schema = docs();  // held: fields() is a reference into it
  std::vector<sql::RowField> fields = queries()->fields();
  for (const auto& f : table_schema->fields()) fields.push_back(f);
  fields.push_back({"score", LogicalType::double_type()});
  json options = json::object();
  if (!refresh_ms.empty()) options["corpus_refresh_ms"] = refresh_ms;
  return {{"input_schemas", json::array({schema_json(queries())})},
          {"schema", schema_json(sql::make_schema(fields))},
          {"query", sql::expr_to_json(*ex::column(1, kVector, "q"))},
          {"top_k", 1},
          {"metric", "l2"},
          {"index_column", 1},
          {"options", options},
          {"table", "docs"},
          {"source_factory", "sql_filesystem_source"},
          {"source", {{"path", table.string()}, {"format", "json"}, {"schema", schema_json(docs())}}}};
}

Value vec(double a, double b) { return Value(ValueList{{Value(a), Value(b)}}); }

TEST(SqlVectorSearch, CorpusRefreshReadsTheTableAgainAfterItsInterval) {
  TempDir dir("clink-vector-search");
  const auto table = dir.path / "docs.json";
  write(table, "{\"id\": 1, \"emb\": [1.0, 0.0]}\n{\"id\": 2, \"emb\": [0.0, 1.0]}\n");
  OpHarness refreshing("sql_vector_search", params(table, "100"));
  OpHarness fixed("sql_vector_search", params(table, ""));
  auto query = [] { return batch(queries(), {Row{{1, vec(1.0, 0.1)}, RowKind::kInsert, 7}}); };
  refreshing.push(query());
  fixed.push(query());
  // The table changes: a new nearest row.
  write(table, "{\"id\": 3, \"emb\": [1.0, 0.1]}\n{\"id\": 2, \"emb\": [0.0, 1.0]}\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  refreshing.push(query());
  fixed.push(query());
  EXPECT_THAT(refreshing.lines, ElementsAre("+I[1, [1.0, 0.1], 1, [1.0, 0.0], 0.1]", "+I[1, [1.0, 0.1], 3, [1.0, 0.1], 0.0]"));
  EXPECT_THAT(fixed.lines, ElementsAre("+I[1, [1.0, 0.1], 1, [1.0, 0.0], 0.1]", "+I[1, [1.0, 0.1], 1, [1.0, 0.0], 0.1]"));
  EXPECT_THAT(refreshing.times, ElementsAre(7, 7));
}

TEST(SqlVectorSearch, RowKindsFollowTheirInputRows) {
  TempDir dir("clink-vector-search");
  const auto table = dir.path / "docs.json";
  write(table, "{\"id\": 1, \"emb\": [1.0, 0.0]}\n");
  OpHarness h("sql_vector_search", params(table, ""));
  h.push(batch(queries(), {Row{{1, vec(1.0, 0.0)}, RowKind::kUpdateBefore, 3}, Row{{2, Value()}, RowKind::kInsert, 4},
                           Row{{3, vec(0.0, 0.0)}, RowKind::kDelete, 5}}));
  EXPECT_THAT(h.lines, ElementsAre("-U[1, [1.0, 0.0], 1, [1.0, 0.0], 0.0]", "-D[3, [0.0, 0.0], 1, [1.0, 0.0], 1.0]"));
  EXPECT_THAT(h.times, ElementsAre(3, 5));
}

// 500 random 16-d vectors, 50 queries: HNSW with a generous ef_search equals flat (rows
// and scores), for each metric.
TEST(VectorIndex, HnswOnASmallSetEqualsFlat) {
  std::mt19937 rng(7);
  std::normal_distribution<double> g;
  sql::VectorCorpus corpus;
  corpus.dim = 16;
  for (std::uint32_t r = 0; r < 500; ++r) {
    for (int d = 0; d < 16; ++d) corpus.values.push_back(g(rng));
    corpus.rows.push_back(r);
  }
  std::vector<double> qs;
  for (int i = 0; i < 50 * 16; ++i) qs.push_back(g(rng));
  for (auto metric : {sql::VectorMetric::kCosine, sql::VectorMetric::kL2, sql::VectorMetric::kDot}) {
    auto flat = sql::make_vector_index(corpus, metric, {});
    sql::VectorIndexOptions o;
    o.hnsw = true;
    o.ef_search = 500;
    auto hnsw = sql::make_vector_index(corpus, metric, o);
    std::vector<sql::VectorHit> a, b;
    for (int i = 0; i < 50; ++i) {
      flat->search(&qs[i * 16], 10, a);
      hnsw->search(&qs[i * 16], 10, b);
      ASSERT_EQ(a.size(), 10u);
      ASSERT_EQ(a.size(), b.size());
      for (std::size_t k = 0; k < a.size(); ++k) {
        EXPECT_EQ(a[k].row, b[k].row) << "metric " << static_cast<int>(metric) << " query " << i << " rank " << k;
        EXPECT_EQ(a[k].score, b[k].score);
      }
    }
  }
}

TEST(VectorIndex, TiesKeepCorpusRowOrder) {
  sql::VectorCorpus corpus;
  corpus.dim = 2;
  corpus.values = {2, 0, 1, 0, 3, 0, 0, 1};  // rows 10, 11, 12, 13: three of one direction
  corpus.rows = {10, 11, 12, 13};
  auto flat = sql::make_vector_index(corpus, sql::VectorMetric::kCosine, {});
  std::vector<sql::VectorHit> hits;
  const double q[2] = {5, 0};
  flat->search(q, 3, hits);
  ASSERT_EQ(hits.size(), 3u);
  EXPECT_EQ(hits[0].row, 10u);
  EXPECT_EQ(hits[1].row, 11u);
  EXPECT_EQ(hits[2].row, 12u);
  EXPECT_EQ(hits[0].score, 1.0);
}

}  // namespace
}  // namespace clink::test
