// libFuzzer target: a SQL script through clink's front end - parse, bind, optimise and
// compile to a JobGraphSpec (docs/fuzzing.md). No job runs. A malformed script must
// end in a ClinkError (ParseError, TranslationError, ...) with its position; any other
// exception, a crash, a hang or a sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "clink/core/error.hpp"
#include "clink/sql/catalog/catalog.hpp"
#include "clink/sql/handler/statement_runner.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view script(reinterpret_cast<const char*>(data), size);
  // Statements that write, rename or delete files where the script says (catalogs with
  // a directory; materialized tables and views, which create and swap their backings)
  // are not for a fuzzer: the parser still sees them inside other inputs' mutations.
  if (clink::fuzz::contains_ignoring_case(script, "catalog") ||
      clink::fuzz::contains_ignoring_case(script, "materialized"))
    return -1;
  clink::sql::Catalog catalog;
  clink::sql::StatementRunner runner(catalog);
  runner.on_job([](const nlohmann::json&, const clink::sql::ast::Statement&) {});
  try {
    runner.run(script);
  } catch (const clink::ClinkError&) {
    // the expected end of a bad script
  } catch (const std::exception& e) {
    clink::fuzz::finding("an exception that is not a ClinkError", e.what());
  }
  return 0;
}
