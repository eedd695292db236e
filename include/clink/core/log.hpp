#pragma once
// clink's log: leveled, structured lines (time, level, the job / task / subtask of the
// thread that logs, the message) to stderr and, when a log directory is set, to the
// process log and a file per job there. spdlog writes them (src/core/log.cpp); this
// header keeps it out of everything that logs. Not for a command's output (job ids, the
// REST address, SQL results, error lines a user or a script reads): those stay prints.
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/core.h>

namespace clink::log {

enum class Level : int { kTrace, kDebug, kInfo, kWarn, kError, kOff };

// "trace", "debug", "info", "warn", "error", "off"; throws ClinkError naming the others.
Level parse_level(std::string_view name);
const char* level_name(Level level);  // "TRACE", ..., "ERROR", "OFF"
void set_level(Level level);          // default: kInfo
Level level();
bool enabled(Level level);
// One line at `level` (dropped below the current level).
void write(Level level, std::string_view message);

template <typename... Args>
void at(Level level, fmt::format_string<Args...> format, Args&&... args) {
  if (enabled(level)) write(level, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void trace(fmt::format_string<Args...> f, Args&&... args) { at(Level::kTrace, f, std::forward<Args>(args)...); }
template <typename... Args>
void debug(fmt::format_string<Args...> f, Args&&... args) { at(Level::kDebug, f, std::forward<Args>(args)...); }
template <typename... Args>
void info(fmt::format_string<Args...> f, Args&&... args) { at(Level::kInfo, f, std::forward<Args>(args)...); }
template <typename... Args>
void warn(fmt::format_string<Args...> f, Args&&... args) { at(Level::kWarn, f, std::forward<Args>(args)...); }
template <typename... Args>
void error(fmt::format_string<Args...> f, Args&&... args) { at(Level::kError, f, std::forward<Args>(args)...); }

// Who logs: set on a thread for what it works on (a task thread: its job, task and
// subtask; a job's coordinating threads: the job). Threads a job starts inherit the
// context of the thread that started the job (see JobRun, TaskGroup).
struct Context {
  std::string job;   // the job id (a cluster or REST job), else the job's name
  std::string task;  // the task's name (its chain's head), empty outside tasks
  int subtask = -1;  // 0-based; -1 outside tasks
  int parallelism = 0;
};
const Context& context();  // this thread's
// Sets this thread's context for its lifetime, restoring the previous one after.
class ScopedContext {
 public:
  explicit ScopedContext(Context context);
  ~ScopedContext();
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;

 private:
  Context saved_;
};
// The context as the log line carries it: `job=<id> task="<name>" subtask=<s+1>/<p>`
// (empty for none); for tests and for the progress line.
std::string describe(const Context& context);

// Files (Flink's env.log.dir): `<dir>/<process>.log` gets every line of this process,
// `<dir>/<job id>.log` every line logged in that job's context. Processes sharing the
// directory (a coordinator and its workers) append to the same job file, a line at a
// time (O_APPEND); file lines name their process. Creates the directory; throws
// ClinkError naming it when it cannot.
void open_log_dir(const std::filesystem::path& dir, const std::string& process);
// Stops logging to stderr (the process log still gets every line), e.g. while a full
// screen owns the terminal. Default: on.
void set_stderr(bool on);
// Called before a line goes to stderr (under the log's lock; it must not log): a status
// line on the terminal clears itself so the log line does not land in it. Empty: none.
void set_stderr_prelude(std::function<void()> prelude);
// Flushes and closes the files (at exit they are flushed anyway).
void close_files();

}  // namespace clink::log
