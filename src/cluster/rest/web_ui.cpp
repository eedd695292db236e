// Serves the embedded web UI files (web_ui.hpp).
#include "web_ui.hpp"

#include <string>

#include <httplib.h>

namespace clink::cluster {

namespace {

std::string content_type(std::string_view name) {
  auto ends = [&](std::string_view ext) { return name.size() >= ext.size() && name.substr(name.size() - ext.size()) == ext; };
  if (ends(".html")) return "text/html; charset=UTF-8";
  if (ends(".css")) return "text/css; charset=UTF-8";
  if (ends(".js")) return "text/javascript; charset=UTF-8";
  if (ends(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

void serve(const WebAsset& asset, httplib::Response& res) {
  res.status = 200;
  // The pages change with the binary: a browser asks again rather than running an old
  // app.js against a newer server.
  res.set_header("Cache-Control", "no-cache");
  res.set_content(reinterpret_cast<const char*>(asset.data), asset.size, content_type(asset.name));
}

}  // namespace

void add_web_ui_routes(httplib::Server& server) {
  for (std::size_t i = 0; i < kWebAssetCount; ++i) {
    const WebAsset& asset = kWebAssets[i];
    auto handler = [&asset](const httplib::Request&, httplib::Response& res) { serve(asset, res); };
    server.Get("/" + std::string(asset.name), handler);
    if (asset.name == "index.html") {
      server.Get("/", handler);
      server.Get("/web", handler);  // a short address to give someone
    }
  }
}

}  // namespace clink::cluster
