#include "clink/cluster/shuffle/batch_codec.hpp"

#include <map>
#include <mutex>
#include <unordered_map>

#include "clink/core/error.hpp"
#include "clink/core/type_name.hpp"

namespace clink::cluster {
namespace {

// Codecs are registered once at start-up and looked up when a channel first sees a
// type, never per batch: a mutex is cheap enough.
struct Registry {
  std::mutex mu;
  std::unordered_map<std::type_index, std::unique_ptr<BatchCodec>> by_type;
  std::map<std::string, const BatchCodec*, std::less<>> by_name;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void BatchDecoder::decode_meta(std::string_view) {
  throw ClinkError("this batch codec takes no metadata frames");
}

void register_batch_codec(BatchCodec codec) {
  if (codec.name.empty() || !codec.make_encoder || !codec.make_decoder)
    throw ClinkError("shuffle: a batch codec needs a name, an encoder and a decoder");
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto t = r.by_type.find(codec.type);
  auto n = r.by_name.find(codec.name);
  if (t != r.by_type.end() && n != r.by_name.end() && n->second == t->second.get()) return;  // already there
  if (t != r.by_type.end())
    throw ClinkError("shuffle: batch type " + demangle(codec.type.name()) + " already has the codec '" +
                     t->second->name + "', cannot register '" + codec.name + "'");
  if (n != r.by_name.end())
    throw ClinkError("shuffle: the batch codec name '" + codec.name + "' is taken by type " +
                     demangle(n->second->type.name()) + ", cannot register it for " + demangle(codec.type.name()));
  auto owned = std::make_unique<BatchCodec>(std::move(codec));
  r.by_name.emplace(owned->name, owned.get());
  r.by_type.emplace(owned->type, std::move(owned));
}

const BatchCodec* find_batch_codec(std::type_index type) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto it = r.by_type.find(type);
  return it == r.by_type.end() ? nullptr : it->second.get();
}

const BatchCodec* find_batch_codec(std::string_view name) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto it = r.by_name.find(name);
  return it == r.by_name.end() ? nullptr : it->second;
}

void register_builtin_batch_codecs() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_spec_batch_codecs();
    register_column_batch_codec();
  });
}

}  // namespace clink::cluster
