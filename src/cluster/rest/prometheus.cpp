// The exposition of Flink's PrometheusReporter (flink-metrics-prometheus): a metric's name
// is "flink_" + its logical scope + "_" + its name, with every character outside
// [a-zA-Z0-9:_] replaced by '_'; its labels are the scope's variables without the angle
// brackets (job_id, job_name, task_id, task_name, subtask_index, operator_id,
// operator_name, tm_id, host, ...), their values filtered the same way; every metric is a
// gauge (Flink's counters may go down), HELP "<name> (scope: <logical scope>)", values as
// Java prints doubles. Checked against a Flink 2.3 cluster's reporters.
#include "clink/cluster/rest/prometheus.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <httplib.h>

#include "clink/cluster/rest/dispatcher.hpp"
#include "clink/core/error.hpp"
#include "clink/metrics/sql_metrics.hpp"
#include "job_metrics.hpp"

namespace clink::cluster {

namespace {

using metrics::MetricValue;
using Labels = std::vector<std::pair<std::string, std::string>>;

std::string filtered(const std::string& text) {
  std::string out = text;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != ':' && c != '_') c = '_';
  return out;
}

std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::abs(v) < 1e15) return fmt::format("{:.1f}", v);
  return fmt::format("{}", v);
}

// The families of one scrape, each with its HELP / TYPE lines once and its samples.
class Exposition {
 public:
  void add(const std::string& scope, const MetricValue& m, const Labels& labels) {
    if (m.kind == MetricValue::Kind::kString) return;  // not a number: Flink's reporter leaves it out
    // User-scope groups ("deadLetters.parse-error", "KafkaSourceReader.KafkaConsumer.
    // records-lag-max") extend the logical scope, one '_'-joined component each.
    std::string group_scope = scope, short_name = m.name;
    if (auto dot = m.name.rfind('.'); dot != std::string::npos) {
      std::string groups = m.name.substr(0, dot);
      std::replace(groups.begin(), groups.end(), '.', '_');
      group_scope += "_" + groups;
      short_name = m.name.substr(dot + 1);
    }
    std::string name = filtered("flink_" + group_scope + "_" + short_name);
    auto [it, fresh] = index_.try_emplace(name, families_.size());
    if (fresh) families_.push_back({name, fmt::format("{} (scope: {})", short_name, group_scope), "gauge", {}});
    families_[it->second].samples.push_back(sample(name, labels, m.number()));
  }
  void add_raw(const std::string& name, const char* type, const std::string& help, double value) {
    families_.push_back({name, help, type, {sample(name, {}, value)}});
  }
  std::string text() const {
    std::string out;
    for (const auto& f : families_) {
      out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", f.name, f.help, f.name, f.type);
      for (const auto& s : f.samples) out += s;
    }
    return out;
  }

 private:
  static std::string sample(const std::string& name, const Labels& labels, double value) {
    std::string out = name;
    if (!labels.empty()) {
      out += '{';
      for (const auto& [k, v] : labels) out += fmt::format("{}=\"{}\",", k, filtered(v));
      out += '}';
    }
    return out + " " + number(value) + "\n";
  }
  struct Family {
    std::string name, help, type;
    std::vector<std::string> samples;
  };
  std::vector<Family> families_;
  std::map<std::string, std::size_t> index_;
};

std::string hostname() {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  return host;
}

void add_sql_counters(Exposition& e) {
  auto& c = clink::metrics::sql::counters();
  // The runs and failures are counters (named *_total); the summed duration keeps the
  // seed's name without _total, so it is a gauge (a counter must end in _total).
  auto stage = [&](const char* name, const char* plural, const clink::metrics::sql::Stage& s) {
    e.add_raw(fmt::format("clink_sql_{}_total", plural), "counter", fmt::format("runs of the SQL {} stage", name),
              static_cast<double>(s.total.load(std::memory_order_relaxed)));
    e.add_raw(fmt::format("clink_sql_{}_errors_total", name), "counter",
              fmt::format("runs of the SQL {} stage that failed", name),
              static_cast<double>(s.errors.load(std::memory_order_relaxed)));
    e.add_raw(fmt::format("clink_sql_{}_duration_ns", name), "gauge",
              fmt::format("nanoseconds spent in the SQL {} stage, summed over its runs", name),
              static_cast<double>(s.duration_ns.load(std::memory_order_relaxed)));
  };
  stage("parse", "parses", c.parse);
  stage("bind", "binds", c.bind);
  stage("optimize", "optimizes", c.optimize);
  stage("physical_plan", "physical_plans", c.physical_plan);
}

int parse_port(const std::string& text, const std::string& whole) {
  try {
    std::size_t used = 0;
    int p = std::stoi(text, &used);
    if (used == text.size() && p >= 0 && p <= 65535) return p;
  } catch (const std::exception&) {
  }
  throw ClinkError(fmt::format("metrics.reporter.prom.port: '{}' is not a port (0..65535) or a range of ports (9250-9260)",
                               whole));
}

}  // namespace

