#include "clink/runtime/operator_registry.hpp"

#include "clink/core/error.hpp"

namespace clink {

static std::string join_names(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

void OperatorRegistry::add(OperatorFactoryInfo info) {
  std::string name = info.name;
  if (!factories_.emplace(name, std::move(info)).second)
    throw ClinkError("operator factory '" + name + "' registered twice");
}

void OperatorRegistry::add_key_selector(KeySelectorInfo info) {
  std::string name = info.name;
  if (!key_selectors_.emplace(name, std::move(info)).second)
    throw ClinkError("key selector '" + name + "' registered twice");
}

const OperatorFactoryInfo& OperatorRegistry::get(const std::string& name) const {
  auto it = factories_.find(name);
  if (it == factories_.end()) throw ClinkError("unknown operator type '" + name + "' (known: " + join_names(names()) + ")");
  return it->second;
}

void OperatorRegistry::add_key_selector_family(KeySelectorFamily family) {
  for (const auto& f : key_families_)
    if (f.prefix == family.prefix) throw ClinkError("key selector family '" + family.prefix + "' registered twice");
  key_families_.push_back(std::move(family));
}

KeySelectorInfo OperatorRegistry::resolve_key_selector(const std::string& name, const UpstreamSpec& upstream) const {
  if (key_selectors_.count(name)) return key_selectors_.at(name);
  for (const auto& f : key_families_) {
    if (name.rfind(f.prefix, 0) != 0) continue;
    try {
      return KeySelectorInfo{name, f.record_type, f.make(name.substr(f.prefix.size()), upstream)};
    } catch (const ClinkError& e) {
      throw ClinkError("key selector '" + name + "': " + e.what());
    }
  }
  return key_selector(name);  // throws, listing the known names
}

const KeySelectorInfo& OperatorRegistry::key_selector(const std::string& name) const {
  auto it = key_selectors_.find(name);
  if (it == key_selectors_.end()) {
    std::vector<std::string> known;
    for (const auto& [k, v] : key_selectors_) known.push_back(k);
    for (const auto& f : key_families_) known.push_back(f.prefix + "...");
    throw ClinkError("unknown key selector '" + name + "' (known: " + join_names(known) + ")");
  }
  return it->second;
}

std::vector<std::string> OperatorRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : factories_) out.push_back(k);
  return out;
}

}  // namespace clink
