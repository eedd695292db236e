#pragma once
// The two HaServices implementations, chosen by make_ha_services (ha_config.cpp).
#include <memory>

#include "clink/cluster/ha/ha_services.hpp"

namespace clink::cluster {

std::unique_ptr<HaServices> make_standalone_ha_services(const HaConfig& config);
std::unique_ptr<HaServices> make_zookeeper_ha_services(const HaConfig& config);

}  // namespace clink::cluster
