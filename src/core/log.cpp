// The log behind include/clink/core/log.hpp: spdlog sinks (stderr, the process file,
// one file per job), the level and each thread's context. Lines are rare (restarts,
// checkpoints, workers coming and going): one mutex serialises them, so the sinks are
// the single-threaded ones and a job's file is opened on its first line.
#include "clink/core/log.hpp"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <spdlog/logger.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include "clink/core/error.hpp"

namespace clink::log {
namespace {

// Compact on a terminal; the files carry the date (Flink's log4j layout has it).
constexpr const char* kStderrPattern = "%H:%M:%S.%e %v";
constexpr const char* kFilePattern = "%Y-%m-%d %H:%M:%S,%e ";

std::atomic<int> g_level{static_cast<int>(Level::kInfo)};

struct Sinks {
  std::mutex mu;
  bool to_stderr = true;
  std::function<void()> prelude;
  std::shared_ptr<spdlog::sinks::stderr_sink_st> err;
  std::filesystem::path dir;  // empty: no files
  std::string file_pattern;  // kFilePattern, the process, the line
  std::shared_ptr<spdlog::sinks::basic_file_sink_st> process;
  std::map<std::string, std::shared_ptr<spdlog::sinks::basic_file_sink_st>, std::less<>> jobs;
};

Sinks& sinks() {
  static Sinks s;  // never destroyed before a late line: see close_files()
  return s;
}

thread_local Context t_context;

spdlog::level::level_enum spd_level(Level l) {
  switch (l) {
    case Level::kTrace: return spdlog::level::trace;
    case Level::kDebug: return spdlog::level::debug;
    case Level::kInfo: return spdlog::level::info;
    case Level::kWarn: return spdlog::level::warn;
    case Level::kError: return spdlog::level::err;
    case Level::kOff: break;
  }
  return spdlog::level::off;
}

std::shared_ptr<spdlog::sinks::basic_file_sink_st> open_file(const std::filesystem::path& path,
                                                             const std::string& pattern) {
  auto sink = std::make_shared<spdlog::sinks::basic_file_sink_st>(path.string());  // appends
  sink->set_pattern(pattern);
  return sink;
}

std::string escape_pattern(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '%' ? std::string("%%") : std::string(1, c);
  return out;
}

void emit(spdlog::sinks::sink& sink, Level level, std::string_view line) {
  spdlog::details::log_msg msg(spdlog::source_loc{}, "clink", spd_level(level), line);
  sink.log(msg);
}

}  // namespace

Level parse_level(std::string_view name) {
  static constexpr std::pair<std::string_view, Level> kNames[] = {
      {"trace", Level::kTrace}, {"debug", Level::kDebug}, {"info", Level::kInfo},
      {"warn", Level::kWarn},   {"error", Level::kError}, {"off", Level::kOff}};
  for (const auto& [n, l] : kNames)
    if (n == name) return l;
  throw ClinkError(fmt::format("unknown log level '{}' (expected trace, debug, info, warn, error or off)", name));
}

const char* level_name(Level level) {
  switch (level) {
    case Level::kTrace: return "TRACE";
    case Level::kDebug: return "DEBUG";
    case Level::kInfo: return "INFO";
    case Level::kWarn: return "WARN";
    case Level::kError: return "ERROR";
    case Level::kOff: break;
  }
  return "OFF";
}

void set_level(Level level) { g_level.store(static_cast<int>(level), std::memory_order_relaxed); }
Level level() { return static_cast<Level>(g_level.load(std::memory_order_relaxed)); }
bool enabled(Level l) { return l != Level::kOff && static_cast<int>(l) >= g_level.load(std::memory_order_relaxed); }

const Context& context() { return t_context; }

ScopedContext::ScopedContext(Context context) : saved_(std::exchange(t_context, std::move(context))) {}
ScopedContext::~ScopedContext() { t_context = std::move(saved_); }

std::string describe(const Context& c) {
  std::string out;
  if (!c.job.empty()) out += "job=" + c.job;
  if (!c.task.empty()) out += (out.empty() ? "" : " ") + fmt::format("task=\"{}\"", c.task);
  if (c.subtask >= 0) out += (out.empty() ? "" : " ") + fmt::format("subtask={}/{}", c.subtask + 1, c.parallelism);
  return out;
}

void write(Level level, std::string_view message) {
  if (!enabled(level)) return;
  const std::string where = describe(t_context);
  // "INFO  [job=... task=... subtask=1/2] message": the level padded as log4j's %-5p.
  std::string line = fmt::format("{:<5} {}{}{}{}", level_name(level), where.empty() ? "" : "[", where,
                                 where.empty() ? "" : "] ", message);
  Sinks& s = sinks();
  std::lock_guard lock(s.mu);
  if (s.to_stderr) {
    if (s.prelude) s.prelude();
    if (!s.err) {
      s.err = std::make_shared<spdlog::sinks::stderr_sink_st>();
      s.err->set_pattern(kStderrPattern);
    }
    emit(*s.err, level, line);
    s.err->flush();
  }
  if (s.process) {
    emit(*s.process, level, line);
    s.process->flush();
  }
  if (!s.dir.empty() && !t_context.job.empty()) {
    auto it = s.jobs.find(t_context.job);
    if (it == s.jobs.end()) {
      try {
        it = s.jobs.emplace(t_context.job, open_file(s.dir / (t_context.job + ".log"), s.file_pattern)).first;
      } catch (const std::exception&) {
        return;  // the process log has the line; a job file that cannot open is no failure
      }
    }
    emit(*it->second, level, line);
    it->second->flush();
  }
}

void open_log_dir(const std::filesystem::path& dir, const std::string& process) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw ClinkError(fmt::format("log directory {}: {}", dir.string(), ec.message()));
  Sinks& s = sinks();
  std::lock_guard lock(s.mu);
  s.file_pattern = std::string(kFilePattern) + escape_pattern(process) + " %v";
  try {
    s.process = open_file(dir / (process + ".log"), s.file_pattern);
  } catch (const std::exception& e) {
    throw ClinkError(fmt::format("log directory {}: {}", dir.string(), e.what()));
  }
  s.dir = dir;
  s.jobs.clear();
}

void set_stderr(bool on) {
  Sinks& s = sinks();
  std::lock_guard lock(s.mu);
  s.to_stderr = on;
}

void set_stderr_prelude(std::function<void()> prelude) {
  Sinks& s = sinks();
  std::lock_guard lock(s.mu);
  s.prelude = std::move(prelude);
}

void close_files() {
  Sinks& s = sinks();
  std::lock_guard lock(s.mu);
  s.process.reset();
  s.jobs.clear();
  s.dir.clear();
}

}  // namespace clink::log
