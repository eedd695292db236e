#include "clink/connectors/sql/file_sink_policies.hpp"

#include <cctype>

#include "clink/core/duration.hpp"
#include "clink/core/error.hpp"

namespace clink::sql {

namespace {

std::optional<std::string> get(const std::map<std::string, std::string>& o, const std::string& key) {
  auto it = o.find(key);
  if (it == o.end()) return std::nullopt;
  return it->second;
}

std::int64_t duration(const std::map<std::string, std::string>& o, const std::string& key, std::int64_t dflt) {
  auto v = get(o, key);
  if (!v) return dflt;
  auto ms = parse_duration_ms(*v);
  if (!ms || *ms < 0) throw ClinkError("option '" + key + "' is not a duration: '" + *v + "'");
  return *ms;
}

// Days since 1970-01-01 of a civil date (H. Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

}  // namespace

const std::vector<std::string>& file_sink_policy_option_names() {
  static const std::vector<std::string> kNames = {"partition.time-extractor.kind",
                                                  "partition.time-extractor.timestamp-formatter",
                                                  "partition.time-extractor.timestamp-pattern",
                                                  "sink.partition-commit.delay",
                                                  "sink.partition-commit.policy.kind",
                                                  "sink.partition-commit.success-file.name",
                                                  "sink.partition-commit.trigger",
                                                  "sink.partition-commit.watermark-time-zone",
                                                  "sink.rolling-policy.check-interval",
                                                  "sink.rolling-policy.file-size",
                                                  "sink.rolling-policy.inactivity-interval",
                                                  "sink.rolling-policy.rollover-interval"};
  return kNames;
}

std::optional<std::int64_t> parse_memory_size(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && text[i] == ' ') ++i;
  std::size_t start = i;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == start || i - start > 15) return std::nullopt;
  std::int64_t n = std::stoll(std::string(text.substr(start, i - start)));
  while (i < text.size() && text[i] == ' ') ++i;
  std::string unit;
  for (; i < text.size(); ++i) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  static const std::pair<const char*, int> kUnits[] = {{"", 0},   {"b", 0},  {"bytes", 0}, {"k", 10},  {"kb", 10},
                                                       {"kibibytes", 10},   {"m", 20},  {"mb", 20},    {"mebibytes", 20},
                                                       {"g", 30}, {"gb", 30}, {"gibibytes", 30}, {"t", 40}, {"tb", 40},
                                                       {"tebibytes", 40}};
  for (const auto& [name, shift] : kUnits)
    if (unit == name) return shift >= 40 && n > (1 << 20) ? std::nullopt : std::optional<std::int64_t>(n << shift);
  return std::nullopt;
}

RollingPolicy parse_rolling_policy(const std::map<std::string, std::string>& o) {
  RollingPolicy p;
  if (auto v = get(o, "sink.rolling-policy.file-size")) {
    auto bytes = parse_memory_size(*v);
    if (!bytes || *bytes <= 0)
      throw ClinkError("option 'sink.rolling-policy.file-size' is not a positive memory size: '" + *v + "'");
    p.file_size = *bytes;
  }
  p.rollover_interval_ms = duration(o, "sink.rolling-policy.rollover-interval", p.rollover_interval_ms);
  p.inactivity_interval_ms = duration(o, "sink.rolling-policy.inactivity-interval", p.inactivity_interval_ms);
  p.check_interval_ms = duration(o, "sink.rolling-policy.check-interval", p.check_interval_ms);
  return p;
}

