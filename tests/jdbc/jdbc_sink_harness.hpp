#pragma once
// The jdbc sink operator run directly (made by its registered factory from the options a
// table would give it), writing into the test server.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../support/manual_clock.hpp"
#include "clink/registry/builtin_registry.hpp"
#include "clink/runtime/key_group.hpp"
#include "clink/runtime/operator.hpp"
#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"
#include "pg_test_env.hpp"

namespace clink::test {

class JdbcSinkHarness final : public Output {
 public:
  // `columns`: the sink's input ("id BIGINT, name STRING"); `primary_key`: its key columns;
  // `options`: the table's options ('connector' aside); url and table-name are added
  // unless given.
  JdbcSinkHarness(const std::string& table, const std::string& columns, std::vector<std::string> primary_key,
                  std::map<std::string, std::string> options = {}) {
    schema_ = schema_of(columns);
    nlohmann::json params = nlohmann::json::object();
    if (!options.count("url")) options["url"] = postgres_url();
    if (!options.count("table-name")) options["table-name"] = table;
    for (const auto& [k, v] : options) params[k] = v;
    params["schema"] = sql::schema_to_json(*schema_);
    params["table"] = "sink_" + table;
    params["primary_key"] = primary_key;
    OperatorSpecContext sc;
    sc.id = "sink";
    sc.params = std::move(params);
    sc.input_types = {sql::kSqlRowType};
    op_ = builtin_registry().get("sql_jdbc_sink").make(sc)();
    ctx_ = std::make_unique<RuntimeContext>("sink", "sink", 0, 1, kDefaultMaxParallelism, this,
                                            std::make_shared<OperatorMetrics>(), clock);
  }
  ~JdbcSinkHarness() override {
    if (opened_) op_->close();
  }

  static sql::SchemaPtr schema_of(const std::string& columns) {
    return sql::make_schema(sql::parse_logical_type("ROW<" + columns + ">").fields());
  }

  void open() {
    op_->open(*ctx_);
    opened_ = true;
  }
  // One batch of rows, each with its kind.
  void push(const std::vector<std::pair<sql::RowKind, std::vector<sql::Value>>>& rows) {
    auto b = std::make_unique<sql::ColumnBatch>(schema_);
    for (const auto& [kind, values] : rows) b->append_row(values, kind);
    op_->process_batch(0, std::move(b));
  }
  void insert(const std::vector<std::vector<sql::Value>>& rows) {
    std::vector<std::pair<sql::RowKind, std::vector<sql::Value>>> r;
    for (const auto& v : rows) r.emplace_back(sql::RowKind::kInsert, v);
    push(r);
  }
  void checkpoint(std::int64_t id = 1) { op_->snapshot_state(id); }
  void finish() { op_->finish(); }
  // Moves the clock to `now` and fires the timers due.
  void advance_to(std::int64_t now) {
    clock.set(now);
    op_->process_processing_time(now);
  }
  StreamOperator& op() { return *op_; }

  void emit(BatchPtr) override {}
  void emit_watermark(Watermark) override {}
  void emit_side(const std::string&, BatchPtr) override {}

  ManualClock clock{1000};

 private:
  sql::SchemaPtr schema_;
  std::unique_ptr<StreamOperator> op_;
  std::unique_ptr<RuntimeContext> ctx_;
  bool opened_ = false;
};

}  // namespace clink::test
