// The process's model providers (model_provider.hpp).
#include "clink/sql/spec/model_provider.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>

namespace clink::sql {
namespace {

// The built-in providers' names (their factories are registered by src/connectors/ml when
// the built-in registry is made, which may come after a CREATE MODEL is checked).
const char* const kBuiltinProviders[] = {"http", "openai"};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

struct Registry {
  std::mutex mu;
  std::map<std::string, ModelProviderFactory> factories;
};

Registry& registry() {
  static Registry r;
  return r;
}

class FunctionProvider final : public ModelProvider {
 public:
  FunctionProvider(ModelFunction fn, std::size_t batch) : fn_(std::move(fn)), batch_(std::max<std::size_t>(batch, 1)) {}
  void predict(const ColumnBatch& features, ColumnBatch& outputs) override { fn_(features, outputs); }
  std::size_t max_batch_size() const override { return batch_; }

 private:
  ModelFunction fn_;
  std::size_t batch_;
};

}  // namespace

void register_model_provider(const std::string& name, ModelProviderFactory factory) {
  auto& r = registry();
  std::lock_guard lock(r.mu);
  r.factories[lower(name)] = std::move(factory);
}

const ModelProviderFactory* find_model_provider(const std::string& name) {
  auto& r = registry();
  std::lock_guard lock(r.mu);
  auto it = r.factories.find(lower(name));
  return it == r.factories.end() ? nullptr : &it->second;
}

bool is_known_model_provider(const std::string& name) {
  const std::string l = lower(name);
  if (std::any_of(std::begin(kBuiltinProviders), std::end(kBuiltinProviders), [&](const char* b) { return l == b; }))
    return true;
  return find_model_provider(name) != nullptr;
}

std::string model_provider_names() {
  std::vector<std::string> names(std::begin(kBuiltinProviders), std::end(kBuiltinProviders));
  {
    auto& r = registry();
    std::lock_guard lock(r.mu);
    for (const auto& [n, f] : r.factories) names.push_back(n);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

void register_model_function(const std::string& name, ModelFunction fn, std::size_t max_batch_size) {
  register_model_provider(name, [fn = std::move(fn), max_batch_size](const ModelContext&) {
    return std::make_unique<FunctionProvider>(fn, max_batch_size);
  });
}

}  // namespace clink::sql
