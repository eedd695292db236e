// provider 'http': a JSON model server. A request POSTs the feature rows to 'endpoint':
// with 'max_batch_size' = 1 (the default) one JSON object of the INPUT columns by name,
// with a larger one a JSON array of such objects. The response is the prediction (an
// object with the OUTPUT columns by name; for a one-column OUTPUT also the bare value), or
// for a batch an array of predictions in request order ({"predictions": [...]} too).
// Values convert as Flink's json format reads them (ARRAY<FLOAT> from a JSON array, ...).
#include <cctype>

#include <nlohmann/json.hpp>

#include "builtin_model_providers.hpp"
#include "clink/core/error.hpp"
#include "clink/formats/json_escape.hpp"
#include "clink/formats/json_row_format.hpp"
#include "http_model_client.hpp"

namespace clink::sql::ml {
namespace {

std::vector<std::pair<std::string, std::string>> header_options(const ConnectorOptions& options) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [k, v] : options)
    if (k.rfind("header.", 0) == 0) out.emplace_back(k.substr(7), v);
  return out;
}

class HttpModelProvider final : public ModelProvider {
 public:
  explicit HttpModelProvider(const ModelContext& ctx)
      : model_(ctx.model),
        input_(ctx.input_schema),
        encoder_(ctx.input_schema, JsonFormatOptions{}),
        batch_(static_cast<std::size_t>(int_option(ctx.options, ctx.model, "max_batch_size", 1, 1))),
        client_(ctx.model, required(ctx), header_options(ctx.options), retry_policy(ctx.options, ctx.model),
                duration_option(ctx.options, ctx.model, "request-timeout", 30'000)) {}

  std::size_t max_batch_size() const override { return batch_; }

  void predict(const ColumnBatch& features, ColumnBatch& outputs) override {
    const std::size_t n = features.size();
    std::string body;
    if (batch_ > 1) body.push_back('[');
    for (std::size_t r = 0; r < n; ++r) {
      if (r > 0) body.push_back(',');
      encoder_.encode(features, r, body);
    }
    if (batch_ > 1) body.push_back(']');
    const std::string text = client_.post(body);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const std::exception& e) {
      throw ClinkError("model `" + model_ + "`: the response is not JSON (" + e.what() + "): " + text.substr(0, 200));
    }
    if (j.is_object() && j.contains("predictions")) j = j["predictions"];
    JsonRowDecoder decoder(outputs.schema(), JsonFormatOptions{});
    if (batch_ > 1) {
      if (!j.is_array() || j.size() != n)
        throw ClinkError("model `" + model_ + "`: a request of " + std::to_string(n) +
                         " rows needs a JSON array of as many predictions, got: " + text.substr(0, 200));
      for (const auto& p : j) append_prediction_json(model_, decoder, p.dump(), outputs);
    } else {
      if (j.is_array() && j.size() == 1 && j[0].is_object()) j = j[0];
      append_prediction_json(model_, decoder, j.dump(), outputs);
    }
  }

 private:
  static std::string required(const ModelContext& ctx) {
    auto e = model_option(ctx.options, "endpoint");
    if (!e || e->empty()) throw ClinkError("model `" + ctx.model + "` ('provider' = 'http') needs the option 'endpoint'");
    return *e;
  }

  std::string model_;
  SchemaPtr input_;
  JsonRowEncoder encoder_;
  std::size_t batch_;
  HttpModelClient client_;
};

}  // namespace

void append_prediction_json(const std::string& model, JsonRowDecoder& decoder, const std::string& prediction_json,
                            ColumnBatch& outputs) {
  const Schema& out = *outputs.schema();
  std::string text = prediction_json;
  const bool object = !text.empty() && text.front() == '{';
  bool wrap = !object;
  if (object && out.size() == 1) {
    // A one-column OUTPUT read from an object without that name: the object is the value
    // (a ROW or MAP column), else it is the usual by-name object.
    auto j = nlohmann::json::parse(text);
    wrap = !j.contains(out.name(0));
  }
  if (wrap) {
    if (out.size() != 1)
      throw ClinkError("model `" + model + "`: a prediction must be a JSON object with the OUTPUT columns, got: " +
                       text.substr(0, 200));
    std::string key;
    append_json_string(out.name(0), key);
    text = "{" + key + ":" + text + "}";
  }
  std::string reason;
  std::vector<Column*> cols;
  for (std::size_t c = 0; c < outputs.num_columns(); ++c) cols.push_back(&outputs.column(c));
  if (!decoder.decode(text, text.size(), std::span<Column* const>(cols.data(), cols.size()), reason))
    throw ClinkError("model `" + model + "`: cannot read the prediction " + text.substr(0, 200) + ": " + reason);
  outputs.commit_rows(1);
}

std::unique_ptr<ModelProvider> make_openai_model_provider(const ModelContext& ctx);

std::unique_ptr<ModelProvider> make_builtin_model_provider(const std::string& provider, const ModelContext& ctx) {
  std::string p = provider;
  for (char& c : p) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (p == "http") return std::make_unique<HttpModelProvider>(ctx);
  if (p == "openai") return make_openai_model_provider(ctx);
  return nullptr;
}

}  // namespace clink::sql::ml
