// Planner goldens as files: `clink explain <script> --spec` of every SQL script under
// tests/plans/ and examples/ must equal its golden, tests/plans/<path>.plan (the script's
// path inside tests/plans/, or examples/<path> for an example). One gtest per script.
// After a deliberate planner change, `scripts/update-plan-goldens` rewrites the goldens
// from the current binary; review the diff before committing it.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "clink_runner.hpp"

namespace clink::test {

namespace fs = std::filesystem;

namespace {

const fs::path kRoot = CLINK_SOURCE_DIR;

// (script relative to the source root, golden relative to the source root)
std::vector<std::pair<std::string, std::string>> golden_scripts() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const char* dir : {"tests/plans", "examples"}) {
    for (const auto& e : fs::recursive_directory_iterator(kRoot / dir)) {
      if (e.path().extension() != ".sql") continue;
      std::string script = fs::relative(e.path(), kRoot).string();
      std::string golden = std::string(dir) == "examples" ? "tests/plans/" + script : script;
      out.emplace_back(script, golden.substr(0, golden.size() - 4) + ".plan");
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

class PlanGolden : public ::testing::Test {
 public:
  PlanGolden(std::string script, std::string golden) : script_(std::move(script)), golden_(std::move(golden)) {}
  void TestBody() override {
    fs::path scratch = fs::temp_directory_path() / ("clink_plan_golden_" + std::to_string(::getpid()));
    fs::create_directories(scratch);
    auto r = run_clink("explain '" + script_ + "' --spec", scratch);
    fs::remove_all(scratch);
    ASSERT_TRUE(fs::exists(kRoot / golden_)) << golden_ << " is missing: run scripts/update-plan-goldens";
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, slurp(kRoot / golden_))
        << script_ << " plans differently from " << golden_ << " (scripts/update-plan-goldens rewrites it)";
  }

 private:
  std::string script_, golden_;
};

std::string test_name(const std::string& path) {
  std::string n;
  for (char c : path) n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return n;
}

const bool kRegistered = [] {
  for (const auto& [script, golden] : golden_scripts())
    ::testing::RegisterTest("PlanGolden", test_name(script).c_str(), nullptr, nullptr, __FILE__, __LINE__,
                            [script, golden]() -> ::testing::Test* { return new PlanGolden(script, golden); });
  return true;
}();

}  // namespace

}  // namespace clink::test
