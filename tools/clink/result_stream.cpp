#include "result_stream.hpp"

#include <chrono>
#include <map>

#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "clink/registry/builtin_registry.hpp"
#include "clink/runtime/operator.hpp"
#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/common/time_zone.hpp"
#include "clink/sql/common/value_format.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"

namespace clink::cli {

void ResultStream::append(std::vector<ResultRow> rows) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& r : rows) pending_.push_back(std::move(r));
  }
  cv_.notify_all();
}

std::vector<ResultRow> ResultStream::take(int timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  if (pending_.empty()) cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [this] { return !pending_.empty(); });
  std::vector<ResultRow> out;
  out.swap(pending_);
  return out;
}

namespace {

std::mutex g_streams_mu;
std::map<std::string, std::shared_ptr<ResultStream>>& streams() {
  static std::map<std::string, std::shared_ptr<ResultStream>> m;
  return m;
}

std::shared_ptr<ResultStream> find_stream(const std::string& name) {
  std::lock_guard<std::mutex> lock(g_streams_mu);
  auto it = streams().find(name);
  if (it == streams().end()) throw ClinkError("clink_result_sink: no result stream named '" + name + "'");
  return it->second;
}

// Formats a batch's rows once per batch (the cells are strings from here on; a result
// shown to a person is small next to the job's work).
class ResultSinkOperator final : public StreamOperator {
 public:
  ResultSinkOperator(std::shared_ptr<ResultStream> stream, sql::TimeZonePtr zone)
      : stream_(std::move(stream)), zone_(std::move(zone)) {}
  void process_batch(int, BatchPtr batch) override {
    const auto& b = sql::column_batch_cast(*batch);
    std::vector<ResultRow> rows(b.size());
    for (std::size_t r = 0; r < b.size(); ++r) {
      rows[r].kind = b.row_kind(r);
      rows[r].cells.reserve(b.num_columns());
      for (std::size_t c = 0; c < b.num_columns(); ++c) {
        const sql::Column& col = b.column(c);
        if (col.is_null(r)) {
          rows[r].cells.emplace_back(std::nullopt);
          continue;
        }
        std::string cell;
        sql::append_cell_string(col, r, *zone_, /*printing=*/true, cell);
        rows[r].cells.emplace_back(std::move(cell));
      }
    }
    stream_->append(std::move(rows));
  }
  void process_watermark(Watermark) override {}

 private:
  std::shared_ptr<ResultStream> stream_;
  sql::TimeZonePtr zone_;
};

OperatorRegistry make_cli_registry() {
  OperatorRegistry r = builtin_registry();
  r.add(OperatorFactoryInfo{
      .name = "clink_result_sink",
      .description = "the CLI's SELECT results (tableau lines or the shell's live table); param stream",
      .num_inputs = 1,
      .out_type = [](const OperatorSpecContext&) { return std::string(); },
      .make =
          [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        auto stream = find_stream(ctx.params->at("stream").get<std::string>());
        std::string zone_name = "UTC";
        if (ctx.params->contains("session") && (*ctx.params)["session"].contains("table.local-time-zone"))
          zone_name = (*ctx.params)["session"]["table.local-time-zone"].get<std::string>();
        sql::TimeZonePtr zone = sql::TimeZone::of(zone_name);
        return [stream, zone] { return std::make_unique<ResultSinkOperator>(stream, zone); };
      },
      .side_outputs = {},
  });
  return r;
}

}  // namespace

const OperatorRegistry& cli_registry() {
  static const OperatorRegistry r = make_cli_registry();
  return r;
}

void attach_result_stream(const std::string& name, std::shared_ptr<ResultStream> stream) {
  std::lock_guard<std::mutex> lock(g_streams_mu);
  streams()[name] = std::move(stream);
}

void detach_result_stream(const std::string& name) {
  std::lock_guard<std::mutex> lock(g_streams_mu);
  streams().erase(name);
}

std::vector<ResultColumn> route_select_to_stream(nlohmann::json& spec, const std::string& stream_name) {
  for (auto& op : spec["ops"]) {
    if (op.value("type", "") != "sql_collect_sink") continue;
    auto& p = op["params"];
    if (p.value("name", "").rfind("select_", 0) != 0) continue;
    std::vector<ResultColumn> cols;
    for (const auto& f : p.at("schema")) cols.push_back({f.at("name").get<std::string>(), f.at("type").get<std::string>()});
    nlohmann::json np = {{"stream", stream_name}, {"schema", p.at("schema")}};
    if (p.contains("session")) np["session"] = p["session"];
    op["type"] = "clink_result_sink";
    op["params"] = std::move(np);
    return cols;
  }
  throw ClinkError("the query's plan has no result sink");
}

}  // namespace clink::cli
