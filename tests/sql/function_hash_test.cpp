#include <gtest/gtest.h>

#include "expr_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

TEST(HashFunctionTest, DigestsAsLowercaseHex) {
  EXPECT_EQ(eval_call("MD5", {str("")}), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(eval_call("MD5", {str("abc")}), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(eval_call("SHA1", {str("abc")}), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(eval_call("SHA224", {str("abc")}), "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7");
  EXPECT_EQ(eval_call("SHA256", {str("abc")}), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(eval_call("SHA384", {str("abc")}),
            "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7");
  EXPECT_EQ(eval_call("SHA512", {str("abc")}),
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd"
            "454d4423643ce80e2a9ac94fa54ca49f");
  EXPECT_EQ(eval_call("SHA2", {str("abc"), i32(256)}), eval_call("SHA256", {str("abc")}));
  EXPECT_EQ(eval_call("SHA2", {str("abc"), i32(224)}), eval_call("SHA224", {str("abc")}));
  EXPECT_EQ(eval_call("SHA2", {str("abc"), i32(384)}), eval_call("SHA384", {str("abc")}));
  EXPECT_EQ(eval_call("SHA2", {str("abc"), i32(512)}), eval_call("SHA512", {str("abc")}));
  EXPECT_EQ(eval_call("MD5", {str("The quick brown fox jumps over the lazy dog")}), "9e107d9d372bb6826bd81d3542a419d6");
}

TEST(HashFunctionTest, NullsAndBadLengths) {
  auto nstr = null_of(LogicalType::string());
  EXPECT_EQ(eval_call("MD5", {nstr}), "NULL");
  EXPECT_EQ(eval_call("SHA256", {nstr}), "NULL");
  EXPECT_EQ(eval_call("SHA2", {nstr, i32(256)}), "NULL");
  EXPECT_EQ(eval_call("SHA2", {str("abc"), null_of(LogicalType::int_type())}), "NULL");
  EXPECT_THROW(eval_call("SHA2", {str("abc"), i32(100)}), SqlRuntimeError);
  EXPECT_EQ(call("MD5", {str("x")})->type.to_string(), "STRING NOT NULL");
  EXPECT_EQ(call("MD5", {nstr})->type.to_string(), "STRING");
}

TEST(HashFunctionTest, ColumnOfRows) {
  auto schema = make_schema({{"s", LogicalType::string()}});
  ColumnBatch b(schema);
  b.column(0).append_string("");
  b.column(0).append_null();
  b.column(0).append_string("abc");
  b.commit_rows(3);
  EXPECT_EQ(eval_rows(call("MD5", {expr::column(0, LogicalType::string(), "s")}), b),
            (std::vector<std::string>{"d41d8cd98f00b204e9800998ecf8427e", "NULL", "900150983cd24fb0d6963f7d28e17f72"}));
}

}  // namespace clink::test
