// Lookup joins against a real PostgreSQL table: `FROM orders o [LEFT] JOIN dim FOR
// SYSTEM_TIME AS OF o.proc_time AS d ON ...` planned by the real planner, the dimension
// rows fetched by the jdbc connector's lookup source, the exact joined rows checked. Also
// the seed's `'connector' = 'lookup'` table, served by a function the process registers.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "clink/connectors/sql/lookup_source.hpp"
#include "lookup_join_env.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

// A dimension table `name` (id INT PRIMARY KEY, name TEXT, price NUMERIC(10,2), active
// BOOLEAN) holding ids 1..3.
std::string make_dim(const std::string& base) {
  const std::string t = unique_pg_table(base);
  pg_exec("CREATE TABLE " + t + " (id INT PRIMARY KEY, name TEXT, price NUMERIC(10,2), active BOOLEAN);"
          "INSERT INTO " + t + " VALUES (1, 'apple', 1.50, true), (2, 'pear', 2.25, false), (3, 'fig', 0.75, true)");
  return t;
}

std::string dim_ddl(const std::string& table, const std::string& extra = "") {
  return "CREATE TABLE dim (id INT, name STRING, price DECIMAL(10, 2), active BOOLEAN) WITH ('connector' = 'jdbc', "
         "'url' = '${URL}', 'table-name' = '" + table + "'" + extra + ");\n";
}

std::string collect_ddl(const std::string& columns) {
  return "CREATE TABLE out (" + columns + ") WITH ('connector' = 'collect', 'name' = '${COLLECT}');\n";
}

const std::vector<BatchStep> kOrders = {orders_step({{1, 1}, {2, 2}, {3, 9}, {4, -1}}), orders_step({{5, 3}, {6, 1}})};

TEST(LookupJoin, InnerJoinEmitsTheMatchingRowsOnly) {
  const std::string t = make_dim("lookup_inner");
  auto rows = run_lookup_job("lookup-inner",
                             orders_ddl() + dim_ddl(t) + collect_ddl("id BIGINT, k INT, name STRING, price DECIMAL(10, 2)") +
                                 "INSERT INTO out SELECT o.id, o.k, d.name, d.price FROM orders AS o JOIN dim FOR "
                                 "SYSTEM_TIME AS OF o.proc_time AS d ON o.k = d.id;",
                             kOrders);
  EXPECT_EQ(rows, (std::vector<std::string>{"+I[1, 1, apple, 1.50]", "+I[2, 2, pear, 2.25]", "+I[5, 3, fig, 0.75]",
                                            "+I[6, 1, apple, 1.50]"}));
}

TEST(LookupJoin, LeftJoinPadsMissingAndNullKeysWithNulls) {
  const std::string t = make_dim("lookup_left");
  auto rows = run_lookup_job("lookup-left",
                             orders_ddl() + dim_ddl(t) + collect_ddl("id BIGINT, k INT, name STRING, active BOOLEAN") +
                                 "INSERT INTO out SELECT o.id, o.k, d.name, d.active FROM orders AS o LEFT JOIN dim FOR "
                                 "SYSTEM_TIME AS OF o.proc_time AS d ON o.k = d.id;",
                             kOrders);
  EXPECT_EQ(rows, (std::vector<std::string>{"+I[1, 1, apple, true]", "+I[2, 2, pear, false]", "+I[3, 9, null, null]",
                                            "+I[4, null, null, null]", "+I[5, 3, fig, true]", "+I[6, 1, apple, true]"}));
}

