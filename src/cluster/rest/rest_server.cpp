// The REST routes: Flink's paths (with or without its "/v1" prefix, which Flink's own
// client sends) onto the Dispatcher, answered with rest_json's bodies.
#include "clink/cluster/rest/rest_server.hpp"

#include <algorithm>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>

#include "clink/cluster/rest/dispatcher.hpp"
#include "rest_json.hpp"
#include "web_ui.hpp"
#include "rest_metrics.hpp"

namespace clink::cluster {

using rest::json;

namespace {

constexpr const char* kJson = "application/json; charset=UTF-8";

void reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(), kJson);
}

void reply_error(httplib::Response& res, int status, const std::string& message) {
  reply(res, status, json{{"errors", json::array({message})}});
}

// Flink's JobID / JobVertexID / TriggerId: 32 hex digits (either case).
std::string hex_id(const std::string& text, const char* what) {
  bool ok = text.size() == 32 && std::all_of(text.begin(), text.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
  if (!ok) throw BadRequestError(fmt::format("Cannot resolve path parameter ({}) from value \"{}\".", what, text));
  std::string out = text;
  std::transform(out.begin(), out.end(), out.begin(), ::tolower);
  return out;
}

// A request body as a JSON object: empty means {} (Flink's client sends {} or nothing).
json body_object(const httplib::Request& req, const char* what) {
  if (std::all_of(req.body.begin(), req.body.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); }))
    return json::object();
  json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object())
    throw BadRequestError(fmt::format("Request did not match expected format {}: not a JSON object.", what));
  return body;
}

std::string string_field(const json& body, const char* key, const char* what) {
  if (!body.contains(key) || body[key].is_null()) return "";
  if (!body[key].is_string()) throw BadRequestError(fmt::format("Request did not match expected format {}: \"{}\" must be a string.", what, key));
  return body[key].get<std::string>();
}

bool bool_field(const json& body, const char* key, const char* what) {
  if (!body.contains(key) || body[key].is_null()) return false;
  if (!body[key].is_boolean()) throw BadRequestError(fmt::format("Request did not match expected format {}: \"{}\" must be true or false.", what, key));
  return body[key].get<bool>();
}

}  // namespace

struct RestServer::Impl {
  Dispatcher& dispatcher;
  RestServerOptions options;
  httplib::Server server;
  std::thread thread;
  int bound_port = 0;

  Impl(Dispatcher& d, RestServerOptions o) : dispatcher(d), options(std::move(o)) {
    // httplib's default also sets SO_REUSEPORT, which lets a second coordinator bind the
    // same port and take half the requests; a port in use must be an error.
    server.set_socket_options([](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });
  }

  // Registers `pattern` (a path regex without the version prefix) for GET/POST/PATCH.
  template <typename Fn>
  void route(const char* method, const std::string& pattern, Fn fn) {
    std::string full = "(?:/v1)?" + pattern;
    auto handler = [this, fn](const httplib::Request& req, httplib::Response& res) {
      try {
        fn(req, res);
      } catch (const NotFoundError& e) {
        reply_error(res, 404, e.what());
      } catch (const BadRequestError& e) {
        reply_error(res, 400, e.what());
      } catch (const std::exception& e) {
        reply_error(res, 500, e.what());
      }
    };
    std::string m = method;
    if (m == "GET") server.Get(full, handler);
    else if (m == "POST") server.Post(full, handler);
    else server.Patch(full, handler);
  }

  std::shared_ptr<DispatchedJob> job_of(const httplib::Request& req) {
    return dispatcher.job(hex_id(req.matches[1], "jobid"));
  }
  static std::int64_t checkpoint_id_of(const std::string& text) {
    try {
      std::size_t used = 0;
      std::int64_t id = std::stoll(text, &used);
      if (used == text.size()) return id;
    } catch (const std::exception&) {
    }
    throw BadRequestError(fmt::format("Cannot resolve path parameter (checkpointid) from value \"{}\".", text));
  }

  const JobVertex& vertex_of(const DispatchedJob& job, const httplib::Request& req) {
    std::string id = hex_id(req.matches[2], "vertexid");
    if (const JobVertex* v = job.vertex(id)) return *v;
    throw NotFoundError(fmt::format("JobVertex {} not found in job {}", id, job.id));
  }

  void add_routes();
};

