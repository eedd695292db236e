#pragma once
// Reading a SQL connector's params (docs/sql-runtime-contract.md): the schema, and the
// table options as written in the DDL ('json.ignore-parse-errors' = 'true'). Values may
// be JSON strings, as the DDL writes them, or JSON numbers/booleans. Unknown options are
// errors, as in Flink, and every error names the op, the option and the value.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "clink/runtime/op_params.hpp"
#include "clink/sql/common/types.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"  // kSqlRowType

namespace clink::sql {

// The params of a SQL connector factory: OpParams whose keys outside `structural` are the
// table's options (strings), read with the option getters.
class SqlConnectorParams : public OpParams {
 public:
  // `structural`: params that are not table options (schema, projected, ...), read with
  // the typed getters below; every other key is a table option.
  SqlConnectorParams(const OperatorSpecContext& ctx, std::string factory, std::vector<std::string> structural);

  // "schema": [{"name", "type"}]; required.
  SchemaPtr schema(const char* key = "schema") const;
  // A list of column indices below `bound` (empty when absent).
  std::vector<std::size_t> indices(const std::string& key, std::size_t bound) const;
  // The source's "projected" columns (projection pushdown); all `columns` when absent.
  std::vector<std::size_t> projected(std::size_t columns) const;
  const nlohmann::json& raw(const std::string& key) const;

  // Table options (string values), after the caller checked them.
  const std::map<std::string, std::string>& options() const { return options_; }
  // Fails for an option that is neither in `known` nor accepted by `also` (a predicate
  // over the key, for families such as "fields.<f>.kind" or a format's "json.*").
  template <class Pred>
  void check_options(const std::vector<std::string>& known, Pred also) const {
    for (const auto& [key, value] : options_) {
      bool ok = also(key);
      for (const auto& k : known) ok = ok || k == key;
      if (!ok) {
        std::string list;
        for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
        fail("unknown option '" + key + "' = '" + value + "' (known: " + list + ")");
      }
    }
  }
  std::optional<std::string> option(const std::string& key) const;
  std::string option_or(const std::string& key, const std::string& def) const;
  std::int64_t int_option(const std::string& key, std::int64_t def, std::int64_t min, std::int64_t max) const;
  double double_option(const std::string& key, double def, double min, double max) const;
  bool bool_option(const std::string& key, bool def) const;
  // "table.local-time-zone" from "session", else UTC.
  std::string local_time_zone() const;

 private:
  std::map<std::string, std::string> options_;
};

}  // namespace clink::sql
