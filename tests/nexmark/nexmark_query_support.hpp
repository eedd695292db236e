#pragma once
// Runs the Nexmark queries of examples/nexmark/ unchanged except for their size: the script
// is read from the file, its generator table gets a small events.num, a fixed
// events.base-time and (optionally) another event rate, and its blackhole sink becomes a
// `collect` sink. The expected results are computed from the generator's events here, in
// the tests, never from the engine's output.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "clink/connectors/nexmark/nexmark_generator.hpp"
#include "clink/connectors/nexmark/nexmark_options.hpp"
#include "clink/connectors/sql/sql_sinks.hpp"
#include "clink/registry/builtin_registry.hpp"
#include "clink/runtime/executor.hpp"
#include "clink/runtime/job_graph_spec.hpp"
#include "clink/runtime/operator_registry.hpp"
#include "clink/sql/handler/statement_runner.hpp"

namespace clink::test {

inline std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (auto p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

inline std::string example_script(const std::string& query) {
  std::ifstream in(std::string(CLINK_SOURCE_DIR) + "/examples/nexmark/" + query + ".sql");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// How a test sizes an example: events, base time and the first-event rate (events/s).
struct Sizing {
  std::int64_t events = 2000;
  std::int64_t base_time = 0;
  std::int64_t rate = 10'000'000;
  bool max_emit_speed = true;
};

// The example's text sized as `s`, with its blackhole sink replaced by a collect sink.
inline std::string sized_script(const std::string& query, const Sizing& s) {
  std::string sql = example_script(query);
  const std::string events = "'events.num' = '100000'";
  EXPECT_NE(sql.find(events), std::string::npos) << query << ": the example's events.num changed";
  std::string options = fmt::format("'events.num' = '{}',\n    'events.base-time' = '{}'", s.events, s.base_time);
  if (s.max_emit_speed) options += ",\n    'max-emit-speed' = 'true'";
  sql = replace_all(sql, events, options);
  sql = replace_all(sql, "'first-event.rate' = '10000000'", fmt::format("'first-event.rate' = '{}'", s.rate));
  sql = replace_all(sql, "'next-event.rate' = '10000000'", fmt::format("'next-event.rate' = '{}'", s.rate));
  return replace_all(sql, "'connector' = 'blackhole'", "'connector' = 'collect'");
}

// The events the sized script's generator table produces, from the generator directly.
inline std::vector<NexmarkEvent> generator_events(const Sizing& s) {
  auto options = nexmark::parse_nexmark_options({{"events.num", std::to_string(s.events)},
                                        {"events.base-time", std::to_string(s.base_time)},
                                        {"first-event.rate", std::to_string(s.rate)},
                                        {"next-event.rate", std::to_string(s.rate)},
                                        {"person.proportion", "1"},
                                        {"auction.proportion", "3"},
                                        {"bid.proportion", "46"}});
  nexmark::NexmarkGenerator g(options.generator);
  std::vector<NexmarkEvent> out;
  for (std::int64_t n = 0; n < s.events; ++n) out.push_back(g.event(n));
  return out;
}

inline std::vector<NexmarkBid> bids_of(const std::vector<NexmarkEvent>& events) {
  std::vector<NexmarkBid> out;
  for (const auto& e : events)
    if (e.type == NexmarkEventType::kBid) out.push_back(e.bid);
  return out;
}

// Runs a script's jobs in order (each as planned, unless `rewrite` changes its graph) and
// returns the collect sink `sink`'s results.
struct QueryResult {
  std::vector<std::string> changelog;  // every row received, in order
  std::vector<std::string> rows;       // the materialised rows
};
inline QueryResult run_script(const std::string& sql, const std::string& sink,
                              const std::function<void(JobGraph&)>& rewrite = nullptr,
                              ExecutionOptions options = {}) {
  sql::SqlCollectResults::drop(sink);
  sql::Catalog catalog;
  sql::StatementRunner runner(catalog);
  runner.on_job([&](const nlohmann::json& spec, const sql::ast::Statement&) {
    JobGraph graph = from_spec(spec, builtin_registry());
    if (rewrite) rewrite(graph);
    execute(graph, options);
  });
  runner.run(sql);
  auto results = sql::SqlCollectResults::get(sink);
  QueryResult r{results->changelog(), results->rows()};
  sql::SqlCollectResults::drop(sink);
  return r;
}

// ---- UTC calendar text of epoch milliseconds, as DATE_FORMAT and the row format print it --

struct Civil {
  int year, month, day, hour, minute, second, millis;
};
inline Civil civil(std::int64_t ms) {
  std::int64_t days = ms >= 0 ? ms / 86400000 : -((-ms + 86399999) / 86400000);
  std::int64_t rest = ms - days * 86400000;
  days += 719468;  // H. Hinnant's civil_from_days
  const std::int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const std::int64_t doe = days - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  const int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  const int y = static_cast<int>(yoe + era * 400 + (m <= 2));
  return {y, m, d, static_cast<int>(rest / 3600000), static_cast<int>(rest / 60000 % 60),
          static_cast<int>(rest / 1000 % 60), static_cast<int>(rest % 1000)};
}
inline std::string day_of(std::int64_t ms) {  // DATE_FORMAT(ts, 'yyyy-MM-dd')
  Civil c = civil(ms);
  return fmt::format("{:04}-{:02}-{:02}", c.year, c.month, c.day);
}
inline std::string hm_of(std::int64_t ms) {  // DATE_FORMAT(ts, 'HH:mm')
  Civil c = civil(ms);
  return fmt::format("{:02}:{:02}", c.hour, c.minute);
}
inline std::string timestamp_of(std::int64_t ms) {  // a TIMESTAMP(3) cell in the print form (LocalDateTime)
  Civil c = civil(ms);
  std::string s = fmt::format("{}T{:02}:{:02}", day_of(ms), c.hour, c.minute);
  if (c.second != 0 || c.millis != 0) s += fmt::format(":{:02}", c.second);
  if (c.millis != 0) s += fmt::format(".{:03}", c.millis);
  return s;
}

inline std::string str(std::string_view v) { return std::string(v); }
// An insert-only result row in the print form: +I[f1, f2, ...].
inline std::string row(const std::vector<std::string>& fields) {
  std::string s = "+I[";
  for (std::size_t i = 0; i < fields.size(); ++i) s += (i ? ", " : "") + fields[i];
  return s + "]";
}
inline std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// 2020-09-13 23:59:59.500 UTC: at one event per millisecond the stream crosses midnight.
inline constexpr std::int64_t kHalfSecondBeforeMidnight = 1600041599500;

}  // namespace clink::test
