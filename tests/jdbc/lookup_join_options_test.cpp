// Each lookup option against the server: the partial cache ('lookup.cache',
// 'lookup.partial-cache.max-rows', '...expire-after-write', '...expire-after-access',
// '...cache-missing-key', and the JDBC connector's older 'lookup.cache.max-rows' /
// 'lookup.cache.ttl'), 'lookup.max-retries' after pg_terminate_backend, and the async
// settings 'table.exec.async-lookup.output-mode', '.buffer-capacity' and '.timeout'. A
// cached key answers with the version it cached until the entry expires or is evicted
// (Flink's partial cache); a table locked by another transaction holds lookups up.
#include <gtest/gtest.h>

#include "lookup_join_env.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

using namespace std::chrono_literals;

std::string make_dim(const std::string& base) {
  const std::string t = unique_pg_table(base);
  pg_exec("CREATE TABLE " + t + " (id INT PRIMARY KEY, name TEXT);"
          "INSERT INTO " + t + " VALUES (1, 'one'), (2, 'two'), (3, 'three')");
  return t;
}

// orders LEFT JOIN dim (table `t`, `options` appended) into collect rows (id, name).
std::string left_join_sql(const std::string& t, const std::string& options) {
  return orders_ddl() + "CREATE TABLE dim (id INT, name STRING) WITH ('connector' = 'jdbc', 'url' = '${URL}', "
         "'table-name' = '" + t + "'" + options + ");\n"
         "CREATE TABLE out (id BIGINT, name STRING) WITH ('connector' = 'collect', 'name' = '${COLLECT}');\n"
         "INSERT INTO out SELECT o.id, d.name FROM orders AS o LEFT JOIN dim FOR SYSTEM_TIME AS OF o.proc_time AS d "
         "ON o.k = d.id;";
}

std::vector<BatchStep> steps_of(const std::vector<std::vector<std::pair<std::int64_t, int>>>& steps) {
  std::vector<BatchStep> out;
  for (const auto& s : steps) out.push_back(orders_step(s));
  return out;
}

// Runs step by step: before each step i > 0, `between(i)`; returns the rows.
std::vector<std::string> run_steps(const std::string& name, const std::string& sql,
                                   const std::vector<std::vector<std::pair<std::int64_t, int>>>& steps,
                                   const std::function<void(std::size_t)>& between,
                                   const sql::SessionConfig& settings = {}) {
  LookupJob job(name, sql, steps_of(steps), 1, settings);
  std::size_t rows = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    rows += steps[i].size();
    EXPECT_EQ(job.rows(rows).size(), rows) << "after step " << i;
    if (i + 1 < steps.size()) {
      between(i + 1);
      job.release(i + 2);
    }
  }
  JobHandle& h = job.finish();
  EXPECT_EQ(h.status(), JobStatus::kFinished) << h.error();
  return job.rows_now();
}

TEST(LookupJoinOptions, ExpireAfterWriteKeepsTheCachedVersionUntilItExpires) {
  const std::string t = make_dim("lookup_ttl_write");
  auto rows = run_steps("lookup-ttl-write",
                        left_join_sql(t, ", 'lookup.cache' = 'PARTIAL', "
                                         "'lookup.partial-cache.expire-after-write' = '1500 ms'"),
                        {{{1, 1}}, {{2, 1}}, {{3, 1}}}, [&](std::size_t step) {
                          if (step == 1) pg_exec("UPDATE " + t + " SET name = 'uno' WHERE id = 1");
                          if (step == 2) std::this_thread::sleep_for(1600ms);  // the entry expires
                        });
  EXPECT_EQ(rows, (std::vector<std::string>{"+I[1, one]", "+I[2, one]", "+I[3, uno]"}));
}

TEST(LookupJoinOptions, ExpireAfterAccessKeepsAnEntryWhileItIsRead) {
  const std::string t = make_dim("lookup_ttl_access");
  auto rows = run_steps("lookup-ttl-access",
                        left_join_sql(t, ", 'lookup.cache' = 'PARTIAL', "
                                         "'lookup.partial-cache.expire-after-access' = '2 s'"),
                        {{{1, 1}}, {{2, 1}}, {{3, 1}}, {{4, 1}}, {{5, 1}}}, [&](std::size_t step) {
                          if (step == 1) pg_exec("UPDATE " + t + " SET name = 'uno' WHERE id = 1");
                          // read every second: 3 s after the write, still cached
                          if (step == 2 || step == 3) std::this_thread::sleep_for(1000ms);
                          if (step == 4) std::this_thread::sleep_for(2200ms);  // not read for longer: expired
                        });
  EXPECT_EQ(rows, (std::vector<std::string>{"+I[1, one]", "+I[2, one]", "+I[3, one]", "+I[4, one]", "+I[5, uno]"}));
}

