#pragma once
// The lookup join's lookup thread (Flink's async lookup runs its function off the task
// thread): it owns the LookupSource (its connection), takes the op's requests in order,
// one LookupSource::lookup() per request (every key a chunk of input rows missed), and
// hands back the rows or the failure. A failed lookup is retried up to 'lookup.max-retries'
// times after reset(), waiting 1 s longer before each further try, as Flink's
// JdbcRowDataLookupFunction.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "clink/connectors/sql/lookup_source.hpp"
#include "clink/sql/common/column_batch.hpp"

namespace clink::sql {

struct LookupRequest {
  std::uint64_t id = 0;
  std::unique_ptr<ColumnBatch> keys;  // distinct, no NULLs
};

struct LookupResponse {
  std::uint64_t id = 0;
  std::unique_ptr<ColumnBatch> rows;  // the source's row schema
  std::string error;                  // non-empty: the lookup failed for good
};

class LookupWorker {
 public:
  // `notify` runs on the worker thread after each response is ready (the op wakes its task).
  LookupWorker(std::unique_ptr<LookupSource> source, SchemaPtr row_schema, int max_retries, std::string what,
               std::function<void()> notify);
  ~LookupWorker();  // stops and joins the thread, closes the source
  LookupWorker(const LookupWorker&) = delete;
  LookupWorker& operator=(const LookupWorker&) = delete;

  void submit(LookupRequest request);
  // Moves the responses ready so far into `out` (appending); none: returns false.
  bool take(std::vector<LookupResponse>& out);
  // Waits until a response is ready or `deadline` passes.
  void wait(std::chrono::steady_clock::time_point deadline);
  std::int64_t lookups() const { return lookups_; }  // requests answered (for metrics)
  std::int64_t retries() const { return retries_; }

 private:
  void run();
  LookupResponse answer(LookupRequest& request);
  // Sleeps `ms` unless stopped; false when stopped.
  bool pause(std::int64_t ms);

  std::unique_ptr<LookupSource> source_;
  SchemaPtr row_schema_;
  int max_retries_;
  std::string what_;
  std::function<void()> notify_;
  bool opened_ = false;

  std::mutex mu_;
  std::condition_variable work_cv_;  // the worker waits for requests
  std::condition_variable done_cv_;  // the op waits for responses
  std::deque<LookupRequest> requests_;
  std::vector<LookupResponse> responses_;
  bool stop_ = false;
  std::atomic<std::int64_t> lookups_{0};
  std::atomic<std::int64_t> retries_{0};
  std::thread thread_;
};

}  // namespace clink::sql
