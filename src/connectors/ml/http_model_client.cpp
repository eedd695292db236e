#include "http_model_client.hpp"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "clink/core/error.hpp"

namespace clink::sql::ml {

HttpModelClient::HttpModelClient(std::string model, const std::string& url,
                                 std::vector<std::pair<std::string, std::string>> headers, RetryPolicy retry,
                                 std::int64_t timeout_ms)
    : model_(std::move(model)), headers_(std::move(headers)), retry_(retry), timeout_ms_(timeout_ms) {
  const std::size_t scheme = url.find("://");
  if (scheme == std::string::npos || (url.compare(0, scheme, "http") != 0 && url.compare(0, scheme, "https") != 0))
    throw ClinkError("model `" + model_ + "`: 'endpoint' must be an http:// or https:// URL, got '" + url + "'");
  const std::size_t slash = url.find('/', scheme + 3);
  base_ = url.substr(0, slash);
  path_ = slash == std::string::npos ? "/" : url.substr(slash);
  if (base_.size() <= scheme + 3) throw ClinkError("model `" + model_ + "`: 'endpoint' has no host: '" + url + "'");
}

HttpModelClient::~HttpModelClient() = default;

std::int64_t HttpModelClient::retries() const {
  std::lock_guard lock(mu_);
  return retries_;
}

std::unique_ptr<httplib::Client> HttpModelClient::lease() {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      return c;
    }
  }
  auto c = std::make_unique<httplib::Client>(base_);
  c->set_keep_alive(true);
  const auto t = std::chrono::milliseconds(timeout_ms_);
  c->set_connection_timeout(std::chrono::duration_cast<std::chrono::seconds>(t).count(),
                            static_cast<time_t>((timeout_ms_ % 1000) * 1000));
  c->set_read_timeout(std::chrono::duration_cast<std::chrono::seconds>(t).count(),
                      static_cast<time_t>((timeout_ms_ % 1000) * 1000));
  c->set_write_timeout(std::chrono::duration_cast<std::chrono::seconds>(t).count(),
                       static_cast<time_t>((timeout_ms_ % 1000) * 1000));
  return c;
}

void HttpModelClient::give_back(std::unique_ptr<httplib::Client> c) {
  std::lock_guard lock(mu_);
  idle_.push_back(std::move(c));
}

std::string HttpModelClient::post(const std::string& body) {
  httplib::Headers headers;
  for (const auto& [k, v] : headers_) headers.emplace(k, v);
  std::int64_t wait_ms = retry_.backoff_ms;
  std::string last;
  for (int attempt = 0;; ++attempt) {
    auto client = lease();
    auto res = client->Post(path_, headers, body, "application/json");
    bool transient = false;
    if (!res) {
      last = "no response from " + base_ + path_ + " (" + httplib::to_string(res.error()) + ")";
      transient = true;
      // A broken keep-alive connection is not reused.
    } else {
      const int status = res->status;
      if (status >= 200 && status < 300) {
        std::string out = std::move(res->body);
        give_back(std::move(client));
        return out;
      }
      last = "HTTP " + std::to_string(status) + " from " + base_ + path_ + ": " + res->body.substr(0, 200);
      transient = status >= 500 || status == 429;
      give_back(std::move(client));
    }
    if (!transient || attempt >= retry_.max_retries)
      throw ClinkError("model `" + model_ + "`: " + last +
                       (transient ? " (after " + std::to_string(attempt + 1) + " tries)" : ""));
    {
      std::lock_guard lock(mu_);
      ++retries_;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    wait_ms = std::min<std::int64_t>(wait_ms * 2, 10'000);
  }
}

}  // namespace clink::sql::ml