// max-rows counts keys; past it the least recently read goes.
TEST(LookupJoinOptions, MaxRowsEvictsTheLeastRecentlyReadKey) {
  const std::string t = make_dim("lookup_max_rows");
  auto rows = run_steps("lookup-max-rows",
                        left_join_sql(t, ", 'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '1'"),
                        {{{1, 1}}, {{2, 2}}, {{3, 2}}, {{4, 1}}}, [&](std::size_t step) {
                          if (step == 2) pg_exec("UPDATE " + t + " SET name = name || '!'");
                        });
  // 2 is cached (read last), 1 was evicted by it: looked up again.
  EXPECT_EQ(rows, (std::vector<std::string>{"+I[1, one]", "+I[2, two]", "+I[3, two]", "+I[4, one!]"}));
}

TEST(LookupJoinOptions, CacheMissingKeyCachesEmptyResults) {
  for (bool cache_missing : {true, false}) {
    const std::string t = make_dim("lookup_missing");
    auto rows = run_steps("lookup-missing",
                          left_join_sql(t, std::string(", 'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = "
                                                       "'10', 'lookup.partial-cache.cache-missing-key' = '") +
                                               (cache_missing ? "true" : "false") + "'"),
                          {{{1, 7}}, {{2, 7}}}, [&](std::size_t) { pg_exec("INSERT INTO " + t + " VALUES (7, 'seven')"); });
    EXPECT_EQ(rows, (std::vector<std::string>{"+I[1, null]", cache_missing ? "+I[2, null]" : "+I[2, seven]"}))
        << "cache-missing-key " << cache_missing;
  }
}

// The JDBC connector's older options make the same partial cache (max-rows and ttl).
TEST(LookupJoinOptions, LegacyCacheOptionsMakeAPartialCache) {
  const std::string t = make_dim("lookup_legacy");
  auto rows = run_steps("lookup-legacy",
                        left_join_sql(t, ", 'lookup.cache.max-rows' = '10', 'lookup.cache.ttl' = '10 min'"),
                        {{{1, 1}}, {{2, 1}}}, [&](std::size_t) { pg_exec("UPDATE " + t + " SET name = 'uno'"); });
  EXPECT_EQ(rows, (std::vector<std::string>{"+I[1, one]", "+I[2, one]"}));
}

// The lookup's connection is terminated between two lookups: the next one fails, the
// source reconnects and the retry answers it.
TEST(LookupJoinOptions, MaxRetriesReconnectsAfterTheBackendIsTerminated) {
  const std::string t = make_dim("lookup_retry");
  auto rows = run_steps("lookup-retry", left_join_sql(t, ", 'lookup.max-retries' = '2'"), {{{1, 1}}, {{2, 2}}, {{3, 3}}},
                        [&](std::size_t) {
                          const std::string pid = lookup_backend_pid(t);
                          ASSERT_NE(pid, "0");
                          EXPECT_EQ(pg_query_value("SELECT pg_terminate_backend(" + pid + ")"), "t");
                        });
  EXPECT_EQ(rows, (std::vector<std::string>{"+I[1, one]", "+I[2, two]", "+I[3, three]"}));
}

TEST(LookupJoinOptions, WithoutRetriesABrokenConnectionFailsTheJob) {
  const std::string t = make_dim("lookup_no_retry");
  LookupJob job("lookup-no-retry", left_join_sql(t, ", 'lookup.max-retries' = '0'"), steps_of({{{1, 1}}, {{2, 2}}}), 1);
  ASSERT_EQ(job.rows(1).size(), 1u);
  const std::string pid = lookup_backend_pid(t);
  ASSERT_NE(pid, "0");
  pg_query_value("SELECT pg_terminate_backend(" + pid + ")");
  JobHandle& h = job.finish();
  EXPECT_EQ(h.status(), JobStatus::kFailed);
  EXPECT_NE(h.error().find("the lookup failed after 1 attempt(s) ('lookup.max-retries' = 0)"), std::string::npos)
      << h.error();
}

