#pragma once
// Complex event processing (Flink's CEP library): include this one header.
//   Pattern<T>            pattern.hpp (conditions: condition.hpp; skip: after_match_skip.hpp)
//   Nfa<T>                nfa.hpp: the matcher, usable on its own (MATCH_RECOGNIZE reuses it)
//   CepOperator<T, U, K>  cep_operator.hpp
//   cep::pattern, PatternStream<T, K>   pattern_stream.hpp
// See docs/cep.md.
#include "clink/cep/cep_operator.hpp"
#include "clink/cep/nfa.hpp"
#include "clink/cep/pattern.hpp"
#include "clink/cep/pattern_process_function.hpp"
#include "clink/cep/pattern_stream.hpp"
