#include "progress_line.hpp"

#include <algorithm>
#include <ctime>
#include <set>

#include <sys/ioctl.h>
#include <unistd.h>

#include <fmt/format.h>

#include "clink/cluster/rest/dispatcher.hpp"
#include "clink/core/log.hpp"

namespace clink::cli {
namespace {

// 1234567 -> "1,234,567"
std::string grouped(std::int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string bytes_text(std::int64_t b) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", b) : fmt::format("{:.1f} {}", v, kUnits[u]);
}

// "m:ss", or "h:mm:ss" from an hour on.
std::string duration_text(std::int64_t seconds) {
  if (seconds >= 3600) return fmt::format("{}:{:02}:{:02}", seconds / 3600, seconds / 60 % 60, seconds % 60);
  return fmt::format("{}:{:02}", seconds / 60, seconds % 60);
}

// Event time in UTC, as SQL's TIMESTAMP(3) prints it.
std::string timestamp_text(std::int64_t ms) {
  std::time_t s = static_cast<std::time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return fmt::format("{}.{:03}", buf, ((ms % 1000) + 1000) % 1000);
}

std::size_t terminal_width() {
  winsize ws{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1) return ws.ws_col;
  return 80;
}

}  // namespace

std::string render_progress(const ProgressSample& s, std::size_t width) {
  const double seconds = static_cast<double>(s.elapsed.count()) / 1000.0;
  std::string line = "records " + grouped(s.records_read);
  if (seconds >= 1.0) line += " (" + grouped(static_cast<std::int64_t>(s.records_read / seconds)) + "/s)";
  if (s.bytes_total > 0 && s.bytes_read >= 0) {
    const std::int64_t read = std::min(s.bytes_read, s.bytes_total);
    line += fmt::format(" | files {} of {} {}%", bytes_text(read), bytes_text(s.bytes_total), read * 100 / s.bytes_total);
    if (read > 0 && read < s.bytes_total && seconds >= 1.0) {
      const double rate = static_cast<double>(read) / seconds;
      line += " ETA " + duration_text(static_cast<std::int64_t>(static_cast<double>(s.bytes_total - read) / rate + 0.5));
    }
  }
  if (s.watermark != std::numeric_limits<std::int64_t>::min() && s.watermark != std::numeric_limits<std::int64_t>::max())
    line += " | watermark " + timestamp_text(s.watermark);
  line += " | checkpoints " + grouped(s.checkpoints);
  if (s.failed_checkpoints > 0) line += " (" + grouped(s.failed_checkpoints) + " failed)";
  if (s.restarts > 0) line += " | restarts " + grouped(s.restarts);
  line += " | " + duration_text(s.elapsed.count() / 1000);
  if (line.size() > width) line.resize(width);
  return line;
}

ProgressSample sample_progress(const JobGraph& graph, const MetricRegistry& metrics, const CheckpointCounts& counts,
                               std::chrono::milliseconds elapsed) {
  ProgressSample s;
  std::set<std::string> sources;
  for (const auto& n : graph.nodes)
    if (n.num_inputs == 0) sources.insert(n.id);
  std::int64_t watermark = std::numeric_limits<std::int64_t>::max();
  bool any_input = false;
  for (const auto& m : metrics.snapshot()) {
    if (sources.count(m.operator_id)) {
      s.records_read += m.records_out;
      // File sources tell their pendingBytes: with the bytes they read, their files' total.
      if (m.pending_bytes >= 0) {
        s.bytes_read = std::max<std::int64_t>(s.bytes_read, 0) + m.bytes_in;
        s.bytes_total = std::max<std::int64_t>(s.bytes_total, 0) + m.bytes_in + m.pending_bytes;
      }
      continue;
    }
    any_input = true;
    watermark = std::min(watermark, m.input_watermark);
  }
  if (any_input) s.watermark = watermark;
  s.checkpoints = counts.completed;
  s.failed_checkpoints = counts.failed;
  s.restarts = counts.restarts;
  s.elapsed = elapsed;
  return s;
}

}  // namespace clink::cli

namespace clink::cli {

ProgressLine::ProgressLine(std::FILE* out) : out_(out), thread_([this] { run(); }) {
  // A log line clears the status line first; the next redraw puts it back below.
  log::set_stderr_prelude([this] {
    std::lock_guard lock(mu_);
    clear();
  });
}

ProgressLine::~ProgressLine() {
  log::set_stderr_prelude({});
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    clear();
  }
  cv_.notify_all();
  thread_.join();
}

void ProgressLine::watch(std::shared_ptr<const cluster::DispatchedJob> job) {
  std::lock_guard lock(mu_);
  clear();
  job_ = std::move(job);
  started_ = std::chrono::steady_clock::now();
}

void ProgressLine::clear() {
  if (!shown_) return;
  std::fputs("\r\x1b[K", out_);
  std::fflush(out_);
  shown_ = false;
}

void ProgressLine::run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, std::chrono::milliseconds(250));
    if (stopping_ || !job_) continue;
    const JobStatus status = job_->handle.status();
    if (status != JobStatus::kRunning && status != JobStatus::kCreated) {  // ended: the line goes
      clear();
      job_.reset();
      continue;
    }
    const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started_);
    std::string line = render_progress(
        sample_progress(job_->graph, job_->handle.metrics(), job_->handle.checkpoint_counts(), elapsed), terminal_width() - 1);
    std::fprintf(out_, "\r%s\x1b[K", line.c_str());
    std::fflush(out_);
    shown_ = true;
  }
}

}  // namespace clink::cli
