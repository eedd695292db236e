#pragma once
// Changelog modes: what kinds of rows each plan node emits (Flink's ChangelogMode).
//   insert-only  +I only
//   retract      +I, -U, +U, -D (an update is a retraction of the old row then the new row)
//   upsert[key]  +I, +U, -D keyed by `key` (no -U): only what a keyed sink may receive
// Derived bottom-up; nodes that cannot consume updates (window aggregates, ORDER BY,
// LIMIT) reject updating input, and sinks reject modes they do not accept (the
// filesystem sink is insert-only), naming the construct that produces the updates.
#include <string>
#include <vector>

#include "clink/sql/planner/logical_plan.hpp"
#include "clink/sql/spec/changelog_kind.hpp"

namespace clink::sql {

class PlanProperties;

struct ChangelogMode {
  using Kind = ChangelogKind;
  Kind kind = Kind::kInsertOnly;
  std::vector<std::string> upsert_key;  // kUpsert: column names
  // The node (GROUP BY, outer JOIN, ...) that first produces updates, for messages.
  const LogicalNode* producer = nullptr;

  bool updating() const { return kind != Kind::kInsertOnly; }
  std::string to_string() const;  // "insert-only", "retract", "upsert[a, b]"
};

// The mode of `node`'s output. Throws TranslationError when a node cannot consume its
// input's updates. Derives the whole subtree (each node once): for a plan still being
// rewritten (binder, optimiser). A final plan's consumers share one PlanProperties
// (plan_properties.hpp), which keeps every node's mode.
ChangelogMode changelog_mode(const LogicalNode& node);

// Checks that the sink accepts what its query produces (the connector table's sink
// changelog modes); throws TranslationError like "INSERT INTO file_sink: the query
// produces updates (GROUP BY at line 3, column 8) but the filesystem sink only accepts
// inserts".
void check_sink_changelog(const LogicalSink& sink, PlanProperties& props);

// What a construct is called in messages: "GROUP BY", "SELECT DISTINCT", "LEFT JOIN".
std::string construct_name(const LogicalNode& node);

}  // namespace clink::sql