// Key 1 is cached; then, while another transaction holds the table locked, a row of key
// 2 (looked up: it waits for the lock) and one of key 1 (cached) arrive. ORDERED holds
// the cached row back behind the waiting one; ALLOW_UNORDERED emits it at once.
TEST(LookupJoinOptions, OrderedOutputKeepsInputOrderUnorderedDoesNot) {
  for (const char* mode : {"ORDERED", "ALLOW_UNORDERED"}) {
    const std::string t = make_dim("lookup_order");
    LookupJob job(std::string("lookup-order-") + mode,
                  left_join_sql(t, ", 'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '10'"),
                  steps_of({{{1, 1}}, {{2, 2}, {3, 1}}}), 1, {{"table.exec.async-lookup.output-mode", mode}});
    ASSERT_EQ(job.rows(1).size(), 1u);
    PgConnection locker = pg_connect();
    locker.exec("BEGIN; LOCK TABLE " + t + " IN ACCESS EXCLUSIVE MODE");
    job.release(2);
    const bool ordered = std::string(mode) == "ORDERED";
    if (ordered) std::this_thread::sleep_for(500ms);
    else job.rows(2);  // the cached row comes out while the other waits
    const std::vector<std::string> while_locked =
        ordered ? std::vector<std::string>{"+I[1, one]"} : std::vector<std::string>{"+I[1, one]", "+I[3, one]"};
    EXPECT_EQ(job.rows_now(), while_locked) << mode;
    locker.exec("COMMIT");
    JobHandle& h = job.finish();
    ASSERT_EQ(h.status(), JobStatus::kFinished) << h.error();
    const std::vector<std::string> all = ordered
                                             ? std::vector<std::string>{"+I[1, one]", "+I[2, two]", "+I[3, one]"}
                                             : std::vector<std::string>{"+I[1, one]", "+I[3, one]", "+I[2, two]"};
    EXPECT_EQ(job.rows_now(), all) << mode;
  }
}

// At most 'buffer-capacity' rows are in flight: while the table is locked the op takes
// no more input than that (the source, chained with it, stops), with room it takes all.
TEST(LookupJoinOptions, BufferCapacityBoundsTheRowsInFlight) {
  for (int capacity : {2, 100}) {
    const std::string t = make_dim("lookup_capacity");
    LookupJob job("lookup-capacity-" + std::to_string(capacity), left_join_sql(t, ""),
                  steps_of({{{1, 1}}, {{2, 2}, {3, 3}, {4, 2}}, {{5, 3}}, {{6, 1}}}), 1,
                  {{"table.exec.async-lookup.buffer-capacity", std::to_string(capacity)}});
    ASSERT_EQ(job.rows(1).size(), 1u);
    PgConnection locker = pg_connect();
    locker.exec("BEGIN; LOCK TABLE " + t + " IN ACCESS EXCLUSIVE MODE");
    job.release(static_cast<std::size_t>(-1));
    auto control = script(std::string("lookup-capacity-") + std::to_string(capacity));
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (capacity > 2 && control->emitted.load() < 4 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(5ms);
    std::this_thread::sleep_for(300ms);
    auto taken = control->emitted.load();
    // capacity 2: the source is stuck emitting step 1 (its third row waits for room);
    // capacity 100: every step was taken.
    EXPECT_EQ(taken, capacity == 2 ? 1u : 4u) << "capacity " << capacity;
    EXPECT_EQ(job.rows_now().size(), 1u);
    locker.exec("COMMIT");
    JobHandle& h = job.finish();
    ASSERT_EQ(h.status(), JobStatus::kFinished) << h.error();
    EXPECT_EQ(job.rows_now(), (std::vector<std::string>{"+I[1, one]", "+I[2, two]", "+I[3, three]", "+I[4, two]",
                                                        "+I[5, three]", "+I[6, one]"}));
  }
}

TEST(LookupJoinOptions, ALookupOverTheTimeoutFailsTheJob) {
  const std::string t = make_dim("lookup_timeout");
  LookupJob job("lookup-timeout", left_join_sql(t, ""), steps_of({{{1, 1}}, {{2, 2}}}), 1,
                {{"table.exec.async-lookup.timeout", "300 ms"}});
  ASSERT_EQ(job.rows(1).size(), 1u);
  PgConnection locker = pg_connect();
  locker.exec("BEGIN; LOCK TABLE " + t + " IN ACCESS EXCLUSIVE MODE");
  JobHandle& h = job.finish();
  locker.exec("COMMIT");
  EXPECT_EQ(h.status(), JobStatus::kFailed);
  EXPECT_NE(h.error().find("took longer than 300 ms ('table.exec.async-lookup.timeout')"), std::string::npos) << h.error();
}

}  // namespace
}  // namespace clink::test
