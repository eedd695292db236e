// Flink's metric routes: without ?get the metric names ([{"id"}]), with ?get=a,b the
// values of those that exist ([{"id","value"}], values as strings, unknown names left
// out), as Flink's MetricStore answers. Vertex metric ids are Flink's
// "<subtask>.<metric>" (task scope) and "<subtask>.<operator name>.<metric>".
#include "rest_metrics.hpp"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>
#include <httplib.h>

#include "clink/cluster/rest/dispatcher.hpp"
#include "job_metrics.hpp"
#include "rest_json.hpp"

namespace clink::cluster {

namespace {

using rest::json;
using metrics::MetricValue;

using Listing = std::vector<std::pair<std::string, std::string>>;  // (id, value)

json answer(const Listing& all, const httplib::Request& req) {
  json out = json::array();
  if (!req.has_param("get")) {
    for (const auto& [id, v] : all) out.push_back({{"id", id}});
    return out;
  }
  std::map<std::string, const std::string*> by_id;
  for (const auto& [id, v] : all) by_id[id] = &v;
  std::stringstream names(req.get_param_value("get"));
  for (std::string name; std::getline(names, name, ',');) {
    auto it = by_id.find(name);
    if (it != by_id.end()) out.push_back({{"id", name}, {"value", *it->second}});
  }
  return out;
}

void add(Listing& out, const std::string& prefix, const std::vector<MetricValue>& values) {
  for (const auto& v : values) out.emplace_back(prefix + v.name, v.text());
}

std::string lower_id(const std::string& text, const char* what) {
  bool ok = text.size() == 32 &&
            std::all_of(text.begin(), text.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
  if (!ok) throw BadRequestError(fmt::format("Cannot resolve path parameter ({}) from value \"{}\".", what, text));
  std::string out = text;
  std::transform(out.begin(), out.end(), out.begin(), ::tolower);
  return out;
}

template <typename Fn>
void get(httplib::Server& server, const std::string& pattern, Fn fn) {
  server.Get("(?:/v1)?" + pattern, [fn](const httplib::Request& req, httplib::Response& res) {
    int status = 200;
    json body;
    try {
      body = fn(req);
    } catch (const NotFoundError& e) {
      status = 404;
      body = json{{"errors", json::array({e.what()})}};
    } catch (const BadRequestError& e) {
      status = 400;
      body = json{{"errors", json::array({e.what()})}};
    } catch (const std::exception& e) {
      status = 500;
      body = json{{"errors", json::array({e.what()})}};
    }
    res.status = status;
    res.set_content(body.dump(), "application/json; charset=UTF-8");
  });
}

}  // namespace

void add_metric_routes(httplib::Server& server, Dispatcher& d) {
  const std::string job = "/jobs/([^/]+)";
  get(server, job + "/vertices/([^/]+)/metrics", [&d](const httplib::Request& req) {
    auto j = d.job(lower_id(req.matches[1], "jobid"));
    std::string vid = lower_id(req.matches[2], "vertexid");
    const JobVertex* v = j->vertex(vid);
    if (!v) throw NotFoundError(fmt::format("JobVertex {} not found in job {}", vid, j->id));
    Listing all;
    for (const auto& s : metrics::vertex_level(*j, *v, now_ms())) {
      std::string index = std::to_string(s.subtask) + ".";
      add(all, index, s.task);
      for (const auto& op : s.operators) add(all, index + metrics::rest_component(op.name) + ".", op.values);
    }
    return answer(all, req);
  });
  get(server, job + "/metrics", [&d](const httplib::Request& req) {
    auto j = d.job(lower_id(req.matches[1], "jobid"));
    Listing all;
    add(all, "", metrics::job_level(*j, now_ms()));
    return answer(all, req);
  });
  get(server, "/jobmanager/metrics", [&d](const httplib::Request& req) {
    Listing all;
    add(all, "", metrics::jobmanager_level(d));
    return answer(all, req);
  });
  // A worker's own metrics: Flink's are its JVM's and network buffers' (Status.JVM.*,
  // Status.Shuffle.*), which a clink worker does not have; its tasks' metrics are under
  // the job's vertices. So a known worker lists none.
  get(server, "/taskmanagers/([^/]+)/metrics", [&d](const httplib::Request& req) {
    std::string id = req.matches[1];
    for (const auto& tm : d.task_managers())
      if (tm.id == id) return answer({}, req);
    throw NotFoundError(fmt::format("TaskManager {} does not exist.", id));
  });
}

}  // namespace clink::cluster
