#pragma once
// The options every model provider reads from a model's WITH options (and ML_PREDICT's
// config map): the seed's spellings (max_batch_size, on_error, max_retries,
// retry_backoff_ms) and the Flink-style dashed ones (max-batch-size, ...) are the same.
#include <cstdint>
#include <optional>
#include <string>

#include "clink/sql/spec/connector_table.hpp"

namespace clink::sql::ml {

// The value of `key`, also looked up with '_' for '-' (and the other way round).
std::optional<std::string> model_option(const ConnectorOptions& options, const std::string& key);
// A non-negative integer option; throws ClinkError naming the model, the key and the value.
std::int64_t int_option(const ConnectorOptions& options, const std::string& model, const std::string& key,
                        std::int64_t fallback, std::int64_t min);
// A duration ('100ms', '5s', or plain milliseconds).
std::int64_t duration_option(const ConnectorOptions& options, const std::string& model, const std::string& key,
                             std::int64_t fallback_ms);

struct RetryPolicy {
  int max_retries = 3;              // max-retries: tries after the first, on transient failures
  std::int64_t backoff_ms = 100;    // retry-backoff: the first wait, doubled each try (capped at 10 s)
};
RetryPolicy retry_policy(const ConnectorOptions& options, const std::string& model);

}  // namespace clink::sql::ml