void RestServer::Impl::add_routes() {
  const std::string job = "/jobs/([^/]+)";
  const std::string vertex = job + "/vertices/([^/]+)";
  Dispatcher& d = dispatcher;

  route("GET", "/overview", [&d](auto&, auto& res) { reply(res, 200, rest::cluster_overview(d)); });
  route("GET", "/config", [](auto&, auto& res) { reply(res, 200, rest::dashboard_config()); });
  route("GET", "/jobs", [&d](auto&, auto& res) { reply(res, 200, rest::job_ids(d)); });
  route("GET", "/jobs/overview", [&d](auto&, auto& res) { reply(res, 200, rest::jobs_overview(d)); });
  route("GET", "/taskmanagers", [&d](auto&, auto& res) { reply(res, 200, rest::task_managers(d)); });
  route("GET", "/jobmanager/config", [&d](auto&, auto& res) { reply(res, 200, rest::jobmanager_config(d)); });

  route("GET", job, [this](auto& req, auto& res) { reply(res, 200, rest::job_details(*job_of(req))); });
  route("PATCH", job, [this, &d](const httplib::Request& req, auto& res) {
    auto j = job_of(req);
    std::string mode = req.has_param("mode") ? req.get_param_value("mode") : "cancel";
    std::transform(mode.begin(), mode.end(), mode.begin(), ::tolower);
    if (mode != "cancel")
      throw BadRequestError(fmt::format("Termination mode '{}' is not supported; use mode=cancel, or POST /jobs/{}/stop", mode, j->id));
    d.cancel(j->id);
    reply(res, 202, json::object());
  });
  route("POST", job + "/stop", [this, &d](const httplib::Request& req, auto& res) {
    auto j = job_of(req);
    json body = body_object(req, "StopWithSavepointRequestBody");
    std::string dir = string_field(body, "targetDirectory", "StopWithSavepointRequestBody");
    bool drain = bool_field(body, "drain", "StopWithSavepointRequestBody");
    reply(res, 202, json{{"request-id", d.trigger_stop(j->id, dir, drain)}});
  });
  route("POST", job + "/savepoints", [this, &d](const httplib::Request& req, auto& res) {
    auto j = job_of(req);
    json body = body_object(req, "SavepointTriggerRequestBody");
    std::string dir = string_field(body, "target-directory", "SavepointTriggerRequestBody");
    bool cancel = bool_field(body, "cancel-job", "SavepointTriggerRequestBody");
    reply(res, 202, json{{"request-id", d.trigger_savepoint(j->id, dir, cancel)}});
  });
  route("GET", job + "/savepoints/([^/]+)", [this](const httplib::Request& req, auto& res) {
    auto j = job_of(req);
    std::string trigger = hex_id(req.matches[2], "triggerid");
    auto op = j->operation(trigger);
    if (!op) throw NotFoundError(fmt::format("There is no savepoint operation with triggerId={} for job {}.", trigger, j->id));
    reply(res, 200, rest::operation_status(*op));
  });
  route("GET", job + "/checkpoints", [this](auto& req, auto& res) { reply(res, 200, rest::checkpoint_statistics(*job_of(req))); });
  route("GET", job + "/checkpoints/config", [this](auto& req, auto& res) { reply(res, 200, rest::checkpoint_config(*job_of(req))); });
  route("GET", job + "/checkpoints/details/([^/]+)", [this](const httplib::Request& req, auto& res) {
    reply(res, 200, rest::checkpoint_details(*job_of(req), checkpoint_id_of(req.matches[2])));
  });
  route("GET", job + "/checkpoints/details/([^/]+)/subtasks/([^/]+)", [this](const httplib::Request& req, auto& res) {
    auto j = job_of(req);
    const std::int64_t id = checkpoint_id_of(req.matches[2]);
    const std::string vid = hex_id(req.matches[3], "vertexid");
    const JobVertex* v = j->vertex(vid);
    if (!v) throw NotFoundError(fmt::format("JobVertex {} not found in job {}", vid, j->id));
    reply(res, 200, rest::checkpoint_subtask_details(*j, id, *v));
  });
  // clink's own: a SQL job's statement and optimised plan.
  route("GET", job + "/sql", [this](auto& req, auto& res) {
    auto j = job_of(req);
    if (j->sql.empty()) throw NotFoundError(fmt::format("Job {} was not submitted as SQL", j->id));
    reply(res, 200, json{{"sql", j->sql}, {"plan", j->plan}});
  });
  route("GET", job + "/exceptions", [this](auto& req, auto& res) { reply(res, 200, rest::job_exceptions(*job_of(req))); });
  route("GET", job + "/plan", [this](auto& req, auto& res) { reply(res, 200, json{{"plan", rest::job_plan(*job_of(req))}}); });
  route("GET", vertex, [this, &d](auto& req, auto& res) {
    auto j = job_of(req);
    reply(res, 200, rest::vertex_details(d, *j, vertex_of(*j, req)));
  });
  route("GET", vertex + "/backpressure", [this](auto& req, auto& res) {
    auto j = job_of(req);
    reply(res, 200, rest::vertex_backpressure(*j, vertex_of(*j, req)));
  });
  route("GET", vertex + "/watermarks", [this](auto& req, auto& res) {
    auto j = job_of(req);
    reply(res, 200, rest::vertex_watermarks(*j, vertex_of(*j, req)));
  });
  route("GET", vertex + "/subtasks/metrics", [this](const httplib::Request& req, auto& res) {
    auto j = job_of(req);
    std::string get = req.has_param("get") ? req.get_param_value("get") : "";
    std::string agg = req.has_param("agg") ? req.get_param_value("agg") : "";
    reply(res, 200, rest::vertex_subtask_metrics(*j, vertex_of(*j, req), get, agg));
  });

  add_metric_routes(server, d);

  // clink's own: submit a JobGraphSpec.
  server.Post("/api/v1/jobs/spec", [&d](const httplib::Request& req, httplib::Response& res) {
    try {
      json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
      if (body.is_discarded() || !body.is_object() || !body.contains("spec"))
        throw BadRequestError("POST /api/v1/jobs/spec: expected a JSON object {\"spec\": {...}, \"options\": {...}}");
      SubmitOptions options = parse_submit_options(body.value("options", json()), d.configuration());
      reply(res, 202, json{{"jobid", d.submit(body["spec"], options)}});
    } catch (const BadRequestError& e) {
      reply_error(res, 400, e.what());
    } catch (const std::exception& e) {
      reply_error(res, 500, e.what());
    }
  });

  // clink's own: run a SQL script on the coordinator.
  if (options.run_sql)
    server.Post("/api/v1/jobs/sql", [run = options.run_sql](const httplib::Request& req, httplib::Response& res) {
      try {
        json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
        if (body.is_discarded() || !body.is_object() || !body.contains("script") || !body["script"].is_string())
          throw BadRequestError("POST /api/v1/jobs/sql: expected a JSON object {\"script\": \"...\", \"options\": {...}}");
        reply(res, 202, json{{"jobids", run(body["script"].get<std::string>(), body.value("options", json()))}});
      } catch (const BadRequestError& e) {
        reply_error(res, 400, e.what());
      } catch (const std::exception& e) {
        reply_error(res, 500, e.what());
      }
    });

  // The web UI's pages (web/, built into the binary): "/" and its files.
  add_web_ui_routes(server);

  // Anything else: Flink's answer for an unknown path.
  server.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 404) reply_error(res, 404, fmt::format("Unable to load requested file {}.", req.path));
    else reply_error(res, res.status, fmt::format("{} {}: HTTP {}", req.method, req.path, res.status));
  });
}