std::optional<PrometheusOptions> prometheus_options(const std::map<std::string, std::string>& config) {
  auto port = config.find("metrics.reporter.prom.port");
  if (port == config.end()) return std::nullopt;
  PrometheusOptions o;
  const std::string& p = port->second;
  if (auto dash = p.find('-'); dash != std::string::npos) {
    o.first_port = parse_port(p.substr(0, dash), p);
    o.last_port = parse_port(p.substr(dash + 1), p);
    if (o.last_port < o.first_port) parse_port("", p);
  } else {
    o.first_port = o.last_port = parse_port(p, p);
  }
  if (auto host = config.find("metrics.reporter.prom.host"); host != config.end() && !host->second.empty())
    o.host = host->second;
  return o;
}

std::string prometheus_text(const Dispatcher& d) {
  Exposition e;
  const std::string host = hostname();
  const std::int64_t now = now_ms();
  for (const auto& v : metrics::jobmanager_level(d)) e.add("jobmanager", v, {{"host", host}});
  for (const auto& job : d.jobs()) {
    if (job->terminal()) continue;  // as in Flink, an ended job's metrics are gone
    Labels job_labels = {{"job_id", job->id}, {"job_name", job->name}, {"host", host}};
    auto m = metrics::collect(*job, now);
    for (const auto& v : m.job) e.add("jobmanager_job", v, job_labels);
    std::int64_t attempt = job->handle.checkpoint_counts().restarts;
    for (const auto& s : m.subtasks) {
      const SubtaskLocation at = d.subtask_location(*job, s.subtask);  // the worker running it
      Labels task = {{"job_id", job->id},
                     {"job_name", job->name},
                     {"task_id", s.vertex->id},
                     {"task_name", s.vertex->name},
                     {"task_attempt_id", fmt::format("{}_{}_{}_{}", job->id, s.vertex->id, s.subtask, attempt)},
                     {"task_attempt_num", std::to_string(attempt)},
                     {"subtask_index", std::to_string(s.subtask)},
                     {"tm_id", at.tm_id},
                     {"host", at.host.empty() ? host : at.host}};
      for (const auto& v : s.task) e.add("taskmanager_job_task", v, task);
      for (const auto& op : s.operators) {
        Labels labels = task;
        labels.emplace_back("operator_id", op.id);
        labels.emplace_back("operator_name", op.name);
        for (const auto& v : op.values) e.add("taskmanager_job_task_operator", v, labels);
      }
    }
  }
  add_sql_counters(e);
  return e.text();
}

struct PrometheusServer::Impl {
  const Dispatcher& dispatcher;
  PrometheusOptions options;
  httplib::Server server;
  std::thread thread;
  int bound_port = 0;
  Impl(const Dispatcher& d, PrometheusOptions o) : dispatcher(d), options(std::move(o)) {}
};

PrometheusServer::PrometheusServer(const Dispatcher& dispatcher, PrometheusOptions options)
    : impl_(std::make_unique<Impl>(dispatcher, std::move(options))) {
  auto& d = impl_->dispatcher;
  impl_->server.Get("/metrics", [&d](const httplib::Request&, httplib::Response& res) {
    res.set_content(prometheus_text(d), "text/plain; version=0.0.4; charset=utf-8");
  });
  // A port in use must be an error (httplib's default SO_REUSEPORT would share it).
  impl_->server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
}

PrometheusServer::~PrometheusServer() { stop(); }

void PrometheusServer::start() {
  auto& o = impl_->options;
  auto& s = impl_->server;
  int port = -1;
  if (o.first_port == 0) {
    port = s.bind_to_any_port(o.host);
  } else {
    for (int p = o.first_port; p <= o.last_port && port < 0; ++p)
      if (s.bind_to_port(o.host, p)) port = p;
  }
  if (port < 0)
    throw ClinkError(fmt::format("Prometheus reporter: cannot bind {}:{} (metrics.reporter.prom.host / .port): in use or "
                                 "not an address of this host",
                                 o.host, o.first_port == o.last_port ? std::to_string(o.first_port)
                                                                     : fmt::format("{}-{}", o.first_port, o.last_port)));
  impl_->bound_port = port;
  impl_->thread = std::thread([&s] { s.listen_after_bind(); });
}

void PrometheusServer::stop() {
  if (!impl_ || !impl_->thread.joinable()) return;
  // httplib's stop() does nothing before the listening thread has started; a stop right
  // after start() would then wait for a server nobody stops. Give it a moment to start.
  for (int i = 0; i < 1000 && !impl_->server.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  impl_->server.stop();
  impl_->thread.join();
}

int PrometheusServer::port() const { return impl_->bound_port; }
const std::string& PrometheusServer::host() const { return impl_->options.host; }

}  // namespace clink::cluster
