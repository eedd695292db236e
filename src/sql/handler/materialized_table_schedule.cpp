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

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

std::shared_ptr<const TimeZone> zone_of(const MaterializedTableDef& def) {
  return def.time_zone.empty() ? TimeZone::utc() : TimeZone::of(def.time_zone);
}

// The freshness boundaries are multiples of the freshness on the wall clock of `zone`
// (a one-day freshness fires at local midnight, as a cron does).
std::int64_t last_boundary_at_or_before(std::int64_t utc_ms, std::int64_t freshness_ms, const TimeZone& zone) {
  const std::int64_t offset_ms = zone.offset_at_utc(floor_div(utc_ms, 1000)) * 1000;
  return floor_div(utc_ms + offset_ms, freshness_ms) * freshness_ms - offset_ms;
}

}  // namespace

std::int64_t MaterializedTables::next_scheduled_refresh(const MaterializedTableDef& def) const {
  if (!def.full() || def.status != "ACTIVATED" || def.freshness_ms <= 0) return std::numeric_limits<std::int64_t>::max();
  const std::int64_t since = def.last_schedule_ms > 0 ? def.last_schedule_ms : def.last_refresh_ms;
  return last_boundary_at_or_before(since, def.freshness_ms, *zone_of(def)) + def.freshness_ms;
}

std::vector<std::pair<std::string, std::string>> MaterializedTables::scheduled_partition(const MaterializedTableDef& def,
                                                                                         std::int64_t schedule_ms) const {
  if (def.date_formatters.empty()) return {};
  // The interval that just ended: schedule time minus the freshness, on the creating
  // session's wall clock (Flink's getPeriodRefreshPartition).
  const auto zone = zone_of(def);
  const std::int64_t at_ms = schedule_ms - def.freshness_ms;
  const std::int64_t local_micros = (at_ms + zone->offset_at_utc(floor_div(at_ms, 1000)) * 1000) * 1000;
  std::vector<std::pair<std::string, std::string>> partition;
  for (const auto& [field, pattern] : def.date_formatters) partition.emplace_back(field, DateFormatter(pattern).format(local_micros));
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
      const std::int64_t schedule_ms = last_boundary_at_or_before(now_ms, listed.freshness_ms, *zone_of(listed));
      // The statement a user would type, so the refresh is the one ALTER ... REFRESH runs.
      ast::Script script = parse(fmt::format("ALTER MATERIALIZED TABLE {} REFRESH", ast::quote_identifier(listed.name)));
      try {
        refresh(listed.name, scheduled_partition(listed, schedule_ms), script.statements.at(0), run, true);
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
