#pragma once
// The SQL connector table: everything the planner may assume about a connector, one
// descriptor per connector (Flink's DynamicTableFactory plus the abilities its sources
// and sinks implement: SupportsProjectionPushDown, SupportsPartitionPushDown,
// getChangelogMode, SupportsOverwrite, boundedness).
//
// This header is the contract between the planner (binder, optimiser, physical planner,
// handler) and the SQL connectors; the rows live with the connectors
// (src/connectors/sql/connector_table.cpp) and reach the planner through
// sql_connector_table() at link time, so the planner never includes a connector and never
// compares a connector's name. Adding a connector is adding one row
// (docs/sql-runtime-contract.md, "Adding a connector: one row").
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "clink/sql/common/sql_error.hpp"
#include "clink/sql/common/types.hpp"
#include "clink/sql/spec/changelog_kind.hpp"

namespace clink::sql {

// A table's WITH options in the order written (the catalog's OptionList).
using ConnectorOptions = std::vector<std::pair<std::string, std::string>>;
std::optional<std::string> find_option(const ConnectorOptions& options, std::string_view key);

// The changelog modes a sink accepts. Insert-only input goes to every sink.
struct SinkChangelogModes {
  bool upsert = false;   // updates keyed by the table's PRIMARY KEY
  bool retract = false;  // every row kind, no key needed
  bool accepts_updates() const { return upsert || retract; }
};

// What the physical planner knows about an INSERT when it builds the sink op's params.
struct SinkParamsContext {
  std::string_view table;                             // the table's name
  const ConnectorOptions& options;                    // every WITH option (hints merged)
  const Schema& input;                                // the sink's input schema (its columns)
  const Schema* table_schema = nullptr;               // the table's physical columns as declared
  const std::vector<std::string>& partition_columns;  // PARTITIONED BY (or the 'partition_by' option)
  const std::vector<std::string>& primary_key;        // column names; empty: none
  bool overwrite = false;                             // INSERT OVERWRITE
  // The mode the sink receives its input in (sink_changelog_kind below).
  ChangelogKind changelog = ChangelogKind::kInsertOnly;
  SourcePosition pos;  // the INSERT, for errors
};

// Adds the connector's structural params to `params`, which arrives holding the table's
// options the connector takes (the planner's own options removed); the planner adds
// `schema` (and `input_schemas`, `session`) after. Throws TranslationError at ctx.pos.
using SinkParamsHook = std::function<void(const SinkParamsContext& ctx, nlohmann::json& params)>;

struct ConnectorDescriptor {
  std::string name;  // the 'connector' option's value

  // ---- as a source (source_factory empty: not a source)
  std::string source_factory;  // the op's factory, e.g. "sql_filesystem_source"
  // Whether a scan of a table with these options ends (ANALYZE TABLE reads only bounded
  // sources; a sort over bounded sources waits for their end). Null: never bounded.
  std::function<bool(const ConnectorOptions&)> bounded;
  std::string bounded_when;  // how a table is bounded, for messages: "with 'number-of-rows'"
  bool projection_pushdown = false;  // reads only the `projected` physical columns
  // Nested projection push-down (Flink's supportsNestedProjection): with these options
  // the source reads a ROW column narrowed to the fields the query uses (the `schema`
  // param carries the narrowed ROW types); `physical` is the table's declared physical
  // schema. Null: never.
  std::function<bool(const ConnectorOptions&, const Schema& physical)> nested_projection_pushdown;
  // Partition pushdown: takes `partition_keys` (PARTITIONED BY) and a `partition_filter`
  // (the conjuncts of the filter right above the scan on partition columns only).
  bool partition_pushdown = false;
  // Filter pushdown (Flink's SupportsFilterPushDown): takes the deterministic conjuncts of
  // the filter right above the scan as a `filter` param (over its output columns). The
  // filter stays above the scan as well, so a source may apply any part of it, or none.
  bool filter_pushdown = false;
  bool dead_letters = false;  // emits rejected records on the `dead-letter` side output
  ChangelogKind source_changelog = ChangelogKind::kInsertOnly;  // a CDC source: kRetract
  // When set, a table's options decide instead (a changelog format such as debezium-json
  // makes a kafka table a CDC source).
  std::function<ChangelogKind(const ConnectorOptions&)> source_changelog_of;
  // An upsert source (kUpsert: +I/+U/-D by the PRIMARY KEY, a -D without the old row)
  // needs the planner to normalise it into a retract stream keyed by that key (Flink's
  // ChangelogNormalize): source_changelog_for then says kRetract.
  // The metadata columns it can read (METADATA [FROM 'key']): key and type each.
  std::vector<std::pair<std::string, std::string>> readable_metadata;
  // Watermark push-down (Flink's SupportsWatermarkPushDown): the source takes the table's
  // WATERMARK as a `watermark` param and generates it per split (a Kafka partition), so
  // no assigner follows it.
  bool watermark_pushdown = false;
  // Or the source only bounds the assigner, which stays after it for Flink's per-row
  // WatermarkAssigner rules (Flink pushes no WATERMARK into its filesystem source): the
  // source takes {"watermark", "bounds_assigner": true} and a reader holding several splits
  // (several old readers' files after a rescale) holds the watermark at its slowest one.
  bool watermark_bound = false;
  // The source reads at parallelism 1 whatever the job's (one replication slot: the
  // CDC sources), as a VALUES scan; forward ops after it stay at 1 too.
  bool single_reader = false;

