#include <nlohmann/json.hpp>

#include "clink/cluster/ha/ha_services.hpp"

namespace clink::cluster {

std::string CoordinatorAddress::encode() const { return nlohmann::json{{"rpc", rpc}, {"rest", rest}}.dump(); }

std::optional<CoordinatorAddress> CoordinatorAddress::decode(std::string_view address) {
  auto j = nlohmann::json::parse(address, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("rpc") || !j["rpc"].is_string()) return std::nullopt;
  CoordinatorAddress a;
  a.rpc = j["rpc"].get<std::string>();
  if (j.contains("rest") && j["rest"].is_string()) a.rest = j["rest"].get<std::string>();
  return a;
}

}  // namespace clink::cluster
