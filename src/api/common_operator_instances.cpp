// The one instantiation of the source and sink operators for the record types most
// jobs and tests use (their headers declare them extern).
#include <cstdint>
#include <string>

#include "clink/api/sink.hpp"
#include "clink/api/source.hpp"
#include "clink/api/two_phase_commit_sink.hpp"

namespace clink {

template class ReaderSourceOperator<std::int64_t>;
template class ReaderSourceOperator<std::string>;
template class SinkOperator<std::int64_t>;
template class SinkOperator<std::string>;
template class TwoPhaseCommitSinkOperator<std::int64_t>;
template class TwoPhaseCommitSinkOperator<std::string>;

}  // namespace clink
