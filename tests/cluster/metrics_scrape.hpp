#pragma once
// What the metric tests read from a coordinator or `clink run`: a free port, a Prometheus
// scrape parsed by prometheus_client's parser (tests/cluster/prometheus_scrape.py, run
// with the venv of tests/flink/setup), and a vertex's metric values over REST.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "coordinator_process.hpp"

namespace clink::test {

// A port free right now on the loopback interface.
inline int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t n = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
  int port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

// One sample of a scrape, as prometheus_client's parser read it.
struct Sample {
  std::string family, type, help, name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// The Python of the venv tests/flink/setup makes (it has prometheus_client).
inline std::string venv_python() {
  const char* venv = std::getenv("CLINK_FLINK_VENV");
  const char* home = std::getenv("HOME");
  fs::path root = venv ? venv : fs::path(home ? home : "/root") / ".cache/clink/flink-venv";
  return (root / "bin/python").string();
}

// Whether the venv has prometheus_client (tests/flink/setup installs it).
inline bool have_parser(const fs::path& scratch) {
  return run_command("'" + venv_python() + "' -c 'import prometheus_client.parser'", scratch).exit_code == 0;
}

// Scrapes `url` through prometheus_scrape.py; fails the test when it does not parse.
inline std::vector<Sample> scrape(const std::string& url, const fs::path& scratch) {
  auto r = run_command("'" + venv_python() + "' '" + std::string(CLINK_SOURCE_DIR) +
                           "/tests/cluster/prometheus_scrape.py' '" + url + "'",
                       scratch);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<Sample> out;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    Sample s{j["family"], j["type"], j["help"], j["name"], {}, 0};
    for (auto& [k, v] : j["labels"].items()) s.labels[k] = v.get<std::string>();
    s.value = j["value"].is_string() ? std::nan("") : j["value"].get<double>();
    out.push_back(std::move(s));
  }
  return out;
}

// The samples named `name` whose labels include `match`.
inline std::vector<Sample> find(const std::vector<Sample>& samples, const std::string& name,
                         const std::map<std::string, std::string>& match = {}) {
  std::vector<Sample> out;
  for (const auto& s : samples) {
    if (s.name != name) continue;
    bool ok = true;
    for (const auto& [k, v] : match) ok &= s.labels.count(k) && s.labels.at(k) == v;
    if (ok) out.push_back(s);
  }
  return out;
}

// A vertex's metric values by id (GET .../metrics?get=...), parsed as numbers.
inline std::map<std::string, double> vertex_values(CoordinatorProcess& c, const std::string& job, const std::string& vid,
                                            const std::vector<std::string>& ids) {
  std::string get;
  for (const auto& id : ids) get += (get.empty() ? "" : ",") + id;
  auto r = c.get("/jobs/" + job + "/vertices/" + vid + "/metrics?get=" + get);
  EXPECT_EQ(r.status, 200) << r.body.dump();
  std::map<std::string, double> out;
  for (const auto& m : r.body) out[m["id"].get<std::string>()] = std::stod(m["value"].get<std::string>());
  return out;
}

}  // namespace clink::test
