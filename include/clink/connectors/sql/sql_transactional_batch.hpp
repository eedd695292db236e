#pragma once
// A transactional SQL sink receives the columnar batch itself (TwoPhaseCommitSinkOperator).
#include "clink/api/two_phase_commit_sink.hpp"
#include "clink/sql/common/column_batch.hpp"

namespace clink {
template <>
struct TransactionalBatch<sql::ColumnBatch> {
  using type = sql::ColumnBatch;
};
}  // namespace clink
