#pragma once
// The built-in model providers: 'http' (a JSON model server) and 'openai' (an
// OpenAI-compatible embeddings or chat-completions endpoint). Null for another name.
#include <memory>

#include "clink/formats/json_row_format.hpp"
#include "clink/sql/spec/model_provider.hpp"

namespace clink::sql::ml {

std::unique_ptr<ModelProvider> make_builtin_model_provider(const std::string& provider, const ModelContext& ctx);

// A JSON prediction (an object with the OUTPUT column names, or, for a one-column OUTPUT,
// the bare value) appended as one row to `outputs`; throws ClinkError naming the model.
void append_prediction_json(const std::string& model, JsonRowDecoder& decoder, const std::string& prediction_json,
                            ColumnBatch& outputs);

}  // namespace clink::sql::ml
