// The periodic refreshes of FULL materialized tables: when they fall due and what each
// recomputes (Flink's workflow scheduler: a cron made of the freshness, and
// 'partition.fields.<f>.date-formatter' to refresh only the interval's partition). The
// loop that waits for them is the process's: `clink run --keep-refreshing` or the
// coordinator (tools/clink/refresh_scheduler.hpp).
#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "clink/sql/common/time_zone.hpp"
#include "clink/sql/function/date_format.hpp"
#include "clink/sql/handler/materialized_table.hpp"
#include "clink/sql/parser/parser.hpp"

namespace clink::sql {

namespace {

constexpr std::string_view kFieldsPrefix = "partition.fields.";
constexpr std::string_view kFormatterSuffix = ".date-formatter";

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

std::shared_ptr<const TimeZone> session_zone(const SessionConfig& session) {
  auto it = session.find("table.local-time-zone");
  return it == session.end() ? TimeZone::utc() : TimeZone::of(it->second);
}

// The freshness boundaries are multiples of the freshness on the wall clock of `zone`
// (a one-day freshness fires at local midnight, as a cron does).
std::int64_t last_boundary_at_or_before(std::int64_t utc_ms, std::int64_t freshness_ms, const TimeZone& zone) {
  const std::int64_t offset_ms = zone.offset_at_utc(floor_div(utc_ms, 1000)) * 1000;
  return floor_div(utc_ms + offset_ms, freshness_ms) * freshness_ms - offset_ms;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> date_formatters(const std::vector<std::pair<std::string, std::string>>& options) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, value] : options) {
    std::string_view k = key;
    if (k.size() > kFieldsPrefix.size() + kFormatterSuffix.size() && k.substr(0, kFieldsPrefix.size()) == kFieldsPrefix &&
        k.substr(k.size() - kFormatterSuffix.size()) == kFormatterSuffix)
      out.emplace_back(std::string(k.substr(kFieldsPrefix.size(), k.size() - kFieldsPrefix.size() - kFormatterSuffix.size())),
                       value);
  }
  return out;
}

std::int64_t MaterializedTables::next_scheduled_refresh(const MaterializedTableDef& def) const {
  if (!def.full() || def.status != "ACTIVATED" || def.freshness_ms <= 0) return std::numeric_limits<std::int64_t>::max();
  const std::int64_t since = def.last_schedule_ms > 0 ? def.last_schedule_ms : def.last_refresh_ms;
  return last_boundary_at_or_before(since, def.freshness_ms, *session_zone(session_)) + def.freshness_ms;
}

std::vector<std::pair<std::string, std::string>> MaterializedTables::scheduled_partition(const MaterializedTableDef& def,
                                                                                         std::int64_t schedule_ms) const {
  const TableDef* backing = catalog_.table(def.name);
  if (!backing) return {};
  auto formatters = date_formatters(backing->options);
  if (formatters.empty()) return {};
  // The interval that just ended: schedule time minus the freshness, on the session's
  // wall clock (Flink's getPeriodRefreshPartition).
  const auto zone = session_zone(session_);
  const std::int64_t at_ms = schedule_ms - def.freshness_ms;
  const std::int64_t local_micros = (at_ms + zone->offset_at_utc(floor_div(at_ms, 1000)) * 1000) * 1000;
  std::vector<std::pair<std::string, std::string>> partition;
  for (const auto& [field, pattern] : formatters) partition.emplace_back(field, DateFormatter(pattern).format(local_micros));
  return partition;
}

std::int64_t MaterializedTables::refresh_due(std::int64_t now_ms, const MaterializedJobRunner& run,
                                             const std::function<void(const std::string&, const std::exception*)>& done) {
  std::int64_t next = std::numeric_limits<std::int64_t>::max();
  for (const auto& listed : all()) {
    std::int64_t due = next_scheduled_refresh(listed);
    if (due <= now_ms) {
      // The latest boundary passed: missed ones (a refresh that overran, a process that
      // was down) are not caught up one by one.
      const std::int64_t schedule_ms = last_boundary_at_or_before(now_ms, listed.freshness_ms, *session_zone(session_));
      // The statement a user would type, so the refresh is the one ALTER ... REFRESH runs.
      ast::Script script = parse(fmt::format("ALTER MATERIALIZED TABLE {} REFRESH", ast::quote_identifier(listed.name)));
      try {
        refresh(listed.name, scheduled_partition(listed, schedule_ms), script.statements.at(0), run);
        done(listed.name, nullptr);
      } catch (const std::exception& e) {
        done(listed.name, &e);
      }
      auto def = find(listed.name);
      if (!def) continue;  // dropped meanwhile
      def->last_schedule_ms = schedule_ms;
      save(*def);
      due = next_scheduled_refresh(*def);
    }
    next = std::min(next, due);
  }
  return next;
}

}  // namespace clink::sql
