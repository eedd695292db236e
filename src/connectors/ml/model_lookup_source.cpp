// ML_PREDICT's lookup source: the lookup join that runs ML_PREDICT (binder_ml_predict.cpp)
// looks the model's OUTPUT up by its INPUT columns. One lookup() takes the distinct
// feature rows of a chunk of input rows; they go to the provider in slices of its
// max_batch_size, up to 'max-concurrent-operations' (Flink's ML_PREDICT config key,
// default 10) slices at once, and come back as rows INPUT ++ OUTPUT in the keys' order.
//
// 'on_error' = 'fail' (default): a slice that fails (after the provider's own retries)
// fails the lookup, so the job fails and restarts from its last checkpoint, whose
// in-flight rows are asked again. 'null': the slice's rows get NULL outputs instead.
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "builtin_model_providers.hpp"
#include "clink/connectors/ml/register_ml_models.hpp"
#include "clink/connectors/sql/lookup_source.hpp"
#include "clink/core/error.hpp"
#include "model_options.hpp"

namespace clink::sql::ml {
namespace {

std::unique_ptr<ModelProvider> make_provider(const ModelContext& ctx) {
  auto name = find_option(ctx.options, "provider");
  if (!name || name->empty()) throw ClinkError("model `" + ctx.model + "` needs the option 'provider'");
  if (const ModelProviderFactory* f = find_model_provider(*name)) return (*f)(ctx);
  if (auto p = make_builtin_model_provider(*name, ctx)) return p;
  throw ClinkError("model `" + ctx.model + "`: unknown provider '" + *name + "' (known: " + model_provider_names() + ")");
}

class ModelLookupSource final : public LookupSource {
 public:
  explicit ModelLookupSource(const LookupSourceContext& lc) {
    ctx_.model = find_option(lc.options, kMlModelNameOption).value_or(lc.table);
    ctx_.where = lc.where;
    for (const auto& kv : lc.options)
      if (kv.first != kMlModelNameOption && kv.first != "lookup_function") ctx_.options.push_back(kv);
    const Schema& row = *lc.row_schema;
    const std::size_t inputs = lc.key_columns.size();
    for (std::size_t i = 0; i < inputs; ++i)
      if (lc.key_columns[i] != i) throw ClinkError(lc.where + ": model `" + ctx_.model + "`: the INPUT columns must lead");
    std::vector<RowField> in(row.fields().begin(), row.fields().begin() + static_cast<std::ptrdiff_t>(inputs));
    std::vector<RowField> out(row.fields().begin() + static_cast<std::ptrdiff_t>(inputs), row.fields().end());
    ctx_.input_schema = std::make_shared<Schema>(in);
    ctx_.output_schema = std::make_shared<Schema>(out);
    const std::string on_error = model_option(ctx_.options, "on_error").value_or("fail");
    if (on_error != "fail" && on_error != "null")
      throw ClinkError("model `" + ctx_.model + "`: option 'on_error' must be 'fail' or 'null', got '" + on_error + "'");
    null_on_error_ = on_error == "null";
    concurrency_ = static_cast<std::size_t>(int_option(ctx_.options, ctx_.model, "max-concurrent-operations", 10, 1));
    provider_ = make_provider(ctx_);  // checks the options when the job is built
  }

  void lookup(const ColumnBatch& keys, ColumnBatch& out) override {
    const std::size_t n = keys.size();
    if (n == 0) return;
    const std::size_t batch = std::max<std::size_t>(provider_->max_batch_size(), 1);
    const std::size_t slices = (n + batch - 1) / batch;
    std::vector<ColumnBatch> results;
    results.reserve(slices);
    for (std::size_t s = 0; s < slices; ++s) results.emplace_back(ctx_.output_schema, batch);
    std::vector<std::string> errors(slices);
    std::atomic<std::size_t> next{0};
    auto work = [&] {
      for (std::size_t s = next++; s < slices; s = next++) {
        const std::size_t b = s * batch, e = std::min(n, b + batch);
        ColumnBatch features(ctx_.input_schema, e - b);
        for (std::size_t c = 0; c < features.num_columns(); ++c) features.column(c).append_range(keys.column(c), b, e);
        features.commit_rows(e - b);
        try {
          provider_->predict(features, results[s]);
          if (results[s].size() != e - b)
            throw ClinkError("model `" + ctx_.model + "`: the provider gave " + std::to_string(results[s].size()) +
                             " predictions for " + std::to_string(e - b) + " rows");
        } catch (const std::exception& ex) {
          errors[s] = ex.what();
        }
      }
    };
    const std::size_t threads = std::min(concurrency_, slices) - 1;
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
    for (std::size_t s = 0; s < slices; ++s) {
      if (errors[s].empty()) continue;
      if (!null_on_error_) throw ClinkError(ctx_.where + ": ML_PREDICT: " + errors[s]);
      const std::size_t rows = std::min(n, (s + 1) * batch) - s * batch;
      results[s] = ColumnBatch(ctx_.output_schema, rows);
      for (std::size_t c = 0; c < results[s].num_columns(); ++c)
        for (std::size_t r = 0; r < rows; ++r) results[s].column(c).append_null();
      results[s].commit_rows(rows);
      nulled_.fetch_add(rows);
    }
    const std::size_t inputs = ctx_.input_schema->size();
    for (std::size_t c = 0; c < inputs; ++c) out.column(c).append_range(keys.column(c), 0, n);
    for (std::size_t c = 0; c < ctx_.output_schema->size(); ++c)
      for (const auto& r : results) out.column(inputs + c).append_range(r.column(c), 0, r.size());
    out.commit_rows(n);
  }

 private:
  ModelContext ctx_;
  std::unique_ptr<ModelProvider> provider_;
  bool null_on_error_ = false;
  std::size_t concurrency_ = 10;
  std::atomic<std::int64_t> nulled_{0};
};

}  // namespace
}  // namespace clink::sql::ml

namespace clink::sql {

void register_ml_models() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_lookup_function(kMlPredictLookupFunction, [](const LookupSourceContext& ctx) -> std::unique_ptr<LookupSource> {
      return std::make_unique<ml::ModelLookupSource>(ctx);
    });
  });
}

}  // namespace clink::sql
