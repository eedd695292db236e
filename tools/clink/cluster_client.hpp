#pragma once
// The client side of a coordinator's REST API, for `clink run --coordinator` and
// `clink list|cancel|stop|savepoint`.
#include <string>

#include <nlohmann/json.hpp>

#include "clink/cluster/rest/rest_server.hpp"

namespace clink::cli {

// Sends a request and returns the body parsed; throws ClinkError with the coordinator's
// {"errors": [...]} (or the transport error) and the address when it did not succeed.
nlohmann::json rest_call(cluster::RestClient& client, const std::string& method, const std::string& path,
                         const nlohmann::json& body = nlohmann::json::object());

// A local path made absolute (the coordinator resolves paths in its own working
// directory); URIs (scheme://...) as given.
std::string absolute_location(const std::string& location);

}  // namespace clink::cli
