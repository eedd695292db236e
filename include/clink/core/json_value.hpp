#pragma once
// An owned nlohmann::json behind a pointer, so that structs included nearly everywhere
// (JobNode, OperatorSpecContext, KeyedStateHandle) can hold JSON while their headers see
// only <nlohmann/json_fwd.hpp>. json.hpp costs every translation unit that reaches it
// several seconds of compile time; only the .cpp files that build or read JSON include
// it. Holders of a JsonValue are built once per job graph, checkpoint or restore, never
// per record, so the extra allocation and indirection are off every hot path.
//
// Usage where json.hpp is included: pass `v` wherever a `const nlohmann::json&` is
// expected (implicit conversion), assign a json to it, and reach members with `->`
// (`v->at("k")`, `v->contains("k")`), or `*v` for the json itself.
#include <memory>

#include <nlohmann/json_fwd.hpp>

namespace clink {

class JsonValue {
 public:
  JsonValue();  // null, as a default-constructed nlohmann::json
  JsonValue(const nlohmann::json& value);  // NOLINT: implicit, as the json it replaces
  JsonValue(nlohmann::json&& value);       // NOLINT
  JsonValue(const JsonValue& other);
  JsonValue(JsonValue&& other) noexcept;
  JsonValue& operator=(const JsonValue& other);
  JsonValue& operator=(JsonValue&& other) noexcept;
  JsonValue& operator=(const nlohmann::json& value);
  JsonValue& operator=(nlohmann::json&& value);
  ~JsonValue();

  static JsonValue object();  // {}

  // A moved-from JsonValue reads as null and becomes one again when written.
  const nlohmann::json& get() const {
    if (value_) return *value_;
    return null_json();
  }
  nlohmann::json& get() {
    if (value_) return *value_;
    return materialise();
  }
  operator const nlohmann::json&() const { return get(); }  // NOLINT: implicit by design
  operator nlohmann::json&() { return get(); }              // NOLINT
  const nlohmann::json& operator*() const { return get(); }
  nlohmann::json& operator*() { return get(); }
  const nlohmann::json* operator->() const { return &get(); }
  nlohmann::json* operator->() { return &get(); }

  friend bool operator==(const JsonValue& a, const JsonValue& b);
  friend bool operator==(const JsonValue& a, const nlohmann::json& b);

 private:
  static const nlohmann::json& null_json();
  nlohmann::json& materialise();

  std::unique_ptr<nlohmann::json> value_;
};

}  // namespace clink
