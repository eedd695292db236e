#pragma once
#include <functional>
#include <vector>

#include <nlohmann/json_fwd.hpp>
// The coordinator's REST API: Flink's paths and JSON field names (so Flink's CLI and
// users' scripts work against clink), with or without Flink's "/v1" prefix, plus
// clink's own submission endpoint:
//
//   POST /api/v1/jobs/spec   {"spec": <JobGraphSpec>, "options": {<Flink config key>: value, ...}}
//                            -> 202 {"jobid": "<32 hex>"}  (options: see SubmitOptions)
//
// Errors are Flink's: {"errors": ["..."]} with 404 for an unknown job, vertex or trigger
// id and 400 for a bad body or parameter.
#include <memory>
#include <string>

namespace clink::cluster {

class Dispatcher;

struct RestServerOptions {
  std::string address = "127.0.0.1";
  int port = 8081;  // 0: any free port (port() tells which)
  // POST /api/v1/jobs/sql {"script", "options"}: runs a SQL script on the coordinator
  // (its DDL into the coordinator's catalog, each INSERT or statement set submitted);
  // returns the job ids. Throws BadRequestError naming the statement's position. Unset:
  // the endpoint answers 404 (the planner lives above this layer).
  std::function<std::vector<std::string>(const std::string& script, const nlohmann::json& options)> run_sql;
};

class RestServer {
 public:
  RestServer(Dispatcher& dispatcher, RestServerOptions options);
  ~RestServer();  // stops
  RestServer(const RestServer&) = delete;
  RestServer& operator=(const RestServer&) = delete;

  // Binds and serves on a thread of its own; throws ClinkError naming the address when
  // it cannot bind.
  void start();
  void stop();
  int port() const;
  const std::string& address() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A small JSON-over-HTTP client for the coordinator's REST API (the `clink` client
// commands and tests).
struct RestResponse {
  int status = 0;    // 0: no connection
  std::string body;  // the response body (JSON)
  std::string error; // the transport error, when status is 0
};

class RestClient {
 public:
  // `host_port`: "HOST:PORT" (an "http://" prefix is allowed).
  explicit RestClient(const std::string& host_port);
  ~RestClient();
  RestClient(const RestClient&) = delete;
  RestClient& operator=(const RestClient&) = delete;

  RestResponse get(const std::string& path);
  RestResponse post(const std::string& path, const std::string& json_body);
  RestResponse patch(const std::string& path, const std::string& json_body = "{}");
  const std::string& host() const { return host_; }
  int port() const { return port_; }

 private:
  struct Impl;
  std::string host_;
  int port_ = 0;
  std::unique_ptr<Impl> impl_;
};

}  // namespace clink::cluster
