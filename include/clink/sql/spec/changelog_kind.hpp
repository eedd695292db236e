#pragma once
// Kinds of changelog (Flink's ChangelogMode): what a plan node or a source emits, what a
// sink takes.
//   insert-only  +I only
//   retract      +I, -U, +U, -D (an update is a retraction of the old row then the new row)
//   upsert       +I, +U, -D keyed by a primary key (no -U)

namespace clink::sql {

enum class ChangelogKind { kInsertOnly, kRetract, kUpsert };

}  // namespace clink::sql
