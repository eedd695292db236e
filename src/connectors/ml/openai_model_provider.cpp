// provider 'openai': an OpenAI-compatible endpoint, with Flink's option names ('endpoint',
// 'api-key', 'model', 'system-prompt', 'temperature', 'max-tokens', 'dimension'). The
// endpoint's path picks the task:
//   .../embeddings        one STRING INPUT column -> one ARRAY<FLOAT> (or ARRAY<DOUBLE>)
//                         OUTPUT column; up to 'max_batch_size' (default 32) texts a request
//                         ({"model", "input": [...]}, the vectors placed by "index")
//   .../chat/completions  one STRING INPUT column -> one STRING OUTPUT column; one request
//                         a row (system prompt, then the text as the user's message), the
//                         first choice's message content.
#include <nlohmann/json.hpp>

#include "builtin_model_providers.hpp"
#include "clink/core/error.hpp"
#include "http_model_client.hpp"

namespace clink::sql::ml {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string endpoint(const ModelContext& ctx) {
  auto e = model_option(ctx.options, "endpoint");
  if (!e || e->empty()) throw ClinkError("model `" + ctx.model + "` ('provider' = 'openai') needs the option 'endpoint'");
  return *e;
}

std::vector<std::pair<std::string, std::string>> auth_headers(const ModelContext& ctx) {
  std::vector<std::pair<std::string, std::string>> out;
  auto key = model_option(ctx.options, "api-key");
  if (!key) key = model_option(ctx.options, "apiKey");
  if (key && !key->empty()) out.emplace_back("Authorization", "Bearer " + *key);
  return out;
}

class OpenAiModelProvider final : public ModelProvider {
 public:
  explicit OpenAiModelProvider(const ModelContext& ctx)
      : model_(ctx.model),
        client_(ctx.model, endpoint(ctx), auth_headers(ctx), retry_policy(ctx.options, ctx.model),
                duration_option(ctx.options, ctx.model, "request-timeout", 60'000)) {
    const std::string& path = client_.path();
    embeddings_ = ends_with(path, "/embeddings");
    if (!embeddings_ && !ends_with(path, "/chat/completions"))
      throw ClinkError("model `" + model_ + "`: the openai provider's 'endpoint' must end with /embeddings or "
                       "/chat/completions, got '" + path + "'");
    if (ctx.input_schema->size() != 1 || !ctx.input_schema->type(0).is_character_string())
      throw ClinkError("model `" + model_ + "`: the openai provider takes one STRING INPUT column");
    const Schema& out = *ctx.output_schema;
    if (out.size() != 1)
      throw ClinkError("model `" + model_ + "`: the openai provider gives one OUTPUT column");
    if (embeddings_ && !out.type(0).is(TypeKind::kArray))
      throw ClinkError("model `" + model_ + "`: an embeddings endpoint's OUTPUT column must be ARRAY<FLOAT>, got " +
                       out.type(0).to_string());
    if (!embeddings_ && !out.type(0).is_character_string())
      throw ClinkError("model `" + model_ + "`: a chat/completions endpoint's OUTPUT column must be STRING, got " +
                       out.type(0).to_string());
    if (auto m = model_option(ctx.options, "model")) request_["model"] = *m;
    if (embeddings_) {
      batch_ = static_cast<std::size_t>(int_option(ctx.options, model_, "max_batch_size", 32, 1));
      if (model_option(ctx.options, "dimension")) request_["dimensions"] = int_option(ctx.options, model_, "dimension", 0, 1);
    } else {
      system_prompt_ = model_option(ctx.options, "system-prompt").value_or("");
      if (model_option(ctx.options, "temperature")) {
        const std::string t = *model_option(ctx.options, "temperature");
        try {
          request_["temperature"] = std::stod(t);
        } catch (const std::exception&) {
          throw ClinkError("model `" + model_ + "`: option 'temperature' must be a number, got '" + t + "'");
        }
      }
      if (model_option(ctx.options, "max-tokens")) request_["max_tokens"] = int_option(ctx.options, model_, "max-tokens", 0, 1);
    }
  }

  std::size_t max_batch_size() const override { return batch_; }

  void predict(const ColumnBatch& features, ColumnBatch& outputs) override {
    const Column& text = features.column(0);
    const std::size_t n = features.size();
    if (!embeddings_) {
      for (std::size_t r = 0; r < n; ++r) {
        nlohmann::json req = request_;
        req["messages"] = nlohmann::json::array();
        if (!system_prompt_.empty()) req["messages"].push_back({{"role", "system"}, {"content", system_prompt_}});
        req["messages"].push_back({{"role", "user"}, {"content", std::string(text.string_at(r))}});
        const nlohmann::json j = parse(client_.post(req.dump()));
        try {
          outputs.column(0).append_string(j.at("choices").at(0).at("message").at("content").get<std::string>());
        } catch (const std::exception&) {
          throw ClinkError("model `" + model_ + "`: a chat completion without choices[0].message.content: " +
                           j.dump().substr(0, 200));
        }
        outputs.commit_rows(1);
      }
      return;
    }
    nlohmann::json req = request_;
    req["input"] = nlohmann::json::array();
    for (std::size_t r = 0; r < n; ++r) req["input"].push_back(std::string(text.string_at(r)));
    const nlohmann::json j = parse(client_.post(req.dump()));
    std::vector<const nlohmann::json*> vectors(n, nullptr);
    if (!j.contains("data") || !j["data"].is_array())
      throw ClinkError("model `" + model_ + "`: an embeddings response without 'data': " + j.dump().substr(0, 200));
    for (std::size_t i = 0; i < j["data"].size(); ++i) {
      const auto& d = j["data"][i];
      const std::size_t at = d.contains("index") ? d["index"].get<std::size_t>() : i;
      if (at >= n || !d.contains("embedding"))
        throw ClinkError("model `" + model_ + "`: embeddings response item " + std::to_string(i) + " is malformed");
      vectors[at] = &d["embedding"];
    }
    JsonRowDecoder decoder(outputs.schema(), JsonFormatOptions{});
    for (std::size_t r = 0; r < n; ++r) {
      if (!vectors[r])
        throw ClinkError("model `" + model_ + "`: the embeddings response has no vector for input " + std::to_string(r));
      append_prediction_json(model_, decoder, vectors[r]->dump(), outputs);
    }
  }

 private:
  nlohmann::json parse(const std::string& text) const {
    try {
      return nlohmann::json::parse(text);
    } catch (const std::exception& e) {
      throw ClinkError("model `" + model_ + "`: the response is not JSON (" + e.what() + ")");
    }
  }

  std::string model_;
  HttpModelClient client_;
  bool embeddings_ = false;
  std::size_t batch_ = 1;
  std::string system_prompt_;
  nlohmann::json request_ = nlohmann::json::object();
};

}  // namespace

std::unique_ptr<ModelProvider> make_openai_model_provider(const ModelContext& ctx) {
  return std::make_unique<OpenAiModelProvider>(ctx);
}

}  // namespace clink::sql::ml
