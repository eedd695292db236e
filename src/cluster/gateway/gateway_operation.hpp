#pragma once
// One statement of a gateway session (Flink's Operation): run on a thread of its own, its
// status, and its result served page by page. Result tokens as Flink's ResultStore: the
// page of token N can be fetched again until token N+1 is asked for (a client retrying
// a lost response gets the same rows); a page is NOT_READY while the statement still
// runs, PAYLOAD (possibly empty while a query's job has no new rows), then EOS.
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "clink/cluster/gateway/sql_gateway.hpp"
#include "gateway_json.hpp"

namespace clink::cluster::gateway {

// An error the REST layer answers with Flink's shape and this status.
class GatewayError : public std::runtime_error {
 public:
  GatewayError(int status, std::string message) : std::runtime_error(std::move(message)), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

class Operation {
 public:
  enum class Status { kRunning, kFinished, kError, kCanceled, kClosed };

  // Starts `work` on the operation's thread.
  Operation(std::string id, std::function<StatementOutcome()> work);
  ~Operation();  // closes
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;

  const std::string& id() const { return id_; }
  Status status();
  void cancel();
  void close();

  struct Page {
    json body;            // without nextResultUri
    bool has_next = true; // false: EOS
    bool not_ready = false;
  };
  // The page of `token`; throws GatewayError for a token out of order, an operation
  // that failed (its error) or was cancelled.
  Page fetch(long token, RowFormat format, int max_rows);

 private:
  Page next_page(RowFormat format, int max_rows);  // with mu_ held
  json result_header(const char* result_type) const;

  std::string id_;
  std::mutex mu_;
  Status status_ = Status::kRunning;
  std::string error_;
  StatementOutcome outcome_;
  std::vector<sql::LogicalType> types_;
  std::deque<ResultRow> pending_;  // a query's rows not yet served
  bool table_served_ = false;      // kOk / kTable / kJob: its one page went out
  long last_token_ = -1;
  std::optional<Page> last_page_;
  std::thread thread_;
};

const char* status_name(Operation::Status status);

}  // namespace clink::cluster::gateway