// The ON condition beyond the key: a condition on the table's columns (Flink's calc on
// the temporal table) and one over both sides (the join condition); LEFT pads the rows
// whose matches they reject. A WHERE on the probe side goes below the join.
TEST(LookupJoin, OnWithNonEquiConditionsFiltersMatches) {
  const std::string t = make_dim("lookup_non_equi");
  const std::string sql = orders_ddl() + dim_ddl(t) + collect_ddl("id BIGINT, name STRING") +
                          "INSERT INTO out SELECT o.id, d.name FROM orders AS o LEFT JOIN dim FOR SYSTEM_TIME AS OF "
                          "o.proc_time AS d ON o.k = d.id AND d.active AND o.id < d.price * 4 WHERE o.id <> 6;";
  auto rows = run_lookup_job("lookup-non-equi", sql, kOrders);
  // 1: apple, active, 1 < 6; 2: pear inactive; 5: fig active but 5 >= 3.
  EXPECT_EQ(rows, (std::vector<std::string>{"+I[1, apple]", "+I[2, null]", "+I[3, null]", "+I[4, null]", "+I[5, null]"}));
  // INNER: the same conditions drop those rows.
  auto inner = run_lookup_job("lookup-non-equi-inner",
                              orders_ddl() + dim_ddl(t) + collect_ddl("id BIGINT, name STRING") +
                                  "INSERT INTO out SELECT o.id, d.name FROM orders AS o JOIN dim FOR SYSTEM_TIME AS OF "
                                  "o.proc_time AS d ON o.k = d.id AND o.id < d.price * 4 WHERE d.active;",
                              kOrders);
  // 6: apple, but 6 >= 1.50 * 4.
  EXPECT_EQ(inner, (std::vector<std::string>{"+I[1, apple]"}));
}

// Two key columns (one lookup query per batch joins the table to the keys' arrays), a
// constant key, and a key that matches several rows.
TEST(LookupJoin, CompositeAndConstantKeysAndSeveralMatches) {
  const std::string t = unique_pg_table("lookup_composite");
  pg_exec("CREATE TABLE " + t + " (region TEXT, id INT, tier INT, label TEXT);"
          "INSERT INTO " + t + " VALUES ('eu', 1, 1, 'eu-1a'), ('eu', 1, 2, 'eu-1b'), ('us', 1, 1, 'us-1'),"
          "('eu', 2, 1, 'eu-2'), ('us', 3, 1, 'us-3')");
  const std::string dim = "CREATE TABLE regions (region STRING, id INT, tier INT, label STRING) WITH ('connector' = "
                          "'jdbc', 'url' = '${URL}', 'table-name' = '" + t + "');\n";
  auto both = run_lookup_job("lookup-composite",
                             orders_ddl() + dim + collect_ddl("id BIGINT, label STRING") +
                                 "INSERT INTO out SELECT o.id, r.label FROM orders AS o JOIN regions FOR SYSTEM_TIME AS OF "
                                 "o.proc_time AS r ON r.region = 'eu' AND o.k = r.id;",
                             kOrders);
  EXPECT_EQ(both, (std::vector<std::string>{"+I[1, eu-1a]", "+I[1, eu-1b]", "+I[2, eu-2]", "+I[6, eu-1a]", "+I[6, eu-1b]"}));
  auto two = run_lookup_job("lookup-composite-two",
                            orders_ddl() + dim + collect_ddl("id BIGINT, label STRING") +
                                "INSERT INTO out SELECT o.id, r.label FROM orders AS o JOIN regions FOR SYSTEM_TIME AS OF "
                                "o.proc_time AS r ON o.k = r.id AND o.k = r.tier;",
                            kOrders);
  EXPECT_EQ(two, (std::vector<std::string>{"+I[1, eu-1a]", "+I[1, us-1]", "+I[6, eu-1a]", "+I[6, us-1]"}));
}

