#include <gtest/gtest.h>

#include "expr_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {
ExprPtr nstr() { return null_of(LogicalType::string()); }
// JSON_VALUE(j, p, on_empty, default, on_error, default) as the binder lowers the clauses.
std::string json_value(const char* j, const char* p, const char* on_empty, ExprPtr d1, const char* on_error, ExprPtr d2) {
  return eval_call("JSON_VALUE", {str(j), str(p), str(on_empty), std::move(d1), str(on_error), std::move(d2)});
}
}  // namespace

TEST(JsonFunctionTest, JsonValue) {
  EXPECT_EQ(eval_call("JSON_VALUE", {str(R"({"a": true})"), str("$.a")}), "true");  // Flink doc
  EXPECT_EQ(eval_call("JSON_VALUE", {str(R"({"a": "x y"})"), str("$.a")}), "x y");
  EXPECT_EQ(eval_call("JSON_VALUE", {str(R"({"a": 1.0})"), str("$.a")}), "1.0");
  EXPECT_EQ(eval_call("JSON_VALUE", {str(R"({"a": {"b": [10, 20]}})"), str("$.a.b[1]")}), "20");
  EXPECT_EQ(eval_call("JSON_VALUE", {str(R"({"a b": 3})"), str("$['a b']")}), "3");
  EXPECT_EQ(eval_call("JSON_VALUE", {str(R"({"a.b": [0.998,0.996]})"), str(R"($.["a.b"][0])")}), "0.998");  // Flink doc
  EXPECT_EQ(json_value(R"({"contains blank": "right"})", "strict $.['contains blank']", "NULL", nstr(), "DEFAULT", str("wrong")),
            "right");  // Flink doc
  EXPECT_EQ(eval_call("JSON_VALUE", {str(R"({"a": [1, 2]})"), str("$.a[*]")}), "NULL");  // a list is not a scalar
  EXPECT_EQ(eval_call("JSON_VALUE", {str(R"({"a": 12345678901234})"), str("$.a")}), "12345678901234");
  EXPECT_EQ(eval_call("JSON_VALUE", {str(R"({"a": -0.5e3})"), str("$.a")}), "-500.0");
  EXPECT_EQ(eval_call("JSON_VALUE", {str(R"({"a": 1e10})"), str("$.a")}), "1.0E10");  // Jackson: Double.toString
  EXPECT_EQ(eval_call("JSON_VALUE", {str(R"({"a": null})"), str("$.a")}), "NULL");
  EXPECT_EQ(eval_call("JSON_VALUE", {str(R"({"a": 1})"), str("$.b")}), "NULL");       // empty -> NULL
  EXPECT_EQ(eval_call("JSON_VALUE", {str(R"({"a": [1]})"), str("$.a")}), "NULL");     // non-scalar -> error -> NULL
  EXPECT_EQ(eval_call("JSON_VALUE", {str("{not json"), str("$.a")}), "NULL");         // error -> NULL
  EXPECT_EQ(eval_call("JSON_VALUE", {nstr(), str("$.a")}), "NULL");
  // Flink doc: JSON_VALUE('{"a": true}', 'lax $.b' DEFAULT FALSE ON EMPTY) and ... ON ERROR.
  EXPECT_EQ(json_value(R"({"a": true})", "lax $.b", "DEFAULT", str("false"), "NULL", nstr()), "false");
  EXPECT_EQ(json_value(R"({"a": true})", "lax $.b", "DEFAULT", boolean(false), "NULL", nstr()), "false");  // Flink doc: DEFAULT FALSE
  EXPECT_EQ(json_value(R"({"a": true})", "lax $.b", "DEFAULT", f64(0.5), "NULL", nstr()), "0.5");
  EXPECT_EQ(json_value(R"({"a": true})", "lax $.b", "DEFAULT", null_of(LogicalType::int_type()), "NULL", nstr()), "NULL");
  EXPECT_EQ(json_value(R"({"a": true})", "strict $.b", "NULL", nstr(), "DEFAULT", str("false")), "false");
  EXPECT_EQ(json_value(R"({"a": true})", "strict $.a", "NULL", nstr(), "DEFAULT", str("false")), "true");
  EXPECT_THROW(json_value(R"({"a": true})", "lax $.b", "ERROR", nstr(), "NULL", nstr()), SqlRuntimeError);
  EXPECT_THROW(json_value("[", "$", "NULL", nstr(), "ERROR", nstr()), SqlRuntimeError);
  EXPECT_THROW(eval_call("JSON_VALUE", {str("{}"), str("a.b")}), SqlTypeError);  // a path must start with '$'
}

