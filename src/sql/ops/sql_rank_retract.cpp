#include "sql_rank_retract.hpp"

#include <algorithm>

#include "clink/core/error.hpp"
#include "clink/sql/ops/sql_grouping.hpp"
#include "clink/state/state_ttl.hpp"

namespace clink::sql {

RankConfig RankConfig::parse(const SqlOpParams& p) {
  RankConfig c;
  c.where = p.where();
  c.in_schema = p.input_schema(0);
  c.out_schema = p.output_schema();
  c.keys = p.columns("keys", *c.in_schema);
  c.order = parse_order_keys(p, *c.in_schema);
  c.rank_start = p.get_int("rank_start", 1, 1);
  c.rank_end = p.require_int("rank_end", 1);
  c.output_rank_number = p.get_bool("output_rank_number", false);
  RankRowCodec::check_storable(*c.in_schema, p);
  std::vector<RowField> fields = c.in_schema->fields();
  if (c.output_rank_number) fields.push_back({"", LogicalType::bigint().not_null()});
  check_output_types(*c.out_schema, fields, p);
  return c;
}

void RetractableTopN::open(KeyedStateBackend& backend) {
  backend_ = &backend;
  state_ = backend.register_state("rank-data", StateKind::kMap, cfg_.state_ttl_ms);
}

bool RetractableTopN::parse_value(std::string_view v, std::vector<std::string_view>& rows) const {
  rows.clear();
  if (cfg_.state_ttl_ms > 0 && ttl_expired(get_ttl_timestamp(v), cfg_.state_ttl_ms, now_)) return false;
  const std::uint32_t n = KeyCodec<std::uint32_t>::decode(v);
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t len = KeyCodec<std::uint32_t>::decode(v);
    if (v.size() < len) throw ClinkError(cfg_.where + ": corrupt rank state");
    rows.push_back(v.substr(0, len));
    v.remove_prefix(len);
  }
  return true;
}

// The entries Flink's loops can reach: in sort order while the rows before an entry are at
// most rank_end + 1 (the arriving row shifts later entries by one). The arriving row's own
// key counts it (Flink's sorted map is updated before the emission), even when the key has
// no entry yet.
void RetractableTopN::read_prefix(std::string_view sort_key, bool accumulate) {
  used_ = 0;
  std::int64_t before = 0;
  bool complete = true;
  backend_->map_for_each(state_, [&](std::string_view k, std::string_view v) {
    if (before > cfg_.rank_end + 1) {
      complete = false;
      return false;
    }
    if (used_ == values_.size()) {
      values_.emplace_back();
      entries_.emplace_back();
    }
    values_[used_].assign(v);
    Entry& e = entries_[used_];
    if (!parse_value(values_[used_], e.rows)) return true;  // expired
    e.key.assign(k);
    e.count = static_cast<std::int64_t>(e.rows.size());
    before += e.count;
    ++used_;
    return true;
  });
  if (!accumulate) return;
  std::size_t at = 0;
  while (at < used_ && entries_[at].key < sort_key) ++at;
  if (at < used_ && entries_[at].key == sort_key) {
    entries_[at].count += 1;
    return;
  }
  if (at == used_ && !complete) return;  // beyond what can rank
  // A new key: an entry of the arriving row only (no stored rows, so values_ stays as it is).
  if (used_ == values_.size()) {
    values_.emplace_back();
    entries_.emplace_back();
  }
  std::rotate(entries_.begin() + static_cast<std::ptrdiff_t>(at), entries_.begin() + static_cast<std::ptrdiff_t>(used_),
              entries_.begin() + static_cast<std::ptrdiff_t>(used_) + 1);
  entries_[at].key.assign(sort_key);
  entries_[at].rows.clear();
  entries_[at].count = 1;
  ++used_;
}

void RetractableTopN::process(const std::string& key, const std::string& sort_key, const std::string& row,
                              bool accumulate, std::int64_t now) {
  now_ = now;
  backend_->set_current_key(key);
  read_prefix(sort_key, accumulate);
  const bool with_number = (cfg_.output_rank_number && !cfg_.top1()) || cfg_.rank_start > 1;
  if (accumulate) {
    if (with_number) emit_with_row_number(sort_key, row);
    else emit_without_row_number(sort_key, row);
  } else {
    if (with_number) retract_with_row_number(sort_key, row);
    else retract_without_row_number(sort_key, row);
  }
  update_entry(sort_key, row, accumulate);
}

// RetractableTopNFunction.emitRecordsWithRowNumber.
void RetractableTopN::emit_with_row_number(std::string_view sort_key, std::string_view input) {
  const std::int64_t end = cfg_.rank_end;
  std::int64_t rank = 0;
  std::string_view current;
  bool found = false;
  for (std::size_t i = 0; i < used_ && rank <= end; ++i) {
    const Entry& e = entries_[i];
    if (!found && e.key == sort_key) {
      rank += e.count;
      current = input;
      found = true;
    } else if (found) {
      for (std::size_t t = 0; t < e.rows.size() && rank <= end; ++t) {
        emit(e.rows[t], RowKind::kUpdateBefore, rank);
        emit(current, RowKind::kUpdateAfter, rank);
        current = e.rows[t];
        rank += 1;
      }
    } else {
      rank += e.count;
    }
  }
  if (rank <= end && found) emit(current, RowKind::kInsert, rank);
}