// Many rows over few keys: the partial cache answers most; with and without it (and at
// a buffer capacity smaller than a batch) the rows are the same.
TEST(LookupJoin, CacheEnabledAndDisabledGiveTheSameRows) {
  const std::string t = make_dim("lookup_cache_same");
  std::vector<BatchStep> steps;
  std::vector<std::string> expected;
  const char* names[] = {"apple", "pear", "fig"};
  for (int s = 0; s < 5; ++s) {
    std::vector<std::pair<std::int64_t, int>> rows;
    for (int i = 0; i < 40; ++i) {
      const std::int64_t id = s * 40 + i;
      const int k = static_cast<int>(id % 5);  // 0 and 4 are not in the table
      rows.push_back({id, k});
      if (k >= 1 && k <= 3) expected.push_back(fmt::format("+I[{}, {}]", id, names[k - 1]));
    }
    steps.push_back(orders_step(rows));
  }
  std::sort(expected.begin(), expected.end());
  const std::string query = "INSERT INTO out SELECT o.id, d.name FROM orders AS o JOIN dim FOR SYSTEM_TIME AS OF "
                            "o.proc_time AS d ON o.k = d.id;";
  auto uncached = run_lookup_job("lookup-uncached", orders_ddl() + dim_ddl(t) + collect_ddl("id BIGINT, name STRING") + query, steps);
  auto cached = run_lookup_job("lookup-cached",
                               orders_ddl() +
                                   dim_ddl(t, ", 'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '100'") +
                                   collect_ddl("id BIGINT, name STRING") + query,
                               steps);
  auto small_buffer = run_lookup_job(
      "lookup-small-buffer",
      orders_ddl() + dim_ddl(t, ", 'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.expire-after-write' = '1 min'") +
          collect_ddl("id BIGINT, name STRING") + query,
      steps, {{"table.exec.async-lookup.buffer-capacity", "3"}});
  EXPECT_EQ(uncached, expected);
  EXPECT_EQ(cached, expected);
  EXPECT_EQ(small_buffer, expected);
}

// Without a cache each row joins the table as it is when the row is looked up: an update
// between two rows of the same key shows in the second (Flink's lookup join semantics).
TEST(LookupJoin, ARowJoinsTheVersionVisibleAtLookupTime) {
  const std::string t = make_dim("lookup_versions");
  LookupJob job("lookup-versions",
                orders_ddl() + dim_ddl(t) + collect_ddl("id BIGINT, name STRING") +
                    "INSERT INTO out SELECT o.id, d.name FROM orders AS o LEFT JOIN dim FOR SYSTEM_TIME AS OF "
                    "o.proc_time AS d ON o.k = d.id;",
                {orders_step({{1, 1}, {2, 4}}), orders_step({{3, 1}, {4, 4}}), orders_step({{5, 1}})}, 1);
  EXPECT_EQ(job.rows(2), (std::vector<std::string>{"+I[1, apple]", "+I[2, null]"}));
  pg_exec("UPDATE " + t + " SET name = 'green apple' WHERE id = 1; INSERT INTO " + t + " VALUES (4, 'kiwi', 3, true)");
  job.release(2);
  EXPECT_EQ(job.rows(4).size(), 4u);
  pg_exec("DELETE FROM " + t + " WHERE id = 1");
  JobHandle& h = job.finish();
  ASSERT_EQ(h.status(), JobStatus::kFinished) << h.error();
  EXPECT_EQ(job.rows_now(), (std::vector<std::string>{"+I[1, apple]", "+I[2, null]", "+I[3, green apple]", "+I[4, kiwi]",
                                                      "+I[5, null]"}));
}

// The seed's enrichment table: `'connector' = 'lookup'` looks up through the function the
// process registered under 'lookup_function' (here a fixed map; the same op and contract
// as a connector's source).
class SquareLookup final : public LookupSource {
 public:
  void lookup(const ColumnBatch& keys, ColumnBatch& out) override {
    for (std::size_t r = 0; r < keys.size(); ++r) {
      const std::int32_t k = keys.column(0).values<std::int32_t>()[r];
      if (k > 10) continue;  // not in the "table"
      out.column(0).append(k);
      out.column(1).append(static_cast<std::int64_t>(k) * k);
    }
    out.commit_rows(out.column(0).size() - out.size());
  }
};

