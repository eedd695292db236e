#pragma once
// A lookup table's rows by key: what the processing-time lookup join (`sql_lookup_join`,
// lookup_join_spec.hpp) asks a lookup table for (Flink's LookupTableSource and its
// LookupFunction). Batched: one call takes every key a batch of input rows misses, so a
// database source sends one query per batch (`WHERE k = ANY($1)`), not one per row.
//
// A connector that serves lookups names its factory in its connector-table row
// (`lookup_factory`) and registers it here; `'connector' = 'lookup'` tables (the seed's
// enrichment tables) are served by a function the process registered under the table's
// 'lookup_function' option (register_lookup_function).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/spec/connector_table.hpp"

namespace clink::sql {

struct LookupSourceContext {
  std::string table;                     // the table's name, for messages
  std::string op_id;                     // the lookup join op's id
  std::string where;                     // the op ("op 'lookup_join_3' (sql_lookup_join)"), for messages
  ConnectorOptions options;              // the table's WITH options
  SchemaPtr table_schema;                // the table's physical columns
  std::vector<std::size_t> columns;      // the columns to fetch (indices into table_schema)
  std::vector<std::size_t> key_columns;  // the lookup keys: indices into `columns`
  SchemaPtr row_schema;                  // table_schema restricted to `columns`: what lookup() returns
  SchemaPtr key_schema;                  // the key columns, in key order
};

class LookupSource {
 public:
  virtual ~LookupSource() = default;
  // Connects; called on the thread that then calls lookup() (the op's lookup worker).
  virtual void open() {}
  // Appends to `out` (row_schema) every row whose key columns equal those of a row of
  // `keys` (key_schema; distinct rows, no NULLs), in any order. Throws on failure: the
  // op calls reset() and retries up to 'lookup.max-retries' times.
  virtual void lookup(const ColumnBatch& keys, ColumnBatch& out) = 0;
  // After a failed lookup: drop a broken connection so that the next lookup reconnects.
  virtual void reset() {}
  // Called from another thread while lookup() may be running (the job is stopping):
  // make it return soon (a database source cancels its query). Default: nothing.
  virtual void cancel() {}
  virtual void close() {}
};

// Makes a source (not connected yet: open() connects). Throws ClinkError naming the table
// and the option for bad options; the op calls it once when the job is built, to check.
using LookupSourceFactory = std::function<std::unique_ptr<LookupSource>(const LookupSourceContext&)>;

// The lookup sources of this process by name: the connectors' (the rows' lookup_factory)
// and the user lookup functions of `'connector' = 'lookup'` tables. Register at startup,
// before the jobs that use them are planned and run.
class LookupSourceRegistry {
 public:
  static LookupSourceRegistry& process();
  void add(const std::string& name, LookupSourceFactory factory);
  // Null when nothing is registered under `name`.
  const LookupSourceFactory* find(const std::string& name) const;
  void add_function(const std::string& name, LookupSourceFactory factory);
  const LookupSourceFactory* find_function(const std::string& name) const;
  std::string function_names() const;  // "a, b" (sorted), for messages

 private:
  LookupSourceRegistry();
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// `'connector' = 'lookup', 'lookup_function' = 'name'`: the source `factory` makes serves
// the table's lookups (the same contract as a connector's).
inline void register_lookup_function(const std::string& name, LookupSourceFactory factory) {
  LookupSourceRegistry::process().add_function(name, std::move(factory));
}

// The factory name of the `lookup` connector's row: it reads 'lookup_function'.
inline constexpr const char* kLookupFunctionSource = "lookup_function";

}  // namespace clink::sql
