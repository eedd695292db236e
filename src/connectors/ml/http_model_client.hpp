#pragma once
// POSTs of JSON to a model server (the 'http' and 'openai' providers): a pool of
// keep-alive connections (a call leases one, so concurrent calls each have their own and
// a connection is reused across calls instead of a handshake per request), and retries
// of transient failures (no response, 5xx, 429) with exponential backoff. Other statuses
// fail at once: a 400 does not get better by asking again.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "model_options.hpp"

namespace httplib {
class Client;
}

namespace clink::sql::ml {

class HttpModelClient {
 public:
  // `url`: http[s]://host[:port]/path; throws ClinkError naming the model for a bad one.
  HttpModelClient(std::string model, const std::string& url, std::vector<std::pair<std::string, std::string>> headers,
                  RetryPolicy retry, std::int64_t timeout_ms);
  ~HttpModelClient();
  HttpModelClient(const HttpModelClient&) = delete;
  HttpModelClient& operator=(const HttpModelClient&) = delete;

  // The body of a 2xx response; throws ClinkError once the tries are spent.
  std::string post(const std::string& body);
  const std::string& path() const { return path_; }
  std::int64_t retries() const;

 private:
  std::unique_ptr<httplib::Client> lease();
  void give_back(std::unique_ptr<httplib::Client> c);

  std::string model_;
  std::string base_;  // scheme://host:port
  std::string path_;
  std::vector<std::pair<std::string, std::string>> headers_;
  RetryPolicy retry_;
  std::int64_t timeout_ms_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<httplib::Client>> idle_;
  std::int64_t retries_ = 0;
};

}  // namespace clink::sql::ml
