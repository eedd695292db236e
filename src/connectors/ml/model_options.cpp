#include "model_options.hpp"

#include <algorithm>

#include "clink/core/duration.hpp"
#include "clink/core/error.hpp"

namespace clink::sql::ml {

std::optional<std::string> model_option(const ConnectorOptions& options, const std::string& key) {
  std::string dashed = key, underscored = key;
  std::replace(dashed.begin(), dashed.end(), '_', '-');
  std::replace(underscored.begin(), underscored.end(), '-', '_');
  std::optional<std::string> out;
  for (const auto& [k, v] : options)  // the last one written wins (the config map after the model's)
    if (k == dashed || k == underscored) out = v;
  return out;
}

std::int64_t int_option(const ConnectorOptions& options, const std::string& model, const std::string& key,
                        std::int64_t fallback, std::int64_t min) {
  auto v = model_option(options, key);
  if (!v) return fallback;
  std::int64_t n = 0;
  std::size_t used = 0;
  try {
    n = std::stoll(*v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != v->size() || n < min)
    throw ClinkError("model `" + model + "`: option '" + key + "' must be an integer >= " + std::to_string(min) +
                     ", got '" + *v + "'");
  return n;
}

std::int64_t duration_option(const ConnectorOptions& options, const std::string& model, const std::string& key,
                             std::int64_t fallback_ms) {
  auto v = model_option(options, key);
  if (!v) return fallback_ms;
  auto ms = parse_duration_ms(*v);
  if (!ms || *ms < 0)
    throw ClinkError("model `" + model + "`: option '" + key + "' must be a duration such as '100ms' or '5s', got '" +
                     *v + "'");
  return *ms;
}

RetryPolicy retry_policy(const ConnectorOptions& options, const std::string& model) {
  RetryPolicy p;
  p.max_retries = static_cast<int>(int_option(options, model, "max-retries", 3, 0));
  p.backoff_ms = duration_option(options, model, "retry-backoff", 100);
  if (model_option(options, "retry_backoff_ms")) p.backoff_ms = duration_option(options, model, "retry_backoff_ms", 100);
  return p;
}

}  // namespace clink::sql::ml