  // ---- as a sink (sink_factory empty: not a sink)
  std::string sink_factory;  // e.g. "sql_print_sink"
  SinkChangelogModes sink_changelog;
  std::function<SinkChangelogModes(const ConnectorOptions&)> sink_changelog_of;  // set: the options decide
  // The metadata a sink can write (a METADATA column that is not VIRTUAL): key and type
  // each. The sink gets them as its `metadata` param, columns of its input.
  std::vector<std::pair<std::string, std::string>> writable_metadata;
  bool overwrite = false;  // INSERT OVERWRITE
  SinkParamsHook sink_params;  // null: the options alone

  // ---- as a lookup table (Flink's LookupTableSource; lookup_factory empty: none)
  // The LookupSource factory (connectors/sql/lookup_source.hpp) the `sql_lookup_join`
  // op builds to fetch a processing-time lookup join's dimension rows
  // (`JOIN t FOR SYSTEM_TIME AS OF o.proc_time`), e.g. "jdbc".
  std::string lookup_factory;

  bool is_source() const { return !source_factory.empty(); }
  bool is_lookup() const { return !lookup_factory.empty(); }
  bool is_sink() const { return !sink_factory.empty(); }
  bool bounded_for(const ConnectorOptions& options) const { return bounded && bounded(options); }
  ChangelogKind source_changelog_for(const ConnectorOptions& options) const {
    return source_changelog_of ? source_changelog_of(options) : source_changelog;
  }
  SinkChangelogModes sink_changelog_for(const ConnectorOptions& options) const {
    return sink_changelog_of ? sink_changelog_of(options) : sink_changelog;
  }
  // The type of metadata `key`; null when the connector cannot read (write) it.
  const std::string* metadata_type(std::string_view key) const { return find_metadata(readable_metadata, key); }
  const std::string* writable_metadata_type(std::string_view key) const { return find_metadata(writable_metadata, key); }
  static const std::string* find_metadata(const std::vector<std::pair<std::string, std::string>>& list,
                                          std::string_view key) {
    for (const auto& [k, t] : list)
      if (k == key) return &t;
    return nullptr;
  }
};

// Every SQL connector, one row each, in the order messages list bounded sources.
// Defined with the connectors (src/connectors/sql/connector_table.cpp).
const std::vector<ConnectorDescriptor>& sql_connector_table();

// The row of `name`; null for an unknown (or empty) connector name.
const ConnectorDescriptor* find_sql_connector(std::string_view name);

// For messages: the sources' / sinks' names, sorted ("datagen, filesystem, nexmark"); the
// sinks that can overwrite ("the filesystem sink"); the bounded sources with their
// condition ("filesystem without 'source.monitor-interval', datagen with 'number-of-rows'").
std::string sql_source_names();
std::string sql_sink_names();
std::string sql_overwrite_sinks_text();
std::string sql_bounded_sources_text();
// The connectors a lookup join can read ("jdbc, lookup"), for messages.
std::string sql_lookup_names();

// Whether a scan of a `connector` table with these options ends (false: unknown connector).
bool sql_source_bounded(std::string_view connector, const ConnectorOptions& options);

// The mode an INSERT's sink receives an input of kind `input`: insert-only input stays
// insert-only; updates go upsert by the primary key when the sink takes that and the table
// declares one, else retract. Null when the sink does not accept the updates.
std::optional<ChangelogKind> sink_changelog_kind(const ConnectorDescriptor& sink, const ConnectorOptions& options,
                                                 ChangelogKind input, bool has_primary_key);

}  // namespace clink::sql
