#pragma once
// "tokenize": string -> string. Lower-cases a line and splits it on every character
// that is not an ASCII letter or digit; empty tokens are dropped. (Bytes outside ASCII,
// such as UTF-8 sequences, count as separators.)
#include <string>

#include "clink/api/functions.hpp"
#include "clink/api/operators.hpp"

namespace clink {

struct Tokenizer {
  void operator()(const std::string& line, Collector<std::string>& out) const {
    std::string token;
    for (char ch : line) {
      if (ch >= 'A' && ch <= 'Z') {
        token.push_back(static_cast<char>(ch - 'A' + 'a'));
      } else if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) {
        token.push_back(ch);
      } else if (!token.empty()) {
        out.collect(std::move(token));
        token.clear();
      }
    }
    if (!token.empty()) out.collect(std::move(token));
  }
};

// The DataStream flat_map operator with the tokenizer: one mechanism for both front ends.
using TokenizeOperator = FlatMapOperator<std::string, std::string, Tokenizer>;

}  // namespace clink
