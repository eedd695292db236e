#include "clink/formats/json_codec.hpp"

#include <gtest/gtest.h>

#include "clink/formats/line_decoder.hpp"
#include "clink/formats/line_encoder.hpp"

namespace clink::test {
namespace {

template <class T>
std::string encode(const T& v) {
  std::string s;
  encode_json(v, s);
  return s;
}

// Decodes `text`; returns the reason on failure, "" on success.
template <class T>
std::string decode(const std::string& text, T& out) {
  JsonParser p;
  std::string reason;
  return p.decode(text, out, reason) ? std::string() : reason;
}

TEST(JsonCodec, EncodesEachSpecType) {
  EXPECT_EQ(encode(std::int64_t{5}), "5");
  EXPECT_EQ(encode(std::int64_t{-9223372036854775807LL - 1}), "-9223372036854775808");
  EXPECT_EQ(encode(std::string("a")), R"("a")");
  EXPECT_EQ(encode(Event{"a", 1}), R"({"key":"a","value":1})");
  EXPECT_EQ(encode(WordCount{"a", 1}), R"({"word":"a","count":1})");
  EXPECT_EQ(encode(WindowCount{"k", 10000, 3}), R"({"key":"k","window_start":10000,"count":3})");
  EXPECT_EQ(encode(DeadLetter{"src", "/x/a.jsonl", 17, "missing field \"value\"", "{\"key\":1}"}),
            R"({"source":"src","file":"/x/a.jsonl","line":17,"reason":"missing field \"value\"","raw":"{\"key\":1}"})");
}

TEST(JsonCodec, EscapesStrings) {
  EXPECT_EQ(encode(std::string("q\"b\\s/\n\r\t\b\f\x01\x1f é")), R"("q\"b\\s/\n\r\t\b\f\u0001\u001f é")");
  EXPECT_EQ(encode(std::string()), R"("")");
}

TEST(JsonCodec, DecodesEachSpecType) {
  std::int64_t i = 0;
  EXPECT_EQ(decode(" -42 ", i), "");
  EXPECT_EQ(i, -42);
  std::string s;
  EXPECT_EQ(decode(R"("a\"b\n\u00e9")", s), "");
  EXPECT_EQ(s, "a\"b\né");
  Event e;
  EXPECT_EQ(decode(R"({"value": 7, "extra": [1, {"x": 2}], "key": "k1"})", e), "");
  EXPECT_EQ(e, (Event{"k1", 7}));
  WordCount w;
  EXPECT_EQ(decode(R"({"word":"hello","count":3})", w), "");
  EXPECT_EQ(w, (WordCount{"hello", 3}));
  WindowCount wc;
  EXPECT_EQ(decode(R"({"key":"k","window_start":-5,"count":2})", wc), "");
  EXPECT_EQ(wc, (WindowCount{"k", -5, 2}));
  DeadLetter d;
  DeadLetter expected{"s", "f", 3, "r", "{\"raw\": \"x\"}"};
  EXPECT_EQ(decode(encode(expected), d), "");
  EXPECT_EQ(d, expected);
}

TEST(JsonCodec, ReportsWhyALineIsMalformed) {
  Event e;
  EXPECT_EQ(decode(R"({"key":"a"})", e), "missing field \"value\"");
  EXPECT_EQ(decode(R"({"value":1})", e), "missing field \"key\"");
  EXPECT_EQ(decode(R"({"key":"a","value":"1"})", e), "field \"value\" must be an integer");
  EXPECT_EQ(decode(R"({"key":"a","value":1.5})", e), "field \"value\" must be an integer");
  EXPECT_EQ(decode(R"({"key":2,"value":1})", e), "field \"key\" must be a string");
  EXPECT_EQ(decode(R"([1,2])", e), "expected a JSON object");
  EXPECT_EQ(decode(R"({"key":"a","value":1} {"key":"b","value":2})", e), "unexpected content after the JSON value");
  EXPECT_EQ(decode(R"({"key":"a","value":1)", e).rfind("invalid JSON (", 0), 0u);
  EXPECT_EQ(decode(R"({"key":"a" "value":1})", e).rfind("invalid JSON (", 0), 0u);
  EXPECT_EQ(decode("", e), "empty line");
  std::int64_t i;
  EXPECT_EQ(decode("1 2", i), "unexpected content after the JSON value");
  EXPECT_EQ(decode("\"1\"", i), "expected an integer");
  EXPECT_EQ(decode("99999999999999999999", i), "integer out of the int64 range");
  EXPECT_EQ(decode("9223372036854775808", i), "integer out of the int64 range");
  EXPECT_EQ(decode("1.0", i), "expected an integer");
  EXPECT_EQ(decode(R"({"key":"a","value":-9223372036854775809})", e), "field \"value\": integer out of the int64 range");
  std::string s;
  EXPECT_EQ(decode("12", s), "expected a JSON string");
  EXPECT_EQ(decode("\"a\" \"b\"", s), "unexpected content after the JSON value");
}

TEST(JsonCodec, ParsesInPlaceWhenPaddingIsReadable) {
  // A line inside a larger buffer, followed by other lines: only the line is parsed.
  std::string buffer = "{\"key\":\"a\",\"value\":1}\n{\"key\":\"b\",\"value\":2}";
  buffer.resize(buffer.size() + kJsonPadding, ' ');
  JsonParser p;
  std::string reason;
  Event e;
  ASSERT_TRUE(p.decode(std::string_view(buffer.data(), 21), buffer.size(), e, reason)) << reason;
  EXPECT_EQ(e, (Event{"a", 1}));
  std::int64_t n = 0;
  std::string numbers = "12\n34";
  numbers.resize(numbers.size() + kJsonPadding, '9');
  ASSERT_TRUE(p.decode(std::string_view(numbers.data(), 2), numbers.size(), n, reason)) << reason;
  EXPECT_EQ(n, 12);
}

TEST(JsonCodec, LineEncoderWritesTextOrJsonLines) {
  std::string out;
  LineEncoder<Event>(LineFormat::kText).encode(Event{"a", 1}, out);
  LineEncoder<Event>(LineFormat::kJson).encode(Event{"a", 1}, out);
  EXPECT_EQ(out, "(a,1)\n{\"key\":\"a\",\"value\":1}\n");
  EXPECT_THROW(LineEncoder<double>(LineFormat::kJson), ClinkError);
  EXPECT_THROW(make_line_decoder<Event>(LineFormat::kText), ClinkError);
}

}  // namespace
}  // namespace clink::test
