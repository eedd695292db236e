// WebAssembly UDFs (docs/udf-wasm.md) beyond what tests/sql/udf_wasm.test shows as rows:
// the fuel limit, rejected modules (imports, a signature the export does not have, a
// module above 32 MiB), the catalog directory across sessions with the module file gone,
// a job whose spec carries the module to a process that never saw the CREATE, and a wasm
// aggregate's state across a checkpoint (serialised accumulators restored exactly).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "clink/connectors/sql/sql_sinks.hpp"
#include "clink/registry/builtin_registry.hpp"
#include "clink/runtime/executor.hpp"
#include "clink/runtime/job_graph_spec.hpp"
#include "clink/sql/catalog/catalog.hpp"
#include "clink/sql/common/sql_error.hpp"
#include "clink/sql/function/aggregate.hpp"
#include "clink/sql/function/wasm_udf.hpp"
#include "clink/sql/handler/statement_runner.hpp"

namespace clink::test {
namespace {

using namespace clink::sql;
namespace fs = std::filesystem;

const std::string kUdfs = std::string(CLINK_SOURCE_DIR) + "/tests/wasm/udfs.wat";
const std::string kImports = std::string(CLINK_SOURCE_DIR) + "/tests/wasm/imports.wat";

class WasmUdf : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!wasm_udfs_built()) GTEST_SKIP() << "built with -DCLINK_WITH_WASM=OFF";
    dir_ = fs::temp_directory_path() / ("clink_wasm_udf_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "t.json") << R"({"k": "a", "v": 3})" "\n" R"({"k": "b", "v": 4})" "\n"
                                   << R"({"k": "a", "v": 5})" "\n";
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  std::string table_ddl() const {
    return "CREATE TABLE t (k STRING, v BIGINT) WITH ('connector' = 'filesystem', 'path' = '" +
           (dir_ / "t.json").string() + "', 'format' = 'json');";
  }
  // The error of running `sql` (a statement that must fail).
  static std::string error_of(StatementRunner& runner, const std::string& sql) {
    try {
      runner.run(sql);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "(no error)";
  }
  // Runs a SELECT's job to completion; its collected changelog.
  static std::vector<std::string> rows_of(const nlohmann::json& spec) {
    JobGraph graph = from_spec(spec, builtin_registry());
    execute(graph);
    std::string name;
    for (const auto& op : spec.at("ops"))
      if (op.at("type") == "sql_collect_sink") name = op.at("params").at("name").get<std::string>();
    auto rows = SqlCollectResults::get(name)->changelog();
    SqlCollectResults::drop(name);
    return rows;
  }
  fs::path dir_;
};

TEST_F(WasmUdf, ARunawayLoopRunsOutOfFuelAndFailsTheJobNamingTheFunction) {
  Catalog catalog;
  StatementRunner runner(catalog);
  runner.run(table_ddl() + "CREATE FUNCTION spin AS '" + kUdfs + "' LANGUAGE WASM;" +
             "CREATE FUNCTION plus AS '" + kUdfs + "' LANGUAGE WASM;");
  auto spec = runner.run("SELECT spin(v) FROM t").at(0).spec;
  auto start = std::chrono::steady_clock::now();
  try {
    rows_of(spec);
    FAIL() << "the runaway loop returned";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("wasm function spin: the call ran out of fuel (100000000 units; a runaway "
                                         "loop?)"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  // The trapped instance was dropped: the module's other functions still run.
  EXPECT_EQ(rows_of(runner.run("SELECT plus(v, 1) FROM t").at(0).spec),
            (std::vector<std::string>{"+I[4]", "+I[5]", "+I[6]"}));
}

TEST_F(WasmUdf, AModuleWithImportsIsRejected) {
  Catalog catalog;
  StatementRunner runner(catalog);
  EXPECT_EQ(error_of(runner, "CREATE FUNCTION noisy AS '" + kImports + "' LANGUAGE WASM"),
            "line 1, column 26: CREATE FUNCTION noisy: wasm function noisy: the module imports env.log (1 import); a "
            "UDF module must be self-contained (no imports: no WASI, no host functions)");
  EXPECT_EQ(catalog.function("noisy"), nullptr);
}

TEST_F(WasmUdf, ADeclaredSignatureTheExportDoesNotHaveIsRejected) {
  Catalog catalog;
  StatementRunner runner(catalog);
  EXPECT_EQ(error_of(runner, "CREATE FUNCTION plus(a INT, b INT) RETURNS INT AS '" + kUdfs + "' LANGUAGE WASM"),
            "line 1, column 51: CREATE FUNCTION plus: wasm function plus: the export `plus` is (i64, i64) -> i64 but "
            "the declared (INT, INT) RETURNS INT needs (i32, i32) -> i32");
  EXPECT_EQ(error_of(runner, "CREATE FUNCTION shout(s BIGINT) RETURNS STRING AS '" + kUdfs + "' LANGUAGE WASM"),
            "line 1, column 51: CREATE FUNCTION shout: wasm function shout: the export `shout` is (i32, i32) -> i64 "
            "but the declared (BIGINT) RETURNS STRING needs (i64) -> i64");
}

TEST_F(WasmUdf, AModuleAbove32MiBIsRejected) {
  fs::path big = dir_ / "big.wasm";
  std::ofstream(big).put('\0');
  fs::resize_file(big, kWasmModuleLimit + 1);  // sparse: no 32 MiB written
  Catalog catalog;
  StatementRunner runner(catalog);
  EXPECT_EQ(error_of(runner, "CREATE FUNCTION big AS '" + big.string() + "' LANGUAGE WASM"),
            "line 1, column 24: CREATE FUNCTION big: the wasm module '" + big.string() +
                "' has 33554433 bytes, above the limit of 33554432 bytes (32 MiB)");
}

TEST_F(WasmUdf, TheCatalogDirectoryKeepsTheModuleAcrossSessions) {
  fs::path module = dir_ / "udfs.wat";
  fs::copy_file(kUdfs, module);
  fs::path catalog_dir = dir_ / "catalog";
  {
    Catalog catalog;
    catalog.set_persistence_dir(catalog_dir.string());
    StatementRunner runner(catalog);
    runner.run(table_ddl() + "CREATE FUNCTION plus(a BIGINT, b BIGINT) RETURNS BIGINT AS '" + module.string() +
               "', 'plus' LANGUAGE WASM; CREATE FUNCTION sumsq AS '" + module.string() + "' LANGUAGE WASM;");
  }
  ASSERT_TRUE(fs::exists(catalog_dir / "functions" / "PLUS.json"));
  fs::remove(module);  // a new session needs the catalog only
  unregister_wasm_udf("plus");
  unregister_wasm_udf("sumsq");
  Catalog catalog;
  catalog.load_from_dir(catalog_dir.string());
  catalog.set_persistence_dir(catalog_dir.string());
  StatementRunner runner(catalog);
  EXPECT_EQ(rows_of(runner.run("SELECT plus(v, 10) FROM t").at(0).spec),
            (std::vector<std::string>{"+I[13]", "+I[14]", "+I[15]"}));
  EXPECT_EQ(rows_of(runner.run("SELECT sumsq(v) FROM t").at(0).spec),
            (std::vector<std::string>{"+I[9]", "-U[9]", "+U[25]", "-U[25]", "+U[50]"}));
  runner.run("DROP FUNCTION plus");
  EXPECT_FALSE(fs::exists(catalog_dir / "functions" / "PLUS.json"));
}

TEST_F(WasmUdf, TheSpecCarriesTheModuleToAProcessThatNeverSawTheCreate) {
  fs::path module = dir_ / "udfs.wat";
  fs::copy_file(kUdfs, module);
  Catalog catalog;
  StatementRunner runner(catalog);
  runner.run(table_ddl() + "CREATE FUNCTION loud(s STRING) RETURNS STRING AS '" + module.string() +
             "', 'shout' LANGUAGE WASM;");
  nlohmann::json spec = runner.run("SELECT loud(k) FROM t").at(0).spec;
  ASSERT_EQ(spec.at("udfs").size(), 1u);
  EXPECT_EQ(spec.at("udfs")[0].at("name"), "loud");
  // A coordinator re-serialises the graph it built for its workers (to_spec): the
  // section comes back from the ops.
  nlohmann::json resent = to_spec(from_spec(spec, builtin_registry()));
  ASSERT_TRUE(resent.contains("udfs"));
  EXPECT_EQ(resent.at("udfs"), spec.at("udfs"));
  // A worker: the module file is gone and the function unknown until the spec brings it.
  fs::remove(module);
  unregister_wasm_udf("loud");
  EXPECT_FALSE(wasm_udf_registered("loud"));
  EXPECT_EQ(rows_of(nlohmann::json::parse(resent.dump())), (std::vector<std::string>{"+I[A!]", "+I[B!]", "+I[A!]"}));
}

TEST_F(WasmUdf, AnAggregatesAccumulatorRoundTripsThroughItsCheckpointForm) {
  Catalog catalog;
  StatementRunner runner(catalog);
  runner.run("CREATE AGGREGATE sumsq(BIGINT) (language = 'wasm', module = '" + kUdfs + "', result_type = 'BIGINT')");
  std::vector<LogicalType> args = {LogicalType::bigint()};
  auto f = FunctionRegistry::process().make_aggregate("sumsq", args);
  ASSERT_TRUE(f->supports_retraction());
  ASSERT_TRUE(f->supports_merge());
  alignas(16) unsigned char a[64], b[64];
  f->create(a);
  f->create(b);
  Column col(LogicalType::bigint());
  for (std::int64_t v : {3, 4, 5}) col.append<std::int64_t>(v);
  const Column* cols[] = {&col};
  void* accs[] = {a, a, a};
  std::uint32_t rows[] = {0, 1, 2};
  f->accumulate(accs, cols, rows);
  std::string state;
  f->serialize(a, state);
  std::string_view in = state;
  f->deserialize(b, in);  // what a restore does
  EXPECT_TRUE(in.empty());
  void* one[] = {b};
  std::uint32_t second[] = {1};
  f->retract(one, cols, second);  // 9 + 16 + 25 - 16
  Column out(LogicalType::bigint());
  f->get_value(a, out);
  f->get_value(b, out);
  f->merge(a, b);
  f->get_value(a, out);
  EXPECT_EQ(out.values<std::int64_t>()[0], 50);
  EXPECT_EQ(out.values<std::int64_t>()[1], 34);
  EXPECT_EQ(out.values<std::int64_t>()[2], 84);
  f->destroy(a);
  f->destroy(b);
}

}  // namespace
}  // namespace clink::test
