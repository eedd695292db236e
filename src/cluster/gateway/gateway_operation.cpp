#include "gateway_operation.hpp"

#include <fmt/format.h>

namespace clink::cluster::gateway {

const char* status_name(Operation::Status s) {
  switch (s) {
    case Operation::Status::kRunning: return "RUNNING";
    case Operation::Status::kFinished: return "FINISHED";
    case Operation::Status::kError: return "ERROR";
    case Operation::Status::kCanceled: return "CANCELED";
    case Operation::Status::kClosed: return "CLOSED";
  }
  return "ERROR";
}

Operation::Operation(std::string id, std::function<StatementOutcome()> work) : id_(std::move(id)) {
  thread_ = std::thread([this, work = std::move(work)] {
    StatementOutcome outcome;
    std::string error;
    bool failed = false;
    try {
      outcome = work();
    } catch (const std::exception& e) {
      failed = true;
      error = e.what();
    }
    if (!failed && outcome.kind == StatementOutcome::Kind::kOk) {  // Flink's one "OK" row
      outcome.columns = {{"result", "STRING"}};
      outcome.rows = {{sql::RowKind::kInsert, {std::string("OK")}}};
    }
    std::vector<sql::LogicalType> types;
    if (!failed) try {
        for (const auto& c : outcome.columns) types.push_back(sql::parse_logical_type(c.type));
      } catch (const std::exception& e) {
        failed = true;
        error = fmt::format("a result column's type: {}", e.what());
      }
    std::shared_ptr<QueryRows> orphan;
    {
      std::lock_guard lock(mu_);
      if (status_ != Status::kRunning) {  // cancelled or closed while it ran
        orphan = outcome.query;
      } else if (failed) {
        status_ = Status::kError;
        error_ = std::move(error);
      } else {
        status_ = Status::kFinished;
        outcome_ = std::move(outcome);
        types_ = std::move(types);
      }
    }
    if (orphan) orphan->cancel();
  });
}

Operation::~Operation() {
  close();
  if (thread_.joinable()) thread_.join();
}

Operation::Status Operation::status() {
  std::lock_guard lock(mu_);
  return status_;
}

void Operation::cancel() {
  std::shared_ptr<QueryRows> query;
  {
    std::lock_guard lock(mu_);
    if (status_ == Status::kClosed || status_ == Status::kError)
      throw GatewayError(500, fmt::format("Failed to cancelOperation: operation {} is {}.", id_, status_name(status_)));
    status_ = Status::kCanceled;
    query = outcome_.query;
  }
  if (query) query->cancel();
}

void Operation::close() {
  std::shared_ptr<QueryRows> query;
  {
    std::lock_guard lock(mu_);
    status_ = Status::kClosed;
    query = std::move(outcome_.query);
  }
  if (query) query->cancel();
}

json Operation::result_header(const char* result_type) const {
  json j;
  j["resultType"] = result_type;
  j["isQueryResult"] = outcome_.kind == StatementOutcome::Kind::kQuery;
  if (!outcome_.job_id.empty()) j["jobID"] = outcome_.job_id;
  j["resultKind"] = outcome_.kind == StatementOutcome::Kind::kOk ? "SUCCESS" : "SUCCESS_WITH_CONTENT";
  return j;
}

Operation::Page Operation::next_page(RowFormat format, int max_rows) {
  using Kind = StatementOutcome::Kind;
  std::vector<ResultRow> rows;
  bool eos = false;
  if (outcome_.kind != Kind::kQuery) {
    if (!table_served_) {
      rows = outcome_.rows;
      table_served_ = true;
    }
    eos = rows.empty();
  } else {
    for (auto& r : outcome_.query->take()) pending_.push_back(std::move(r));
    // A job's end is read before its last rows are: rows taken after finished() said
    // true would be lost otherwise.
    bool finished = pending_.empty() && outcome_.query->finished();
    if (finished) for (auto& r : outcome_.query->take()) pending_.push_back(std::move(r));
    while (!pending_.empty() && static_cast<int>(rows.size()) < max_rows) {
      rows.push_back(std::move(pending_.front()));
      pending_.pop_front();
    }
    eos = finished && rows.empty() && pending_.empty();
  }
  Page page;
  page.has_next = !eos;
  page.body = result_header(eos ? "EOS" : "PAYLOAD");
  json data = json::array();
  for (const auto& r : rows) data.push_back(row_json(r, types_, format));
  page.body["results"] = {{"columns", columns_json(outcome_.columns)}, {"rowFormat", row_format_name(format)}, {"data", std::move(data)}};
  return page;
}

Operation::Page Operation::fetch(long token, RowFormat format, int max_rows) {
  std::lock_guard lock(mu_);
  switch (status_) {
    case Status::kRunning: {
      Page p;
      p.not_ready = true;
      p.body = json{{"resultType", "NOT_READY"}};
      return p;
    }
    case Status::kError: throw GatewayError(500, error_);
    case Status::kCanceled:
    case Status::kClosed:
      throw GatewayError(500, fmt::format("Can not fetch results from the {} operation {}.",
                                          status_ == Status::kCanceled ? "canceled" : "closed", id_));
    case Status::kFinished: break;
  }
  if (last_page_ && token == last_token_) return *last_page_;
  if (token != last_token_ + 1)
    throw GatewayError(500, fmt::format("Expecting token {} for operation {}, but found {}.", last_token_ + 1, id_, token));
  try {
    last_page_ = next_page(format, max_rows);
  } catch (const std::exception& e) {  // the query's job failed
    status_ = Status::kError;
    error_ = e.what();
    throw GatewayError(500, error_);
  }
  last_token_ = token;
  return *last_page_;
}

}  // namespace clink::cluster::gateway
