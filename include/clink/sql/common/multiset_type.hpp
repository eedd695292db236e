#pragma once
#include "clink/sql/common/types.hpp"

namespace clink::sql {

// MULTISET<T> (COLLECT's result) is held as Flink holds it (a MapData element -> count):
// a MAP column whose value is the count, INT NOT NULL. The type tells it apart from a MAP
// by the names of its two children ("element", "count"), so it prints as MULTISET<T>,
// parses back from that text, and is neither equal nor assignable to any MAP.
// (Declared here rather than as a LogicalType factory in types.hpp, which nearly every
// file includes: LogicalType::map builds it on a request only this function makes.)
LogicalType multiset_type(LogicalType element);
bool is_multiset(const LogicalType& t);

}  // namespace clink::sql
