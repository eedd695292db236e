#pragma once
// Model providers: what ML_PREDICT(TABLE t, MODEL m, DESCRIPTOR(c, ...)) calls to turn a
// batch of feature rows (the model's INPUT columns) into prediction rows (its OUTPUT
// columns). A model (CREATE MODEL ... WITH ('provider' = 'name', ...)) names its provider;
// the built-in ones are 'http' (a JSON model server) and 'openai' (an OpenAI-compatible
// /v1/embeddings or /v1/chat/completions endpoint), src/connectors/ml; a program adds its
// own C++ providers here (register_model_provider / register_model_function) before the
// jobs that use them are planned and run.
//
// Runtime: ML_PREDICT runs as the asynchronous lookup join (sql_lookup_join) whose table
// is the model (its lookup source: src/connectors/ml/model_lookup_source.cpp), so it has
// that op's bound on rows in flight, ordered output and in-flight rows in checkpoints.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/spec/connector_table.hpp"

namespace clink::sql {

// The lookup function ML_PREDICT's lookup join reads through ('connector' = 'lookup').
inline constexpr const char* kMlPredictLookupFunction = "__clink_ml_predict";
// The option carrying the model's name into the lookup source (for messages).
inline constexpr const char* kMlModelNameOption = "__clink.model";

struct ModelContext {
  std::string model;           // the model's name, for messages
  std::string where;           // the op, for messages
  ConnectorOptions options;    // the model's WITH options, then ML_PREDICT's config map
  SchemaPtr input_schema;      // INPUT columns
  SchemaPtr output_schema;     // OUTPUT columns (nullable)
};

class ModelProvider {
 public:
  virtual ~ModelProvider() = default;
  // Appends to `outputs` (output_schema) one row per row of `features` (input_schema),
  // in order. Throws ClinkError on failure. Called from several threads at once (ML_PREDICT
  // runs up to 'max-concurrent-operations' calls in parallel): must be thread-safe.
  virtual void predict(const ColumnBatch& features, ColumnBatch& outputs) = 0;
  // Rows one predict() call takes (the source splits larger batches); 1: one row a call.
  virtual std::size_t max_batch_size() const { return 1; }
};

// Makes a provider; throws ClinkError naming the model and the option for bad options
// (called when the job is built, to check, and again when it runs).
using ModelProviderFactory = std::function<std::unique_ptr<ModelProvider>(const ModelContext&)>;

void register_model_provider(const std::string& name, ModelProviderFactory factory);
// Null when nothing is registered under `name` (case-insensitive).
const ModelProviderFactory* find_model_provider(const std::string& name);
// Whether CREATE MODEL may name `name`: a built-in provider or a registered one.
bool is_known_model_provider(const std::string& name);
// "http, openai, ..." (sorted), for messages.
std::string model_provider_names();

// A C++ closure as a provider: called with a batch of feature rows, appends one output
// row per feature row.
using ModelFunction = std::function<void(const ColumnBatch& features, ColumnBatch& outputs)>;
void register_model_function(const std::string& name, ModelFunction fn, std::size_t max_batch_size = 1024);

}  // namespace clink::sql
