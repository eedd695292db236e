#pragma once
// The web UI (docs/web-ui.md): the files of web/ in the repository, embedded into the
// binary at build time (cmake/embed_files.cmake generates web_ui_assets.cpp), served by
// the REST server at "/" and "/<file name>". The pages read only the REST API.
#include <cstddef>
#include <string_view>

namespace httplib {
class Server;
}

namespace clink::cluster {

// One embedded file.
struct WebAsset {
  std::string_view name;  // "index.html", "app.js", ...
  const unsigned char* data;
  std::size_t size;
};

// The embedded files (defined in the generated web_ui_assets.cpp).
extern const WebAsset kWebAssets[];
extern const std::size_t kWebAssetCount;

// GET "/" (index.html) and GET "/<name>" for each embedded file.
void add_web_ui_routes(httplib::Server& server);

}  // namespace clink::cluster
