#include "exec_options.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "clink/core/duration.hpp"

namespace clink::sql {

namespace {

std::optional<std::string> option(const SessionConfig& session, const char* key) {
  auto it = session.find(key);
  return it == session.end() ? std::nullopt : std::optional<std::string>(it->second);
}

[[noreturn]] void fail(SourcePosition pos, const std::string& message) { throw TranslationError(pos, message); }

}  // namespace

bool batch_mode(const SessionConfig& session) {
  auto mode = option(session, "execution.runtime-mode");
  if (!mode) return false;
  std::string m = *mode;
  std::transform(m.begin(), m.end(), m.begin(), [](unsigned char c) { return std::tolower(c); });
  return m == "batch";
}

std::int64_t state_ttl_ms(const SessionConfig& session, SourcePosition pos) {
  auto ttl = option(session, "table.exec.state.ttl");
  if (!ttl) return 0;
  auto ms = parse_duration_ms(*ttl);
  if (!ms) fail(pos, fmt::format("'table.exec.state.ttl' is not a duration: '{}'", *ttl));
  return std::max<std::int64_t>(0, *ms);
}

std::optional<MiniBatch> mini_batch(const SessionConfig& session, SourcePosition pos) {
  auto enabled = option(session, "table.exec.mini-batch.enabled");
  if (!enabled) return std::nullopt;
  std::string flag = *enabled;
  std::transform(flag.begin(), flag.end(), flag.begin(), [](unsigned char c) { return std::tolower(c); });
  if (flag == "false") return std::nullopt;
  if (flag != "true") fail(pos, fmt::format("'table.exec.mini-batch.enabled' is not a boolean: '{}'", *enabled));
  auto latency = option(session, "table.exec.mini-batch.allow-latency");
  auto ms = latency ? parse_duration_ms(*latency) : std::optional<std::int64_t>(0);
  if (!ms) fail(pos, fmt::format("'table.exec.mini-batch.allow-latency' is not a duration: '{}'", *latency));
  if (*ms <= 0)
    fail(pos, "'table.exec.mini-batch.allow-latency' must be greater than 0 when 'table.exec.mini-batch.enabled' is true");
  auto size_text = option(session, "table.exec.mini-batch.size");
  std::int64_t size = -1;
  if (size_text) {
    char* end = nullptr;
    size = std::strtoll(size_text->c_str(), &end, 10);
    if (size_text->empty() || *end != '\0')
      fail(pos, fmt::format("'table.exec.mini-batch.size' is not a number: '{}'", *size_text));
  }
  if (size <= 0) fail(pos, "'table.exec.mini-batch.size' must be greater than 0 when 'table.exec.mini-batch.enabled' is true");
  return MiniBatch{*ms, size};
}

AggPhaseStrategy agg_phase_strategy(const SessionConfig& session, SourcePosition pos) {
  auto v = option(session, "table.optimizer.agg-phase-strategy");
  if (!v) return AggPhaseStrategy::kAuto;
  std::string s = *v;
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  if (s == "AUTO") return AggPhaseStrategy::kAuto;
  if (s == "ONE_PHASE") return AggPhaseStrategy::kOnePhase;
  if (s == "TWO_PHASE") return AggPhaseStrategy::kTwoPhase;
  fail(pos, fmt::format("'table.optimizer.agg-phase-strategy' must be AUTO, ONE_PHASE or TWO_PHASE, got '{}'", *v));
}

std::optional<int> parallelism_option(const TableDef& t, const char* key, SourcePosition pos) {
  auto v = t.option(key);
  if (!v) return std::nullopt;
  try {
    std::size_t used = 0;
    int n = std::stoi(*v, &used);
    if (used == v->size() && n > 0) return n;
  } catch (const std::exception&) {
  }
  throw TranslationError(pos, fmt::format("table `{}`: option '{}' must be a positive integer, got '{}'", t.name, key, *v));
}

}  // namespace clink::sql
