#pragma once
// JSON-lines codec for the spec record types (see api/spec_types.hpp).
//
// Encoding is hand-written into a caller-owned std::string (one reused buffer per
// writer, no DOM). Decoding uses simdjson's on-demand parser; JsonParser hides it so
// that only this library, not every user of the header, depends on simdjson.
//
// Shapes, one JSON value per line:
//   int64 5 | string "a" | event {"key":"a","value":1} | word_count {"word":"a","count":1}
//   window_count {"key":"a","window_start":0,"count":3}
//   dead_letter {"source":..,"file":..,"line":..,"reason":..,"raw":..}
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "clink/api/spec_types.hpp"
#include "clink/connectors/dead_letter.hpp"
#include "clink/formats/json_escape.hpp"

namespace clink {

// Bytes that must be readable after a line handed to JsonParser without copying it
// (simdjson reads whole SIMD blocks). Checked against SIMDJSON_PADDING in the .cpp.
inline constexpr std::size_t kJsonPadding = 64;

// Exactly int64: a double or bool must not convert silently to an integer encoding.
template <std::same_as<std::int64_t> I>
void encode_json(I v, std::string& out) {
  format_value(v, out);
}
inline void encode_json(const std::string& v, std::string& out) { append_json_string(v, out); }
inline void encode_json(const Event& e, std::string& out) {
  out.append("{\"key\":");
  append_json_string(e.key, out);
  out.append(",\"value\":");
  format_value(e.value, out);
  out.push_back('}');
}
inline void encode_json(const WordCount& w, std::string& out) {
  out.append("{\"word\":");
  append_json_string(w.first, out);
  out.append(",\"count\":");
  format_value(w.second, out);
  out.push_back('}');
}
inline void encode_json(const WindowCount& w, std::string& out) {
  out.append("{\"key\":");
  append_json_string(std::get<0>(w), out);
  out.append(",\"window_start\":");
  format_value(std::get<1>(w), out);
  out.append(",\"count\":");
  format_value(std::get<2>(w), out);
  out.push_back('}');
}
// The text form of a dead letter is already its JSON form.
inline void encode_json(const DeadLetter& d, std::string& out) { to_string_into(d, out); }

template <class T>
concept JsonEncodable = requires(const T& v, std::string& out) { encode_json(v, out); };

// Decodes one JSON value per call into a spec type. Reuses simdjson's buffers across
// calls, so the only allocation per record is the decoded value's own strings.
// Not thread-safe: one parser per reader.
class JsonParser {
 public:
  JsonParser();
  ~JsonParser();
  JsonParser(const JsonParser&) = delete;
  JsonParser& operator=(const JsonParser&) = delete;

  // Parses `text`. `readable` is how many bytes from text.data() may be read; when it
  // is at least text.size() + kJsonPadding the text is parsed in place, otherwise it
  // is copied into an internal padded buffer first. On malformed input returns false
  // and sets `reason` (e.g. `missing field "value"`); `out` is then unspecified.
  bool decode(std::string_view text, std::size_t readable, std::int64_t& out, std::string& reason);
  bool decode(std::string_view text, std::size_t readable, std::string& out, std::string& reason);
  bool decode(std::string_view text, std::size_t readable, Event& out, std::string& reason);
  bool decode(std::string_view text, std::size_t readable, WordCount& out, std::string& reason);
  bool decode(std::string_view text, std::size_t readable, WindowCount& out, std::string& reason);
  bool decode(std::string_view text, std::size_t readable, DeadLetter& out, std::string& reason);

  // Convenience for tests and cold paths: copies `text` into the padded buffer.
  template <class T>
  bool decode(std::string_view text, T& out, std::string& reason) {
    return decode(text, 0, out, reason);
  }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

template <class T>
concept JsonDecodable = requires(JsonParser& p, std::string_view s, std::size_t n, T& out, std::string& r) {
  { p.decode(s, n, out, r) } -> std::same_as<bool>;
};

}  // namespace clink
