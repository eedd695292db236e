#pragma once
// Shared helpers for the planner tests: a catalog filled by DDL, plans and errors as text.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "clink/sql/binder/binder.hpp"
#include "clink/sql/catalog/catalog.hpp"
#include "clink/sql/handler/statement_runner.hpp"
#include "clink/sql/optimizer/optimizer.hpp"
#include "clink/sql/parser/parser.hpp"
#include "clink/sql/physical/physical_plan.hpp"
#include "clink/sql/planner/explain.hpp"

namespace clink::test {

// EXPECT_GOLDEN(actual, R"(expected)"): an exact comparison. With CLINK_RECORD_GOLDEN set,
// the actual text is also appended to that file (a helper rewrites the literals after the
// outputs were reviewed).
inline void expect_golden(const std::string& actual, const std::string& expected, const char* file, int line) {
  if (const char* path = std::getenv("CLINK_RECORD_GOLDEN")) {
    std::ofstream out(path, std::ios::app);
    out << nlohmann::json({{"file", file}, {"line", line}, {"actual", actual}}).dump() << "\n";
  }
  EXPECT_EQ(actual, expected) << "at " << file << ":" << line;
}
#define EXPECT_GOLDEN(actual, expected) ::clink::test::expect_golden((actual), (expected), __FILE__, __LINE__)

struct PlanFixture {
  sql::Catalog catalog;
  sql::StatementRunner runner{catalog};

  void ddl(const std::string& sql) { runner.run(sql); }

  const sql::ast::Statement& keep(const std::string& sql) {
    scripts.push_back(sql::parse(sql));
    return scripts.back().statements.at(0);
  }

  // The bound (unoptimised) plan of a query or INSERT.
  std::string bound(const std::string& sql) {
    const auto& st = keep(sql);
    sql::Binder binder(catalog, sql::FunctionRegistry::builtins(), runner.session());
    if (const auto* ins = st.as<sql::ast::Insert>()) return sql::to_string(*binder.bind_insert(*ins));
    return sql::to_string(*binder.bind_select(*std::get<sql::ast::QueryStatement>(st.node).query));
  }
  // The optimised plan.
  std::string optimized(const std::string& sql) {
    const auto& st = keep(sql);
    sql::Binder binder(catalog, sql::FunctionRegistry::builtins(), runner.session());
    sql::LogicalPtr p = st.as<sql::ast::Insert>() ? binder.bind_insert(*st.as<sql::ast::Insert>())
                                                  : binder.bind_select(*std::get<sql::ast::QueryStatement>(st.node).query);
    return sql::to_string(*sql::optimize(p));
  }
  std::string explain(const std::string& sql) { return runner.run(sql).at(0).text; }
  nlohmann::json spec(const std::string& sql) { return runner.run(sql).at(0).spec; }
  // The message of the error the statement raises ("" when it succeeds).
  std::string error(const std::string& sql) {
    try {
      runner.run(sql);
    } catch (const sql::SqlError& e) {
      return e.what();
    } catch (const ClinkError& e) {
      return std::string("ClinkError: ") + e.what();
    }
    return "";
  }

  std::vector<sql::ast::Script> scripts;
};

}  // namespace clink::test
