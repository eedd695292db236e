// sql_process_table_function with several table arguments (Flink's multi-input PTFs) run
// directly (OpHarness; rows pushed to input 0 or 1 in a chosen order): Flink's
// GreetingWithLastPurchase example, whose rows share the key's state across the tables
// and carry the key in each table's partition columns; and the signatures Flink refuses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sql_ops_test_support.hpp"

#include "clink/sql/function/process_table_function.hpp"

namespace clink::test {
namespace {

using ::testing::ElementsAre;

SchemaPtr visits() { return sql::make_schema({{"name", LogicalType::string()}}); }
SchemaPtr purchases() { return sql::make_schema({{"customer", LogicalType::string()}, {"item", LogicalType::string()}}); }

// GreetingWithLastPurchase(visit => TABLE Visits PARTITION BY name, purchase => TABLE
// Purchases PARTITION BY customer): output name | customer | EXPR$0.
json greeting_params() {
  return {{"input_schemas", json::array({schema_json(visits()), schema_json(purchases())})},
          {"schema", schema_json(sql::make_schema({{"name", LogicalType::string()},
                                                   {"customer", LogicalType::string()},
                                                   {"EXPR$0", LogicalType::string()}}))},
          {"function", "clink.examples.ptf.GreetingWithLastPurchase"},
          {"set_semantics", true},
          {"partition_keys", json::array({0})},
          {"more_tables", json::array({{{"partition_keys", json::array({0})}}})},
          {"args", json::array()}};
}

ColumnBatch names(const std::vector<std::string>& n) {
  std::vector<Row> out;
  for (const auto& x : n) out.push_back({{Value(x)}});
  return batch(visits(), out);
}
ColumnBatch bought(const std::string& customer, const std::string& item) {
  return batch(purchases(), {{{Value(customer), Value(item)}}});
}

// Flink's documented result: Alice's purchase reached the function before her visit.
TEST(SqlPtfMulti, GreetingWithLastPurchaseSharesStatePerKeyAcrossTables) {
  OpHarness h("sql_process_table_function", greeting_params());
  h.push(names({"Bob"}));
  h.push(bought("Alice", "milk"), 1);
  h.push(names({"Alice", "Bob"}));
  EXPECT_THAT(h.lines, ElementsAre("+I[Bob, Bob, Hello Bob, let me know if I can help!]",
                                   "+I[Alice, Alice, Hello Alice, here to buy milk again?]",
                                   "+I[Bob, Bob, Hello Bob, let me know if I can help!]"));
  // A later purchase of Bob's replaces nothing of Alice's: state is per key.
  h.push(bought("Bob", "bread"), 1);
  h.push(names({"Bob", "Alice"}));
  EXPECT_THAT(std::vector<std::string>(h.lines.begin() + 3, h.lines.end()),
              ElementsAre("+I[Bob, Bob, Hello Bob, here to buy bread again?]",
                          "+I[Alice, Alice, Hello Alice, here to buy milk again?]"));
}

TEST(SqlPtfMulti, TheCallMustMatchTheSignaturesTableCount) {
  json p = greeting_params();
  p.erase("more_tables");
  p["input_schemas"] = json::array({schema_json(visits())});
  try {
    OpHarness h("sql_process_table_function", p);
    FAIL() << "no error";
  } catch (const ClinkError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("the call has 1 table arguments, "
                                               "clink.examples.ptf.GreetingWithLastPurchase takes 2"));
  }
}

class Nothing final : public sql::ProcessTableFunction {
 public:
  void eval(sql::PtfContext&, const sql::PtfRow&, const sql::PtfArgs&) override {}
};

std::string refusal(const sql::PtfSignature& sig) {
  try {
    sql::ProcessTableFunctionRegistry::process().add("Refused", sig, [] { return std::make_unique<Nothing>(); });
  } catch (const ClinkError& e) {
    return e.what();
  }
  return "accepted";
}

// Flink's rules for multiple table arguments (ProcessTableFunctionTest's error cases).
TEST(SqlPtfMulti, SignaturesFlinkRefusesAreRefusedAtRegistration) {
  sql::PtfSignature sig;
  sig.output = {{"x", LogicalType::bigint()}};
  sig.more_table_args = {"other"};
  sig.semantics = sql::PtfTableSemantics::kRow;
  EXPECT_EQ(refusal(sig), "process table function Refused: All table arguments must use set semantics if multiple "
                          "table arguments are declared.");
  sig.semantics = sql::PtfTableSemantics::kSet;
  sig.pass_columns_through = true;
  EXPECT_EQ(refusal(sig), "process table function Refused: Pass-through columns are not supported if multiple table "
                          "arguments are declared.");
  sig.pass_columns_through = false;
  sig.more_table_args.clear();
  for (int i = 2; i <= 21; ++i) sig.more_table_args.push_back("in" + std::to_string(i));
  EXPECT_EQ(refusal(sig), "process table function Refused: Unsupported table argument count. Currently, the number of "
                          "input tables is limited to 20.");
  sig.more_table_args.pop_back();
  EXPECT_EQ(refusal(sig), "accepted");
  sig.more_table_args.back() = "INPUT";
  EXPECT_EQ(refusal(sig), "process table function Refused: table argument names must be distinct and not empty");
}

}  // namespace
}  // namespace clink::test
