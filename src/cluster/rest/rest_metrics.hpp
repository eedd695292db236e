#pragma once
// Flink's metric REST routes (rest_metrics.cpp), registered by the REST server.
namespace httplib {
class Server;
}

namespace clink::cluster {
class Dispatcher;

// GET /jobs/:jid/vertices/:vid/metrics, /jobs/:jid/metrics, /jobmanager/metrics and
// /taskmanagers/:tmid/metrics, each with Flink's optional ?get=a,b (with or without "/v1").
void add_metric_routes(httplib::Server& server, Dispatcher& dispatcher);

}  // namespace clink::cluster
