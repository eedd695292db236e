#pragma once
// Flink's `datagen` table source: every field generated per row, by its options
//   fields.<f>.kind      random (default) | sequence
//   fields.<f>.min/max   random numbers (and DECIMAL) in [min, max]; default the type's range
//   fields.<f>.max-past  random TIMESTAMP/TIMESTAMP_LTZ/DATE in [start time - max-past, start time] (ms)
//   fields.<f>.length    random string/bytes length (default 100), collection size (default 3)
//   fields.<f>.var-len   random strings/bytes of length 1..length
//   fields.<f>.start/end sequence of integers (or their text for strings), required for sequence
//   fields.<f>.null-rate probability of NULL (0..1)
//   rows-per-second      of the whole source (default 10000)
//   number-of-rows       total rows (default unbounded; sequences bound it too, as Flink)
// Rows are numbered globally and dealt to subtasks as datagen does (row i, i+p, ...), so
// a sequence is split over the subtasks and the union is the same at any parallelism;
// a random value depends only on (field, row), so a restored reader continues exactly.
// Random strings are hex digits, as Flink's RandomGenerator.
#include <memory>
#include <string>
#include <vector>

#include "clink/connectors/sql/sql_source.hpp"

namespace clink::sql {

struct DatagenFieldSpec {
  enum class Kind { kRandom, kSequence };
  Kind kind = Kind::kRandom;
  bool has_min = false, has_max = false;
  double min = 0, max = 0;          // random numbers
  std::string min_text, max_text;   // DECIMAL bounds, exact
  std::int64_t start = 0, end = 0;  // sequence
  std::int64_t length = -1;         // -1: the default
  bool var_len = false;
  std::int64_t max_past_ms = 0;
  double null_rate = 0;
};

struct DatagenSqlConfig {
  SchemaPtr schema;
  std::vector<DatagenFieldSpec> fields;  // one per schema field
  double rows_per_second = 10000;        // 0: unlimited
  std::int64_t number_of_rows = -1;      // < 0: unbounded
};

class DatagenSqlSource final : public SqlSource {
 public:
  explicit DatagenSqlSource(DatagenSqlConfig config);
  std::unique_ptr<SqlSourceReader> create_reader(int subtask, int parallelism) const override;
  const SchemaPtr& output_schema() const override { return config_.schema; }
  std::string factory_name() const override { return "sql_datagen_source"; }
  // Rows in total (the minimum of number-of-rows and every sequence's length); -1: unbounded.
  std::int64_t total_rows() const { return total_rows_; }

 private:
  DatagenSqlConfig config_;
  std::int64_t total_rows_ = -1;
};

}  // namespace clink::sql