RestServer::RestServer(Dispatcher& dispatcher, RestServerOptions options)
    : impl_(std::make_unique<Impl>(dispatcher, std::move(options))) {
  impl_->add_routes();
}

RestServer::~RestServer() { stop(); }

void RestServer::start() {
  auto& s = impl_->server;
  const auto& o = impl_->options;
  int port = o.port;
  if (port == 0) {
    port = s.bind_to_any_port(o.address);
    if (port < 0) throw ClinkError(fmt::format("REST: cannot bind to {}:<any port>", o.address));
  } else if (!s.bind_to_port(o.address, port)) {
    throw ClinkError(fmt::format("REST: cannot bind to {}:{} (rest.address / rest.port): in use or not an address of this host",
                                 o.address, port));
  }
  impl_->bound_port = port;
  impl_->thread = std::thread([&s] { s.listen_after_bind(); });
}

void RestServer::stop() {
  if (!impl_ || !impl_->thread.joinable()) return;
  impl_->server.stop();
  impl_->thread.join();
}

int RestServer::port() const { return impl_->bound_port; }
const std::string& RestServer::address() const { return impl_->options.address; }

// ---- the client ----

struct RestClient::Impl {
  httplib::Client client;
  Impl(const std::string& host, int port) : client(host, port) {
    client.set_connection_timeout(5);
    client.set_read_timeout(120);
  }
};

RestClient::RestClient(const std::string& host_port) {
  std::string hp = host_port;
  if (hp.rfind("http://", 0) == 0) hp = hp.substr(7);
  while (!hp.empty() && hp.back() == '/') hp.pop_back();
  auto colon = hp.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == hp.size())
    throw ClinkError(fmt::format("--coordinator '{}': expected HOST:PORT", host_port));
  host_ = hp.substr(0, colon);
  try {
    std::size_t used = 0;
    port_ = std::stoi(hp.substr(colon + 1), &used);
    if (used != hp.size() - colon - 1 || port_ <= 0 || port_ > 65535) throw std::invalid_argument(hp);
  } catch (const std::exception&) {
    throw ClinkError(fmt::format("--coordinator '{}': the port is not a number in 1..65535", host_port));
  }
  impl_ = std::make_unique<Impl>(host_, port_);
}

RestClient::~RestClient() = default;

namespace {
RestResponse to_response(const httplib::Result& r) {
  RestResponse out;
  if (!r) {
    out.error = httplib::to_string(r.error());
    return out;
  }
  out.status = r->status;
  out.body = r->body;
  return out;
}
}  // namespace

RestResponse RestClient::get(const std::string& path) { return to_response(impl_->client.Get(path)); }
RestResponse RestClient::post(const std::string& path, const std::string& body) {
  return to_response(impl_->client.Post(path, body, "application/json"));
}
RestResponse RestClient::patch(const std::string& path, const std::string& body) {
  return to_response(impl_->client.Patch(path, body, "application/json"));
}

}  // namespace clink::cluster
