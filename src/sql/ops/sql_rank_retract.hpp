#pragma once
// Internal: sql_rank's config and its Retract strategy (Flink's RetractableTopNFunction):
// every row of a partition in keyed map state "rank-data", sort key -> [TTL time]
// [u32 count]{[u32 length][row]}..., rows of a key in arrival order. Per input row the
// entries that can hold a rank are read in key (= sort) order, Flink's emission is
// replayed over them, then the row is added to or removed from its key's entry.
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "clink/state/keyed_state_backend.hpp"
#include "rank_support.hpp"

namespace clink::sql {

struct RankConfig {
  std::string where;
  SchemaPtr in_schema, out_schema;
  std::vector<std::size_t> keys;
  std::vector<SortKey> order;
  std::int64_t rank_start = 1, rank_end = 1;
  bool output_rank_number = false;
  bool retract = false;
  std::int64_t state_ttl_ms = 0;
  // Top-1: Flink's RankNumberColumnRemoveRule drops the rank number of a one-number range
  // and projects it as a constant, so the functions run without it: the Retract strategy
  // emits -D / +I when the top row changes, and AppendFast runs FastTop1Function (-U / +U).
  bool top1() const { return rank_start == 1 && rank_end == 1; }

  // keys, order, rank_start, rank_end, output_rank_number and the schemas (the output is
  // the input, then the rank number when output).
  static RankConfig parse(const SqlOpParams& p);
};

class RetractableTopN {
 public:
  RetractableTopN(const RankConfig& cfg, RankEmitter& out) : cfg_(cfg), out_(out) {}
  void open(KeyedStateBackend& backend);
  // One input row: `accumulate` for +I / +U, else a retraction (-U / -D).
  void process(const std::string& key, const std::string& sort_key, const std::string& row, bool accumulate,
               std::int64_t now);

 private:
  struct Entry {
    std::string key;
    std::vector<std::string_view> rows;  // into values_
    std::int64_t count = 0;              // rows.size(), plus the arriving row for its own key
  };
  void read_prefix(std::string_view sort_key, bool accumulate);
  void emit_with_row_number(std::string_view sort_key, std::string_view input);
  void emit_without_row_number(std::string_view sort_key, std::string_view input);
  void retract_with_row_number(std::string_view sort_key, std::string_view input);
  void retract_without_row_number(std::string_view sort_key, std::string_view input);
  void update_entry(const std::string& sort_key, const std::string& row, bool accumulate);
  bool in_range(std::int64_t rank) const { return rank >= cfg_.rank_start && rank <= cfg_.rank_end; }
  void emit(std::string_view row, RowKind kind, std::int64_t rank, bool check_range = true) {
    if (!check_range || in_range(rank)) out_.emit(row, kind, rank);
  }
  bool parse_value(std::string_view value, std::vector<std::string_view>& rows) const;

  const RankConfig& cfg_;
  RankEmitter& out_;
  KeyedStateBackend* backend_ = nullptr;
  StateId state_;
  std::int64_t now_ = 0;
  std::vector<Entry> entries_;
  std::size_t used_ = 0;
  std::deque<std::string> values_;  // the entries' state values (rows point into them; a deque never moves them)
  std::string bytes_;
  std::vector<std::string_view> rows_;
};

}  // namespace clink::sql