TEST(JsonFunctionTest, JsonQuery) {
  const char* doc = R"({"a": {"b": 1}, "c": [1, 2], "d": "x"})";
  EXPECT_EQ(eval_call("JSON_QUERY", {str(doc), str("$.a")}), R"({"b":1})");
  EXPECT_EQ(eval_call("JSON_QUERY", {str(doc), str("$.c")}), "[1,2]");
  EXPECT_EQ(eval_call("JSON_QUERY", {str(doc), str("$.d")}), "NULL");  // scalar without wrapper: error -> NULL
  EXPECT_EQ(eval_call("JSON_QUERY", {str(doc), str("$.d"), str("CONDITIONAL"), str("NULL"), str("NULL")}), R"(["x"])");
  EXPECT_EQ(eval_call("JSON_QUERY", {str(doc), str("$.c"), str("CONDITIONAL"), str("NULL"), str("NULL")}), "[1,2]");
  EXPECT_EQ(eval_call("JSON_QUERY", {str(doc), str("$.c"), str("UNCONDITIONAL"), str("NULL"), str("NULL")}), "[[1,2]]");
  // A wildcard selects a list: one array value (Jayway/Calcite).
  EXPECT_EQ(eval_call("JSON_QUERY", {str(doc), str("$.c[*]")}), "[1,2]");
  EXPECT_EQ(eval_call("JSON_QUERY", {str(doc), str("$.c[*]"), str("UNCONDITIONAL"), str("NULL"), str("NULL")}), "[[1,2]]");
  EXPECT_EQ(eval_call("JSON_QUERY", {str(doc), str("$.z[*]")}), "[]");
  // Flink doc examples.
  EXPECT_EQ(eval_call("JSON_QUERY", {str(R"({ "a": { "b": 1 } })"), str("$.a")}), R"({"b":1})");
  EXPECT_EQ(eval_call("JSON_QUERY", {str("[1, 2]"), str("$")}), "[1,2]");
  EXPECT_EQ(eval_call("JSON_QUERY", {str(R"({"a":[{"c":"c1"},{"c":"c2"}]})"), str("lax $.a[*].c")}), R"(["c1","c2"])");
  EXPECT_EQ(eval_call("JSON_QUERY", {str("{}"), str("$"), str("CONDITIONAL"), str("NULL"), str("NULL")}), "[{}]");
  EXPECT_EQ(eval_call("JSON_QUERY", {str("[1, 2]"), str("$"), str("CONDITIONAL"), str("NULL"), str("NULL")}), "[1,2]");
  EXPECT_EQ(eval_call("JSON_QUERY", {str("[1, 2]"), str("$"), str("UNCONDITIONAL"), str("NULL"), str("NULL")}), "[[1,2]]");
  EXPECT_EQ(eval_call("JSON_QUERY", {str("1"), str("$")}), "NULL");
  EXPECT_EQ(eval_call("JSON_QUERY", {str("1"), str("$"), str("CONDITIONAL"), str("NULL"), str("NULL")}), "[1]");
  EXPECT_EQ(eval_call("JSON_QUERY", {str("{}"), str("lax $.invalid"), str("WITHOUT"), str("EMPTY OBJECT"), str("NULL")}), "{}");
  EXPECT_EQ(eval_call("JSON_QUERY", {str("{}"), str("strict $.invalid"), str("WITHOUT"), str("NULL"), str("EMPTY ARRAY")}), "[]");
  EXPECT_EQ(eval_call("JSON_QUERY", {str(doc), str("$.z"), str("WITHOUT"), str("EMPTY ARRAY"), str("NULL")}), "[]");
  EXPECT_EQ(eval_call("JSON_QUERY", {str(doc), str("$.d"), str("WITHOUT"), str("NULL"), str("EMPTY OBJECT")}), "{}");
  EXPECT_THROW(eval_call("JSON_QUERY", {str(doc), str("$.d"), str("WITHOUT"), str("NULL"), str("ERROR")}), SqlRuntimeError);
  EXPECT_EQ(eval_call("JSON_QUERY", {nstr(), str("$")}), "NULL");
  EXPECT_EQ(eval_call("JSON_QUERY", {str(R"({"s": "a\"b\n"})"), str("$")}), R"({"s":"a\"b\n"})");
}

TEST(JsonFunctionTest, JsonExistsAndIsJson) {
  EXPECT_EQ(eval_call("JSON_EXISTS", {str(R"({"a": true})"), str("$.a")}), "TRUE");   // Flink doc
  EXPECT_EQ(eval_call("JSON_EXISTS", {str(R"({"a": true})"), str("$.b")}), "FALSE");  // Flink doc
  EXPECT_EQ(eval_call("JSON_EXISTS", {str(R"({"a": [{"b": 1}]})"), str("$.a[0].b")}), "TRUE");  // Flink doc
  EXPECT_EQ(eval_call("JSON_EXISTS", {str(R"({"a": null})"), str("$.a")}), "TRUE");
  EXPECT_EQ(eval_call("JSON_EXISTS", {str(R"({"a": true})"), str("strict $.b"), str("TRUE")}), "TRUE");   // Flink doc
  EXPECT_EQ(eval_call("JSON_EXISTS", {str(R"({"a": true})"), str("strict $.b"), str("FALSE")}), "FALSE");
  EXPECT_EQ(eval_call("JSON_EXISTS", {str(R"({"a": true})"), str("strict $.b"), str("UNKNOWN")}), "NULL");
  EXPECT_THROW(eval_call("JSON_EXISTS", {str("{"), str("$"), str("ERROR")}), SqlRuntimeError);
  EXPECT_EQ(eval_call("JSON_EXISTS", {nstr(), str("$")}), "NULL");
  EXPECT_EQ(eval_call("IS_JSON", {str("1")}), "TRUE");  // Flink doc: '1' IS JSON
  EXPECT_EQ(eval_call("IS_JSON", {str("[]")}), "TRUE");
  EXPECT_EQ(eval_call("IS_JSON", {str("{}")}), "TRUE");
  EXPECT_EQ(eval_call("IS_JSON", {str(R"("abc")")}), "TRUE");
  EXPECT_EQ(eval_call("IS_JSON", {str("abc")}), "FALSE");
  EXPECT_EQ(eval_call("IS_JSON", {str("")}), "FALSE");
  EXPECT_EQ(eval_call("IS_JSON", {nstr()}), "FALSE");
  EXPECT_EQ(eval_call("IS_JSON", {str("{}"), str("OBJECT")}), "TRUE");
  EXPECT_EQ(eval_call("IS_JSON", {str("{}"), str("ARRAY")}), "FALSE");
  EXPECT_EQ(eval_call("IS_JSON", {str("[]"), str("ARRAY")}), "TRUE");
  EXPECT_EQ(eval_call("IS_JSON", {str("1"), str("SCALAR")}), "TRUE");
  EXPECT_EQ(eval_call("IS_JSON", {str("{}"), str("SCALAR")}), "FALSE");
  EXPECT_EQ(call("IS_JSON", {nstr()})->type.to_string(), "BOOLEAN NOT NULL");
}

TEST(JsonFunctionTest, Constructors) {
  EXPECT_EQ(eval_call("JSON_STRING", {i32(1)}), "1");  // Flink doc
  EXPECT_EQ(eval_call("JSON_STRING", {boolean(true)}), "true");
  EXPECT_EQ(eval_call("JSON_STRING", {str("Hello, World!")}), R"("Hello, World!")");
  EXPECT_EQ(eval_call("JSON_STRING", {str("a\"b")}), R"("a\"b")");
  EXPECT_EQ(eval_call("JSON_STRING", {nstr()}), "NULL");
  EXPECT_EQ(eval_call("JSON_STRING", {f64(1e10)}), "1.0E10");
  EXPECT_EQ(eval_call("JSON_STRING", {dec("1.20", 3, 2)}), "1.20");
  auto arr = expr::literal(Value(ValueList{{Value(std::int64_t{1}), Value(std::int64_t{2})}}),
                           LogicalType::array(LogicalType::int_type()).not_null());
  EXPECT_EQ(eval_call("JSON_STRING", {arr}), "[1,2]");  // Flink doc: JSON_STRING(ARRAY[1, 2])
  auto row = expr::literal(Value(ValueList{{Value("x"), Value::null()}}),
                           LogicalType::row({{"a", LogicalType::string()}, {"b", LogicalType::int_type()}}).not_null());
  EXPECT_EQ(eval_call("JSON_STRING", {row}), R"({"a":"x","b":null})");
  EXPECT_EQ(eval_call("JSON_ARRAY", {arr, i32(3)}), "[[1,2],3]");
  EXPECT_EQ(eval_call("JSON_ARRAY", {}), "[]");
  EXPECT_EQ(eval_call("JSON_ARRAY", {i32(1), str("2"), nstr(), boolean(false)}), R"([1,"2",false])");
  EXPECT_EQ(eval_call("JSON_ARRAY_EX", {str("NULL"), str(""), i32(1), nstr()}), "[1,null]");
  EXPECT_EQ(eval_call("JSON_ARRAY_EX", {str("ABSENT"), str(""), nstr()}), "[]");  // Flink doc
  EXPECT_EQ(eval_call("JSON_ARRAY", {str("2")}), R"(["2"])");
  EXPECT_EQ(eval_call("JSON_OBJECT", {}), "{}");
  EXPECT_EQ(eval_call("JSON_OBJECT", {str("K1"), str("V1"), str("K2"), nstr()}), R"({"K1":"V1","K2":null})");
  EXPECT_EQ(eval_call("JSON_OBJECT_EX", {str("ABSENT"), str("00"), str("K1"), str("V1"), str("K2"), nstr()}), R"({"K1":"V1"})");
  EXPECT_EQ(eval_call("JSON_OBJECT_EX", {str("NULL"), str(""), str("K1"), nstr()}), R"({"K1":null})");  // Flink doc
  EXPECT_THROW(call("JSON_OBJECT", {str("K1")}), SqlTypeError);
  // Nested constructors (the binder marks them raw): Flink doc '{"K1":{"K2":"V"}}' and '[[1]]'.
  auto inner = call("JSON_OBJECT", {str("K2"), str("V")});
  EXPECT_EQ(eval_call("JSON_OBJECT_EX", {str("NULL"), str("1"), str("K1"), inner}), R"({"K1":{"K2":"V"}})");
  EXPECT_EQ(eval_call("JSON_OBJECT", {str("K1"), inner}), R"({"K1":"{\"K2\":\"V\"}"})");  // unmarked: a string
  EXPECT_EQ(eval_call("JSON_ARRAY_EX", {str("ABSENT"), str("1"), call("JSON_ARRAY", {i32(1)})}), "[[1]]");
  EXPECT_THROW(eval_call("JSON_ARRAY_EX", {str("ABSENT"), str("1"), i32(1)}), SqlTypeError);
  EXPECT_THROW(eval_call("JSON_ARRAY_EX", {str("SOMETIMES"), str(""), i32(1)}), SqlTypeError);
  EXPECT_THROW(eval_call("JSON_OBJECT", {nstr(), i32(1)}), SqlRuntimeError);
}

TEST(JsonFunctionTest, ColumnWithPerRowPaths) {
  auto schema = make_schema({{"j", LogicalType::string()}, {"p", LogicalType::string()}});
  ColumnBatch b(schema);
  for (auto [j, p] : {std::pair{R"({"a": 1})", "$.a"}, std::pair{R"({"b": [5]})", "$.b[0]"}, std::pair{"oops", "$"}}) {
    b.column(0).append_string(j);
    b.column(1).append_string(p);
  }
  b.column(0).append_null();
  b.column(1).append_string("$");
  b.commit_rows(4);
  auto e = call("JSON_VALUE", {expr::column(0, LogicalType::string(), "j"), expr::column(1, LogicalType::string(), "p")});
  EXPECT_EQ(eval_rows(e, b), (std::vector<std::string>{"1", "5", "NULL", "NULL"}));
}

}  // namespace clink::test