TEST(LookupJoin, SeedLookupConnectorUsesTheRegisteredFunction) {
  register_lookup_function("squares", [](const LookupSourceContext& ctx) -> std::unique_ptr<LookupSource> {
    if (ctx.row_schema->size() != 2) throw ClinkError("squares has two columns");
    return std::make_unique<SquareLookup>();
  });
  auto rows = run_lookup_job("lookup-seed",
                             orders_ddl() +
                                 "CREATE TABLE squares (n INT, sq BIGINT) WITH ('connector' = 'lookup', "
                                 "'lookup_function' = 'squares');\n" +
                                 collect_ddl("id BIGINT, sq BIGINT") +
                                 "INSERT INTO out SELECT o.id, s.sq FROM orders AS o LEFT JOIN squares FOR SYSTEM_TIME AS "
                                 "OF o.proc_time AS s ON o.k = s.n;",
                             kOrders);
  EXPECT_EQ(rows, (std::vector<std::string>{"+I[1, 1]", "+I[2, 4]", "+I[3, 81]", "+I[4, null]", "+I[5, 9]", "+I[6, 1]"}));
  // An unknown function fails naming it.
  sql::Catalog catalog;
  sql::StatementRunner runner(catalog);
  runner.run(orders_ddl() + "CREATE TABLE nope (n INT) WITH ('connector' = 'lookup', 'lookup_function' = 'nope');\n"
             "CREATE TABLE out (id BIGINT) WITH ('connector' = 'blackhole');");
  auto spec = runner.run("INSERT INTO out SELECT o.id FROM orders AS o JOIN nope FOR SYSTEM_TIME AS OF o.proc_time AS "
                         "s ON o.k = s.n").back().spec;
  try {
    from_spec(spec, test_registry());
    FAIL() << "expected an error";
  } catch (const ClinkError& e) {
    EXPECT_NE(std::string(e.what()).find("no lookup function 'nope' is registered"), std::string::npos) << e.what();
  }
}

// Bad options of the table fail when the job is built, naming the option.
TEST(LookupJoin, BadLookupOptionsAreRejected) {
  sql::Catalog catalog;
  sql::StatementRunner runner(catalog);
  runner.run(orders_ddl() + "CREATE TABLE out (id BIGINT) WITH ('connector' = 'blackhole');");
  auto plan = [&](const std::string& options) {
    runner.run("DROP TABLE IF EXISTS dim");
    runner.run(std::regex_replace(dim_ddl("whatever", options), std::regex("\\$\\{URL\\}"), postgres_url()));
    auto spec = runner.run("INSERT INTO out SELECT o.id FROM orders AS o JOIN dim FOR SYSTEM_TIME AS OF o.proc_time "
                           "AS d ON o.k = d.id").back().spec;
    from_spec(spec, test_registry());
  };
  auto error = [&](const std::string& options) {
    try {
      plan(options);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error(", 'lookup.cache' = 'PARTIAL'").find("Missing 'lookup.partial-cache.expire-after-access'"),
            std::string::npos);
  EXPECT_NE(error(", 'lookup.cache' = 'SOMETIMES'").find("'lookup.cache' must be NONE or PARTIAL"), std::string::npos);
  EXPECT_NE(error(", 'lookup.max-retries' = '-1'").find("'lookup.max-retries'"), std::string::npos);
  EXPECT_NE(error(", 'lookup.partial-cache.max-rows' = 'many'").find("'lookup.partial-cache.max-rows'"),
            std::string::npos);
  EXPECT_NE(error(", 'lookup.partial-cache.expire-after-write' = 'soon'").find("is not a duration"), std::string::npos);
  EXPECT_NE(error(", 'lookup.partial-cache.cache-missing-key' = 'maybe'").find("must be true or false"),
            std::string::npos);
  EXPECT_NE(error(", 'lookup.cahce' = 'PARTIAL'").find("unknown option 'lookup.cahce'"), std::string::npos);
  EXPECT_EQ(error(", 'lookup.cache' = 'partial', 'lookup.partial-cache.max-rows' = '10'"), "no error");
}

}  // namespace
}  // namespace clink::test