PartitionCommitPolicy parse_partition_commit_policy(const std::map<std::string, std::string>& o, bool partitioned) {
  PartitionCommitPolicy p;
  if (auto v = get(o, "sink.partition-commit.trigger")) {
    if (*v == "partition-time") p.trigger = PartitionCommitPolicy::Trigger::kPartitionTime;
    else if (*v != "process-time")
      throw ClinkError("option 'sink.partition-commit.trigger' must be process-time or partition-time, got '" + *v + "'");
  }
  p.delay_ms = duration(o, "sink.partition-commit.delay", 0);
  if (auto v = get(o, "sink.partition-commit.policy.kind")) {
    std::string kinds = *v;
    for (std::size_t at = 0; at <= kinds.size();) {
      std::size_t comma = kinds.find(',', at);
      if (comma == std::string::npos) comma = kinds.size();
      std::string kind = kinds.substr(at, comma - at);
      while (!kind.empty() && kind.front() == ' ') kind.erase(0, 1);
      while (!kind.empty() && kind.back() == ' ') kind.pop_back();
      if (kind == "success-file") p.success_file = true;
      else
        throw ClinkError("option 'sink.partition-commit.policy.kind': '" + kind + "' is not supported (clink has "
                         "success-file; metastore needs a Hive metastore and custom a JVM class)");
      at = comma + 1;
    }
    if (!partitioned) throw ClinkError("option 'sink.partition-commit.policy.kind' needs a PARTITIONED BY table");
  }
  if (auto v = get(o, "sink.partition-commit.success-file.name")) {
    if (v->empty() || v->find('/') != std::string::npos)
      throw ClinkError("option 'sink.partition-commit.success-file.name' must be a file name, got '" + *v + "'");
    p.success_file_name = *v;
  }
  if (auto v = get(o, "partition.time-extractor.kind"); v && *v != "default")
    throw ClinkError("option 'partition.time-extractor.kind': only 'default' is supported, got '" + *v + "'");
  if (auto v = get(o, "partition.time-extractor.timestamp-formatter"); v && *v != "yyyy-MM-dd HH:mm:ss")
    throw ClinkError("option 'partition.time-extractor.timestamp-formatter': only 'yyyy-MM-dd HH:mm:ss' is "
                     "supported, got '" + *v + "'");
  p.timestamp_pattern = get(o, "partition.time-extractor.timestamp-pattern").value_or("");
  if (auto v = get(o, "sink.partition-commit.watermark-time-zone")) p.zone = TimeZone::of(*v);
  return p;
}

std::int64_t PartitionCommitPolicy::partition_time(const std::vector<std::string>& names,
                                                   const std::vector<std::string>& values) const {
  std::string text;
  if (timestamp_pattern.empty()) {
    text = values.empty() ? "" : values[0];
  } else {
    // $name (the longest column name that matches) is replaced by that column's value.
    for (std::size_t i = 0; i < timestamp_pattern.size(); ++i) {
      if (timestamp_pattern[i] != '$') {
        text += timestamp_pattern[i];
        continue;
      }
      std::size_t best = names.size(), best_len = 0;
      for (std::size_t k = 0; k < names.size(); ++k)
        if (names[k].size() > best_len && timestamp_pattern.compare(i + 1, names[k].size(), names[k]) == 0)
          best = k, best_len = names[k].size();
      if (best == names.size()) {
        text += '$';
        continue;
      }
      text += values[best];
      i += best_len;
    }
  }
  // yyyy-MM-dd, optionally followed by HH:mm or HH:mm:ss.
  auto num = [&](std::size_t at, std::size_t len) -> int {
    if (at + len > text.size()) return -1;
    int v = 0;
    for (std::size_t k = at; k < at + len; ++k) {
      if (!std::isdigit(static_cast<unsigned char>(text[k]))) return -1;
      v = v * 10 + (text[k] - '0');
    }
    return v;
  };
  const int y = num(0, 4), mo = num(5, 2), d = num(8, 2);
  bool ok = y >= 0 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && text[4] == '-' && text[7] == '-';
  int h = 0, mi = 0, s = 0;
  if (ok && text.size() > 10) {
    h = num(11, 2), mi = num(14, 2);
    ok = text[10] == ' ' && text.size() >= 16 && text[13] == ':' && h >= 0 && h < 24 && mi >= 0 && mi < 60;
    if (ok && text.size() > 16) {
      s = num(17, 2);
      ok = text.size() == 19 && text[16] == ':' && s >= 0 && s < 60;
    }
  } else if (ok) {
    ok = text.size() == 10;
  }
  if (!ok) throw ClinkError("the partition time '" + text + "' is not a yyyy-MM-dd HH:mm:ss timestamp");
  const std::int64_t local = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 86400 +
                             h * 3600 + mi * 60 + s;
  return zone->local_to_utc(local) * 1000;
}

}  // namespace clink::sql
