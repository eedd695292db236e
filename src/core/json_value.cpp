#include "clink/core/json_value.hpp"

#include <nlohmann/json.hpp>

namespace clink {

JsonValue::JsonValue() : value_(std::make_unique<nlohmann::json>()) {}
JsonValue::JsonValue(const nlohmann::json& value) : value_(std::make_unique<nlohmann::json>(value)) {}
JsonValue::JsonValue(nlohmann::json&& value) : value_(std::make_unique<nlohmann::json>(std::move(value))) {}
JsonValue::JsonValue(const JsonValue& other) : value_(std::make_unique<nlohmann::json>(other.get())) {}
JsonValue::JsonValue(JsonValue&& other) noexcept = default;
JsonValue::~JsonValue() = default;

JsonValue& JsonValue::operator=(const JsonValue& other) {
  if (this != &other) get() = other.get();
  return *this;
}
JsonValue& JsonValue::operator=(JsonValue&& other) noexcept = default;
JsonValue& JsonValue::operator=(const nlohmann::json& value) {
  get() = value;
  return *this;
}
JsonValue& JsonValue::operator=(nlohmann::json&& value) {
  get() = std::move(value);
  return *this;
}

JsonValue JsonValue::object() { return JsonValue(nlohmann::json::object()); }

const nlohmann::json& JsonValue::null_json() {
  static const nlohmann::json null;
  return null;
}

nlohmann::json& JsonValue::materialise() {
  value_ = std::make_unique<nlohmann::json>();
  return *value_;
}

bool operator==(const JsonValue& a, const JsonValue& b) { return a.get() == b.get(); }
bool operator==(const JsonValue& a, const nlohmann::json& b) { return a.get() == b; }

}  // namespace clink
