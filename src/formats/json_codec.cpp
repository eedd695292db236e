#include "clink/formats/json_codec.hpp"

#include <array>
#include <cstring>

#include <simdjson.h>

namespace clink {

static_assert(kJsonPadding >= simdjson::SIMDJSON_PADDING, "kJsonPadding must cover simdjson's padding");

namespace {

namespace od = simdjson::ondemand;

bool fail(std::string& reason, std::string message) {
  reason = std::move(message);
  return false;
}

std::string describe(simdjson::error_code e) {
  switch (e) {
    case simdjson::EMPTY: return "empty line";
    case simdjson::TRAILING_CONTENT: return "unexpected content after the JSON value";
    case simdjson::NUMBER_OUT_OF_RANGE: return "number out of range";
    case simdjson::UTF8_ERROR: return "invalid UTF-8";
    default: return std::string("invalid JSON (") + simdjson::error_message(e) + ")";
  }
}

// Type errors name what was expected, not simdjson's generic wording.
std::string describe_value(simdjson::error_code e, std::string_view what, std::string_view field) {
  bool type_error = e == simdjson::INCORRECT_TYPE || e == simdjson::NUMBER_ERROR;
  if (!type_error) return describe(e);
  if (field.empty()) return "expected " + std::string(what);
  return "field \"" + std::string(field) + "\" must be " + std::string(what);
}

// get_int64 failed on `v` (not consumed: simdjson only advances on success). An
// integer that does not fit is reported as such rather than as a type error.
template <class V>
std::string int64_error(simdjson::error_code e, V& v, std::string_view field) {
  od::number_type t;
  if (e == simdjson::INCORRECT_TYPE && v.get_number_type().get(t) == simdjson::SUCCESS &&
      t != od::number_type::floating_point_number) {
    std::string msg = "integer out of the int64 range";
    return field.empty() ? msg : "field \"" + std::string(field) + "\": " + msg;
  }
  return describe_value(e, "an integer", field);
}

// One expected field of an object and where its value goes.
struct FieldSlot {
  std::string_view name;
  std::string* str = nullptr;     // a JSON string, or
  std::int64_t* num = nullptr;    // an integer
};

}  // namespace

struct JsonParser::Impl {
  od::parser parser;
  std::string padded;  // reused copy of input that lacks readable padding
  od::document doc;

  bool start(std::string_view text, std::size_t readable, std::string& reason) {
    const char* data = text.data();
    if (readable < text.size() + simdjson::SIMDJSON_PADDING) {
      if (padded.size() < text.size() + simdjson::SIMDJSON_PADDING) padded.resize(text.size() + simdjson::SIMDJSON_PADDING);
      std::memcpy(padded.data(), text.data(), text.size());
      data = padded.data();
      readable = padded.size();
    }
    if (auto e = parser.iterate(data, text.size(), readable).get(doc)) return fail(reason, describe(e));
    return true;
  }

  // After the value: anything but whitespace is an error ("1 2", {"a":1}{"b":2}).
  bool finish(std::string& reason) {
    const char* loc = nullptr;
    if (doc.current_location().get(loc) == simdjson::SUCCESS) return fail(reason, describe(simdjson::TRAILING_CONTENT));
    return true;
  }

  template <std::size_t N>
  bool object(const std::array<FieldSlot, N>& fields, std::string& reason) {
    od::object obj;
    if (auto e = doc.get_object().get(obj)) return fail(reason, describe_value(e, "a JSON object", {}));
    std::array<bool, N> seen{};
    for (auto result : obj) {
      od::field field;
      std::string_view key;
      if (auto e = std::move(result).get(field)) return fail(reason, describe(e));
      if (auto e = field.unescaped_key().get(key)) return fail(reason, describe(e));
      for (std::size_t i = 0; i < N; ++i) {
        if (fields[i].name != key) continue;
        seen[i] = true;
        if (fields[i].str) {
          std::string_view s;
          if (auto e = field.value().get_string().get(s)) return fail(reason, describe_value(e, "a string", key));
          fields[i].str->assign(s);
        } else {
          od::value v = field.value();
          if (auto e = v.get_int64().get(*fields[i].num)) return fail(reason, int64_error(e, v, key));
        }
        break;
      }
      // Unknown fields are skipped, as Flink's JSON format does by default.
    }
    for (std::size_t i = 0; i < N; ++i)
      if (!seen[i]) return fail(reason, "missing field \"" + std::string(fields[i].name) + "\"");
    return finish(reason);
  }
};

JsonParser::JsonParser() : impl_(std::make_unique<Impl>()) {}
JsonParser::~JsonParser() = default;

bool JsonParser::decode(std::string_view text, std::size_t readable, std::int64_t& out, std::string& reason) {
  if (!impl_->start(text, readable, reason)) return false;
  if (auto e = impl_->doc.get_int64().get(out)) return fail(reason, int64_error(e, impl_->doc, {}));
  return impl_->finish(reason);
}

bool JsonParser::decode(std::string_view text, std::size_t readable, std::string& out, std::string& reason) {
  if (!impl_->start(text, readable, reason)) return false;
  std::string_view s;
  if (auto e = impl_->doc.get_string().get(s)) return fail(reason, describe_value(e, "a JSON string", {}));
  out.assign(s);
  return impl_->finish(reason);
}

bool JsonParser::decode(std::string_view text, std::size_t readable, Event& out, std::string& reason) {
  if (!impl_->start(text, readable, reason)) return false;
  return impl_->object(std::array{FieldSlot{"key", &out.key}, FieldSlot{"value", nullptr, &out.value}}, reason);
}

bool JsonParser::decode(std::string_view text, std::size_t readable, WordCount& out, std::string& reason) {
  if (!impl_->start(text, readable, reason)) return false;
  return impl_->object(std::array{FieldSlot{"word", &out.first}, FieldSlot{"count", nullptr, &out.second}}, reason);
}

bool JsonParser::decode(std::string_view text, std::size_t readable, WindowCount& out, std::string& reason) {
  if (!impl_->start(text, readable, reason)) return false;
  return impl_->object(std::array{FieldSlot{"key", &std::get<0>(out)},
                                  FieldSlot{"window_start", nullptr, &std::get<1>(out)},
                                  FieldSlot{"count", nullptr, &std::get<2>(out)}},
                       reason);
}

bool JsonParser::decode(std::string_view text, std::size_t readable, DeadLetter& out, std::string& reason) {
  if (!impl_->start(text, readable, reason)) return false;
  return impl_->object(std::array{FieldSlot{"source", &out.source}, FieldSlot{"file", &out.file},
                                  FieldSlot{"line", nullptr, &out.line}, FieldSlot{"reason", &out.reason},
                                  FieldSlot{"raw", &out.raw}},
                       reason);
}

}  // namespace clink