// RetractableTopNFunction.emitRecordsWithoutRowNumber.
void RetractableTopN::emit_without_row_number(std::string_view sort_key, std::string_view input) {
  const std::int64_t end = cfg_.rank_end;
  std::int64_t rank = 0;
  bool found = false, collect = false;
  std::string_view to_delete;
  for (std::size_t i = 0; i < used_ && rank <= end; ++i) {
    const Entry& e = entries_[i];
    if (!found && e.key == sort_key) {
      rank += e.count;
      collect = in_range(rank);
      found = true;
    } else if (found) {
      const std::int64_t last = rank + e.count;
      if (last <= end) {
        rank = last;
      } else {
        to_delete = e.rows[static_cast<std::size_t>(end - rank)];
        break;
      }
    } else {
      rank += e.count;
    }
  }
  if (!to_delete.empty()) emit(to_delete, RowKind::kDelete, 0, false);
  if (collect) emit(input, RowKind::kInsert, 0, false);
}

// RetractableTopNFunction.retractRecordWithRowNumber.
void RetractableTopN::retract_with_row_number(std::string_view sort_key, std::string_view input) {
  const std::int64_t end = cfg_.rank_end;
  std::int64_t rank = 0;
  std::string_view prev;
  bool found = false;
  for (std::size_t i = 0; i < used_ && rank <= end; ++i) {
    const Entry& e = entries_[i];
    if (!found && e.key == sort_key) {
      for (std::size_t t = 0; t < e.rows.size() && rank <= end; ++t) {
        if (!found && RankRowCodec::same_values(e.rows[t], input)) {
          prev = e.rows[t];
          found = true;
        } else if (found) {
          emit(prev, RowKind::kUpdateBefore, rank);
          emit(e.rows[t], RowKind::kUpdateAfter, rank);
          prev = e.rows[t];
        }
        rank += 1;
      }
    } else if (found) {
      for (std::size_t t = 0; t < e.rows.size() && rank <= end; ++t) {
        emit(prev, RowKind::kUpdateBefore, rank);
        emit(e.rows[t], RowKind::kUpdateAfter, rank);
        prev = e.rows[t];
        rank += 1;
      }
    } else {
      rank += e.count;
    }
  }
  if (rank <= end && found) emit(prev, RowKind::kDelete, rank);
}

// RetractableTopNFunction.retractRecordWithoutRowNumber.
void RetractableTopN::retract_without_row_number(std::string_view sort_key, std::string_view input) {
  const std::int64_t end = cfg_.rank_end;
  std::int64_t next = 1;
  bool found = false;
  for (std::size_t i = 0; i < used_ && next <= end; ++i) {
    const Entry& e = entries_[i];
    if (!found && e.key == sort_key) {
      for (std::size_t t = 0; t < e.rows.size() && next <= end; ++t) {
        if (!found && RankRowCodec::same_values(e.rows[t], input)) {
          emit(e.rows[t], RowKind::kDelete, next);
          next -= 1;
          found = true;
        } else if (found && next == end) {
          emit(e.rows[t], RowKind::kInsert, next);
        }
        next += 1;
      }
    } else if (found) {
      const std::int64_t last = next + e.count - 1;
      if (last < end) {
        next = last + 1;
      } else {
        emit(e.rows[static_cast<std::size_t>(end - next)], RowKind::kInsert, 0, false);
        break;
      }
    } else {
      next += e.count;
    }
  }
}

// The row joins (at the end) or leaves (its first equal row) its key's entry.
void RetractableTopN::update_entry(const std::string& sort_key, const std::string& row, bool accumulate) {
  rows_.clear();
  std::string stored;
  bool present = backend_->map_get(state_, sort_key, stored) && parse_value(stored, rows_);
  if (!accumulate) {
    if (!present) return;  // retracting a row that is not there (or expired): ignored, as Flink
    auto it = std::find_if(rows_.begin(), rows_.end(), [&](std::string_view r) { return RankRowCodec::same_values(r, row); });
    if (it == rows_.end()) return;
    rows_.erase(it);
    if (rows_.empty()) {
      backend_->map_remove(state_, sort_key);
      return;
    }
  } else {
    if (!present) rows_.clear();
    rows_.push_back(row);
  }
  bytes_.clear();
  if (cfg_.state_ttl_ms > 0) put_ttl_timestamp(now_, bytes_);
  KeyCodec<std::uint32_t>::encode(static_cast<std::uint32_t>(rows_.size()), bytes_);
  for (std::string_view r : rows_) {
    KeyCodec<std::uint32_t>::encode(static_cast<std::uint32_t>(r.size()), bytes_);
    bytes_.append(r);
  }
  backend_->map_put(state_, sort_key, bytes_);
}

}  // namespace clink::sql
