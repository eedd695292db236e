// Lookups over the SQL connector table (its rows: src/connectors/sql/connector_table.cpp).
#include "clink/sql/spec/connector_table.hpp"

#include <algorithm>

namespace clink::sql {

namespace {

std::string sorted_names(bool (ConnectorDescriptor::*has)() const) {
  std::vector<std::string> names;
  for (const auto& d : sql_connector_table())
    if ((d.*has)()) names.push_back(d.name);
  std::sort(names.begin(), names.end());
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
  return out;
}

}  // namespace

std::optional<std::string> find_option(const ConnectorOptions& options, std::string_view key) {
  for (const auto& [k, v] : options)
    if (k == key) return v;
  return std::nullopt;
}

const ConnectorDescriptor* find_sql_connector(std::string_view name) {
  if (name.empty()) return nullptr;
  for (const auto& d : sql_connector_table())
    if (d.name == name) return &d;
  return nullptr;
}

std::string sql_source_names() { return sorted_names(&ConnectorDescriptor::is_source); }
std::string sql_sink_names() { return sorted_names(&ConnectorDescriptor::is_sink); }
std::string sql_lookup_names() { return sorted_names(&ConnectorDescriptor::is_lookup); }

std::string sql_overwrite_sinks_text() {
  std::vector<std::string> names;
  for (const auto& d : sql_connector_table())
    if (d.is_sink() && d.overwrite) names.push_back(d.name);
  std::sort(names.begin(), names.end());
  std::string out = "the ";
  for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
  return out + (names.size() == 1 ? " sink" : " sinks");
}

std::string sql_bounded_sources_text() {
  std::string out;
  for (const auto& d : sql_connector_table())
    if (d.is_source() && d.bounded) out += (out.empty() ? "" : ", ") + d.name + " " + d.bounded_when;
  return out;
}

bool sql_source_bounded(std::string_view connector, const ConnectorOptions& options) {
  const ConnectorDescriptor* d = find_sql_connector(connector);
  return d && d->is_source() && d->bounded_for(options);
}

std::optional<ChangelogKind> sink_changelog_kind(const ConnectorDescriptor& sink, const ConnectorOptions& options,
                                                 ChangelogKind input, bool has_primary_key) {
  if (input == ChangelogKind::kInsertOnly) return ChangelogKind::kInsertOnly;
  const SinkChangelogModes modes = sink.sink_changelog_for(options);
  if (modes.upsert && has_primary_key) return ChangelogKind::kUpsert;
  if (modes.retract) return ChangelogKind::kRetract;
  return std::nullopt;
}

}  // namespace clink::sql
