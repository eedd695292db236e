// The one instantiation of the CEP engine for the tests' Event (cep_test_support.hpp
// and cep_job_support.hpp declare it extern).
#include <cstdint>
#include <string>

#include "cep_job_support.hpp"
#include "cep_test_support.hpp"

namespace clink::cep {
template struct CompiledNfa<test::Event>;
template class NfaCompiler<test::Event>;
template class SharedBuffer<test::Event>;
template class Nfa<test::Event>;
template class CepOperator<test::Event, std::string, std::int64_t>;
}  // namespace clink::cep
