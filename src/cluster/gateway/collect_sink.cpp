#include "clink/cluster/gateway/collect_sink.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "clink/registry/builtin_registry.hpp"
#include "clink/runtime/operator.hpp"
#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/common/column_serde.hpp"

namespace clink::cluster::gateway {

namespace {

// One subtask's sink: a kept-alive HTTP connection to the coordinator's gateway.
class CollectSinkOperator final : public StreamOperator {
 public:
  CollectSinkOperator(const std::string& url, std::string result_id)
      : client_(url), path_("/clink/v1/collect/" + result_id), url_(url) {
    client_.set_read_timeout(300, 0);
  }
  void process_batch(int, BatchPtr batch) override {
    const auto& b = sql::column_batch_cast(*batch);
    if (b.size() == 0) return;
    buffer_.clear();
    sql::serialize_batch(b, buffer_);
    auto r = client_.Post(path_, buffer_, "application/octet-stream");
    // 429: the client has not fetched the rows before; wait for it (backpressure).
    for (int wait_ms = 1; r && r->status == 429; wait_ms = std::min(wait_ms * 2, 100)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
      r = client_.Post(path_, buffer_, "application/octet-stream");
    }
    if (!r) throw ClinkError(fmt::format("gateway_collect_sink: cannot reach the SQL gateway at {}{}: {}", url_, path_,
                                         httplib::to_string(r.error())));
    if (r->status != 200)
      throw ClinkError(fmt::format("gateway_collect_sink: the SQL gateway at {}{} answered {}: {}", url_, path_, r->status, r->body));
  }
  void process_watermark(Watermark) override {}

 private:
  httplib::Client client_;
  std::string path_;
  std::string url_;
  std::string buffer_;
};

OperatorRegistry make_registry() {
  OperatorRegistry r = builtin_registry();
  r.add(OperatorFactoryInfo{
      .name = "gateway_collect_sink",
      .description = "a SQL gateway SELECT's rows, posted to the coordinator's gateway; params url, result, schema",
      .num_inputs = 1,
      .out_type = [](const OperatorSpecContext&) { return std::string(); },
      .make =
          [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        const auto& p = *ctx.params;
        if (!p.contains("url") || !p.contains("result"))
          throw ClinkError("gateway_collect_sink: params need \"url\" and \"result\"");
        std::string url = p.at("url").get<std::string>(), result = p.at("result").get<std::string>();
        return [url, result] { return std::make_unique<CollectSinkOperator>(url, result); };
      },
      .side_outputs = {},
  });
  return r;
}

}  // namespace

const OperatorRegistry& registry_with_collect_sink() {
  static const OperatorRegistry r = make_registry();
  return r;
}

CollectTarget route_select_to_gateway(nlohmann::json& spec, const std::string& url, const std::string& result_id) {
  for (auto& op : spec["ops"]) {
    if (op.value("type", "") != "sql_collect_sink") continue;
    auto& p = op["params"];
    if (p.value("name", "").rfind("select_", 0) != 0) continue;
    CollectTarget t;
    for (const auto& f : p.at("schema")) t.columns.push_back({f.at("name").get<std::string>(), f.at("type").get<std::string>()});
    if (p.contains("session") && p["session"].contains("table.local-time-zone"))
      t.time_zone = p["session"]["table.local-time-zone"].get<std::string>();
    op["type"] = "gateway_collect_sink";
    op["params"] = {{"url", url}, {"result", result_id}, {"schema", p.at("schema")}};
    return t;
  }
  throw ClinkError("the query's plan has no result sink");
}

}  // namespace clink::cluster::gateway
