// The process's lookup sources (lookup_source.hpp), with the `lookup` connector's source:
// the user function registered under the table's 'lookup_function' option.
#include "clink/connectors/sql/lookup_source.hpp"

#include <map>
#include <mutex>

#include "clink/core/error.hpp"

namespace clink::sql {

struct LookupSourceRegistry::Impl {
  mutable std::mutex mu;
  std::map<std::string, LookupSourceFactory> sources;
  std::map<std::string, LookupSourceFactory> functions;
};

namespace {

// `'connector' = 'lookup'`: the table's lookups go to its registered function; only
// 'lookup_function' and the lookup options are allowed.
std::unique_ptr<LookupSource> make_function_source(const LookupSourceContext& ctx) {
  auto name = find_option(ctx.options, "lookup_function");
  if (!name)
    throw ClinkError(ctx.where + ": table `" + ctx.table + "` ('connector' = 'lookup') needs the option 'lookup_function'");
  const LookupSourceFactory* f = LookupSourceRegistry::process().find_function(*name);
  if (!f) {
    std::string known = LookupSourceRegistry::process().function_names();
    throw ClinkError(ctx.where + ": table `" + ctx.table + "`: no lookup function '" + *name +
                     "' is registered in this process" + (known.empty() ? "" : " (registered: " + known + ")"));
  }
  return (*f)(ctx);
}

}  // namespace

LookupSourceRegistry::LookupSourceRegistry() : impl_(std::make_shared<Impl>()) {
  impl_->sources[kLookupFunctionSource] = make_function_source;
}

LookupSourceRegistry& LookupSourceRegistry::process() {
  static LookupSourceRegistry r;
  return r;
}

void LookupSourceRegistry::add(const std::string& name, LookupSourceFactory factory) {
  std::lock_guard lock(impl_->mu);
  impl_->sources[name] = std::move(factory);
}

const LookupSourceFactory* LookupSourceRegistry::find(const std::string& name) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->sources.find(name);
  return it == impl_->sources.end() ? nullptr : &it->second;
}

void LookupSourceRegistry::add_function(const std::string& name, LookupSourceFactory factory) {
  std::lock_guard lock(impl_->mu);
  impl_->functions[name] = std::move(factory);
}

const LookupSourceFactory* LookupSourceRegistry::find_function(const std::string& name) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->functions.find(name);
  return it == impl_->functions.end() ? nullptr : &it->second;
}

std::string LookupSourceRegistry::function_names() const {
  std::lock_guard lock(impl_->mu);
  std::string out;
  for (const auto& [name, f] : impl_->functions) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace clink::sql
