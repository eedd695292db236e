#pragma once
// The filesystem sink's Flink options beyond path and format:
//
//   sink.rolling-policy.file-size            roll a part file once it holds this many bytes (128MB)
//   sink.rolling-policy.rollover-interval    ... once it has been open this long (30 min)
//   sink.rolling-policy.inactivity-interval  ... once nothing was written to it this long (30 min)
//   sink.rolling-policy.check-interval       how often the two time conditions are checked (1 min)
//   sink.partition-commit.trigger            process-time (default) | partition-time
//   sink.partition-commit.delay              (0)
//   sink.partition-commit.policy.kind        success-file (metastore and custom need Hive / a JVM)
//   sink.partition-commit.success-file.name  (_SUCCESS)
//   sink.partition-commit.watermark-time-zone  the zone partition times are in (UTC)
//   partition.time-extractor.kind            default
//   partition.time-extractor.timestamp-pattern   e.g. '$dt $hm:00' (default: the first partition value)
//   partition.time-extractor.timestamp-formatter yyyy-MM-dd HH:mm:ss (the only formatter)
//
// Rolling: the time conditions are checked on writes (at most every check-interval);
// clink's part files are additionally closed at every checkpoint (each one is a
// transaction of the exactly-once sink), so no file stays open longer than a checkpoint
// interval.
//
// Partition commit: once a checkpoint made a partition's files visible and the trigger
// holds (process-time: the clock passed the partition's creation + delay; partition-time:
// the watermark at that checkpoint passed the partition's time + delay), the policy runs
// for it: success-file writes an empty marker file into the partition directory. At the end
// of a bounded input every written partition is committed, as Flink's committer does.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "clink/sql/common/time_zone.hpp"

namespace clink::sql {

struct RollingPolicy {
  std::int64_t file_size = std::int64_t{128} << 20;
  std::int64_t rollover_interval_ms = 30 * 60 * 1000;
  std::int64_t inactivity_interval_ms = 30 * 60 * 1000;
  std::int64_t check_interval_ms = 60 * 1000;
};

struct PartitionCommitPolicy {
  enum class Trigger { kProcessTime, kPartitionTime };
  Trigger trigger = Trigger::kProcessTime;
  std::int64_t delay_ms = 0;
  bool success_file = false;  // no policy: partitions are not committed (nothing to do)
  std::string success_file_name = "_SUCCESS";
  std::string timestamp_pattern;  // empty: the first partition column's value
  TimeZonePtr zone = TimeZone::utc();

  // The partition's time (epoch ms) from its column values (in partition_by order), by
  // the timestamp pattern's $name substitution, read as yyyy-MM-dd[ HH:mm[:ss]] in `zone`.
  // Throws ClinkError naming the text that is not a timestamp.
  std::int64_t partition_time(const std::vector<std::string>& names, const std::vector<std::string>& values) const;
};

// The option names above (sorted), for the sink's unknown-option check.
const std::vector<std::string>& file_sink_policy_option_names();

// Reads the options; throws ClinkError naming a bad option and its value.
RollingPolicy parse_rolling_policy(const std::map<std::string, std::string>& options);
PartitionCommitPolicy parse_partition_commit_policy(const std::map<std::string, std::string>& options,
                                                    bool partitioned);

// "128MB", "64 kb", "1024": bytes (Flink's MemorySize units b, kb, mb, gb, tb); nullopt if not.
std::optional<std::int64_t> parse_memory_size(std::string_view text);

}  // namespace clink::sql
