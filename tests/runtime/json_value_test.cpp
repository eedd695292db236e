// JsonValue: the owned json that keeps json.hpp out of central headers must behave as
// the nlohmann::json member it replaced (value semantics, null by default).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "clink/core/json_value.hpp"

namespace clink::test {
namespace {

using nlohmann::json;

TEST(JsonValue, DefaultIsNullAndObjectIsEmptyObject) {
  EXPECT_TRUE(JsonValue()->is_null());
  EXPECT_EQ(JsonValue::object(), json::object());
}

TEST(JsonValue, CopiesAreDeep) {
  JsonValue a = json{{"k", 1}};
  JsonValue b = a;
  (*b)["k"] = 2;
  EXPECT_EQ(a, (json{{"k", 1}}));
  EXPECT_EQ(b, (json{{"k", 2}}));
  a = b;
  (*a)["k"] = 3;
  EXPECT_EQ(b, (json{{"k", 2}}));
}

TEST(JsonValue, MovedFromReadsNullAndCanBeWrittenAgain) {
  JsonValue a = json{{"k", 1}};
  JsonValue b = std::move(a);
  EXPECT_EQ(b, (json{{"k", 1}}));
  EXPECT_TRUE(a->is_null());  // NOLINT(bugprone-use-after-move): the documented state
  a = json::array({1, 2});
  EXPECT_EQ(a->size(), 2u);
}

TEST(JsonValue, ConvertsWhereAJsonIsExpected) {
  JsonValue a = json{{"k", "v"}};
  const json& j = a;
  EXPECT_EQ(j.at("k"), "v");
  json copy = *a;
  EXPECT_EQ(copy.dump(), R"({"k":"v"})");
}

}  // namespace
}  // namespace clink::test
