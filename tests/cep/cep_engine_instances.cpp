// The one instantiation of the CEP engine for the tests' Event (cep_test_support.hpp
// and cep_job_support.hpp declare it extern).
#include <cstdint>
#include <string>

#include "cep_job_support.hpp"
#include "cep_test_support.hpp"

namespace clink::cep {
template struct CompiledNfa<testing::Event>;
template class NfaCompiler<testing::Event>;
template class SharedBuffer<testing::Event>;
template class Nfa<testing::Event>;
template class CepOperator<testing::Event, std::string, std::int64_t>;
}  // namespace clink::cep
