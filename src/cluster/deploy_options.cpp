#include "clink/cluster/deploy_options.hpp"

#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"

namespace clink::cluster {

std::string deploy_options_json(const DeployOptions& o) {
  const CheckpointConfig& c = o.checkpoints;
  nlohmann::json j = {
      {"interval_ms", c.interval_ms},
      {"timeout_ms", c.timeout_ms},
      {"min_pause_ms", c.min_pause_ms},
      {"retained", c.retained},
      {"directory", c.directory.string()},
      {"mode", c.mode == CheckpointingMode::kExactlyOnce ? "exactly_once" : "at_least_once"},
      {"state_backend", c.state_backend.kind},
      {"incremental", c.state_backend.incremental},
  };
  if (o.start.restore) j["restore"] = o.start.restore->string();
  j["last_checkpoint_id"] = o.start.last_checkpoint_id;
  return j.dump();
}

DeployOptions parse_deploy_options(const std::string& text) {
  DeployOptions o;
  try {
    auto j = nlohmann::json::parse(text);
    CheckpointConfig& c = o.checkpoints;
    c.interval_ms = j.at("interval_ms").get<std::int64_t>();
    c.timeout_ms = j.at("timeout_ms").get<std::int64_t>();
    c.min_pause_ms = j.at("min_pause_ms").get<std::int64_t>();
    c.retained = j.at("retained").get<int>();
    c.directory = j.at("directory").get<std::string>();
    c.mode = j.at("mode").get<std::string>() == "exactly_once" ? CheckpointingMode::kExactlyOnce
                                                               : CheckpointingMode::kAtLeastOnce;
    c.state_backend.kind = j.at("state_backend").get<std::string>();
    c.state_backend.incremental = j.at("incremental").get<bool>();
    if (j.contains("restore")) o.start.restore = std::filesystem::path(j.at("restore").get<std::string>());
    o.start.last_checkpoint_id = j.value("last_checkpoint_id", std::int64_t{0});
  } catch (const nlohmann::json::exception& e) {
    throw ClinkError(std::string("deploy options: ") + e.what());
  }
  return o;
}

}  // namespace clink::cluster
