#pragma once
// Turning one line of input into one record. File sources read lines; a decoder says
// what they mean. A decoder reports malformed input instead of throwing so that the
// source decides: fail the job, or route the line to the dead-letter output.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include "clink/core/type_name.hpp"

#include "clink/formats/json_codec.hpp"
#include "clink/formats/line_format.hpp"

namespace clink {

template <class T>
class LineDecoder {
 public:
  virtual ~LineDecoder() = default;
  // Decodes `line` (without its terminator). `readable` is how many bytes from
  // line.data() may be read (see kJsonPadding). Returns false and sets `reason` if the
  // line is malformed.
  virtual bool decode(std::string_view line, std::size_t readable, T& out, std::string& reason) = 0;
  // Whether a line of only whitespace carries no record. JSON Lines allows no empty
  // value, so blank lines there are separators, not data; in text they are data.
  virtual bool skips_blank_lines() const { return false; }
  // For messages: "malformed JSON in ...".
  virtual const char* format_label() const = 0;
};

// The line itself, as a string (Flink's TextLineInputFormat).
class TextLineDecoder final : public LineDecoder<std::string> {
 public:
  bool decode(std::string_view line, std::size_t, std::string& out, std::string&) override {
    out.assign(line);
    return true;
  }
  const char* format_label() const override { return "text"; }
};

template <JsonDecodable T>
class JsonLineDecoder final : public LineDecoder<T> {
 public:
  bool decode(std::string_view line, std::size_t readable, T& out, std::string& reason) override {
    return parser_.decode(line, readable, out, reason);
  }
  bool skips_blank_lines() const override { return true; }
  const char* format_label() const override { return "JSON"; }

 private:
  JsonParser parser_;
};

// The decoder for `format` and T; throws ClinkError if T cannot be read in it.
template <class T>
std::unique_ptr<LineDecoder<T>> make_line_decoder(LineFormat format) {
  if (format == LineFormat::kText) {
    if constexpr (std::is_same_v<T, std::string>) return std::make_unique<TextLineDecoder>();
    else throw ClinkError("the text format reads lines as strings, not " + type_name<T>());
  } else {
    if constexpr (JsonDecodable<T>) return std::make_unique<JsonLineDecoder<T>>();
    else throw ClinkError("no JSON decoder for record type " + type_name<T>());
  }
}

}  // namespace clink
