#pragma once
// Example user aggregate functions (aggregate_udf.hpp) the SQL tests call:
//   weighted_avg(value DOUBLE, weight DOUBLE)  two arguments; retracts and merges; its
//                                              accumulator is plain bytes
//   concat_agg(s STRING)                       the values joined with ',' in arrival order;
//                                              cannot retract or merge; a std::string
//                                              accumulator with serialize/deserialize
//   tally()                                    no argument: counts rows; retracts, merges
// register_example_udafs() adds them to FunctionRegistry::process() (once).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "clink/sql/function/aggregate_udf.hpp"

namespace clink::test {

struct WeightedAvg {
  struct Acc {
    double sum = 0;
    double weight = 0;
    std::int64_t rows = 0;
  };
  void accumulate(Acc& a, double value, double weight) const {
    a.sum += value * weight;
    a.weight += weight;
    ++a.rows;
  }
  void retract(Acc& a, double value, double weight) const {
    a.sum -= value * weight;
    a.weight -= weight;
    --a.rows;
  }
  void merge(Acc& a, const Acc& b) const {
    a.sum += b.sum;
    a.weight += b.weight;
    a.rows += b.rows;
  }
  std::optional<double> get_value(const Acc& a) const {
    if (a.rows == 0 || a.weight == 0) return std::nullopt;
    return a.sum / a.weight;
  }
};

struct ConcatAgg {
  struct Acc {
    std::string text;
    bool any = false;
  };
  void accumulate(Acc& a, std::string_view s) const {
    if (a.any) a.text += ',';
    a.text += s;
    a.any = true;
  }
  std::optional<std::string> get_value(const Acc& a) const {
    if (!a.any) return std::nullopt;
    return a.text;
  }
  void serialize(const Acc& a, std::string& out) const {
    out.push_back(a.any ? '1' : '0');
    out += a.text;
  }
  void deserialize(Acc& a, std::string_view bytes) const {
    a.any = !bytes.empty() && bytes[0] == '1';
    a.text = std::string(bytes.substr(bytes.empty() ? 0 : 1));
  }
};

struct Tally {
  struct Acc {
    std::int64_t n = 0;
  };
  void accumulate(Acc& a) const { ++a.n; }
  void retract(Acc& a) const { --a.n; }
  void merge(Acc& a, const Acc& b) const { a.n += b.n; }
  std::int64_t get_value(const Acc& a) const { return a.n; }
};

inline bool register_example_udafs() {
  static const bool done = [] {
    auto& r = sql::FunctionRegistry::process();
    sql::register_aggregate_udf(r, "weighted_avg", WeightedAvg{});
    sql::register_aggregate_udf(r, "concat_agg", ConcatAgg{});
    sql::register_aggregate_udf(r, "tally", Tally{});
    return true;
  }();
  return done;
}

}  // namespace clink::test
