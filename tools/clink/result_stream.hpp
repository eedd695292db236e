#pragma once
// The rows of a SELECT, as the CLI shows them: the planner sends a query's rows to a
// `collect` sink; the CLI swaps that op for `clink_result_sink`, which formats each row's
// cells as CAST(... AS STRING) writes them and hands them to a ResultStream the printer
// (tableau lines for `clink run`, a live table in `clink sql`) reads while the job runs.
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "clink/runtime/operator_registry.hpp"
#include "clink/sql/common/row_kind.hpp"

namespace clink::cli {

struct ResultRow {
  sql::RowKind kind = sql::RowKind::kInsert;
  std::vector<std::optional<std::string>> cells;  // nullopt: SQL NULL
};

struct ResultColumn {
  std::string name;
  std::string type;  // LogicalType::to_string()
};

// Rows appended by the sink's subtasks, taken by one reader.
class ResultStream {
 public:
  void append(std::vector<ResultRow> rows);
  // Moves out the rows that arrived since the last call; waits up to `timeout_ms` for
  // at least one when none are pending.
  std::vector<ResultRow> take(int timeout_ms);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<ResultRow> pending_;
};

// The registry the CLI builds jobs with: the built-in one plus `clink_result_sink`
// (params: schema, input_schemas, stream: a name given to attach_result_stream).
const OperatorRegistry& cli_registry();
// Makes the `clink_result_sink` ops named `name` feed `stream` (until detached).
void attach_result_stream(const std::string& name, std::shared_ptr<ResultStream> stream);
void detach_result_stream(const std::string& name);

// For a SELECT's spec: replaces its `sql_collect_sink` (named select_<n>) with a
// `clink_result_sink` feeding the stream `stream_name`; returns the query's columns.
// Throws ClinkError when the spec has no such sink.
std::vector<ResultColumn> route_select_to_stream(nlohmann::json& spec, const std::string& stream_name);

// A SELECT's spec routed (route_select_to_stream) into a new stream attached under
// `name` for this object's lifetime.
struct RoutedSelect {
  RoutedSelect(nlohmann::json& spec, std::string stream_name)
      : name(std::move(stream_name)), columns(route_select_to_stream(spec, name)) {
    attach_result_stream(name, stream);
  }
  ~RoutedSelect() { detach_result_stream(name); }
  RoutedSelect(const RoutedSelect&) = delete;
  RoutedSelect& operator=(const RoutedSelect&) = delete;

  std::string name;
  std::vector<ResultColumn> columns;
  std::shared_ptr<ResultStream> stream = std::make_shared<ResultStream>();
};

}  // namespace clink::cli
