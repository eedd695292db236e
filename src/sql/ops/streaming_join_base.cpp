#include "streaming_join_base.hpp"

#include "clink/core/error.hpp"
#include "clink/state/state_codec.hpp"
#include "clink/state/state_ttl.hpp"

namespace clink::sql {

namespace {
// Candidate pairs evaluated at once (bounds the joined rows materialised per chunk).
constexpr std::size_t kMaxPairs = 16 * 1024;
}  // namespace

StreamingJoinBase::StreamingJoinBase(std::shared_ptr<const JoinConfig> cfg)
    : cfg_(std::move(cfg)),
      spec_(cfg_->spec),
      joined_(spec_),
      other_rows_{ColumnBatch(spec_.side[0]), ColumnBatch(spec_.side[1])},
      codec_{SideRowCodec(*spec_.side[0]), SideRowCodec(*spec_.side[1])},
      key_encoder_{RowKeyEncoder(*spec_.side[0], spec_.keys[0]), RowKeyEncoder(*spec_.side[1], spec_.keys[1])} {}

void StreamingJoinBase::open(RuntimeContext& ctx) {
  StreamOperator::open(ctx);
  if (spec_.keys[0].empty() && ctx.parallelism() > 1)
    throw ClinkError(spec_.where + ": a join without equi-join keys runs at parallelism 1, got " +
                     std::to_string(ctx.parallelism()));
  backend_ = ctx.keyed_state_backend_or_private();
  backend_->set_current_namespace({});
  // The two layouts have different names, so a savepoint of one never reads as the other.
  static constexpr const char* kMapNames[2] = {"join-left", "join-right"};
  static constexpr const char* kListNames[2] = {"join-left-rows", "join-right-rows"};
  for (int side = 0; side < 2; ++side) {
    if (!cfg_->list_state[side]) {
      state_[side] = backend_->register_state(kMapNames[side], StateKind::kMap, cfg_->state_ttl_ms);
      continue;
    }
    state_[side] = backend_->register_state(kListNames[side], StateKind::kList);
    // A savepoint taken before this side kept a list holds its rows in the map: they
    // would be invisible here, so the restore fails instead of joining without them.
    const StateId map = backend_->register_state(kMapNames[side], StateKind::kMap);
    bool has_rows = false;
    for (int kg = backend_->key_groups().first; kg <= backend_->key_groups().last && !has_rows; ++kg)
      backend_->for_each_entry(map, kg, [&](std::string_view, std::string_view, std::string_view) { has_rows = true; });
    if (has_rows)
      throw ClinkError(spec_.where + ": the restored state keeps input " + std::to_string(side) + "'s rows in '" +
                       kMapNames[side] + "' (a map), this plan in '" + kListNames[side] +
                       "' (a list, for an insert-only input): restore with the release that took the savepoint");
  }
}

void StreamingJoinBase::process_batch(int input, BatchPtr batch) {
  const auto& in = column_batch_cast(*batch);
  const int own = input, other = 1 - input;
  const std::size_t n = in.size();
  now_ = cfg_->state_ttl_ms > 0 ? backend_->clock().now_ms() : 0;
  // 1. Every row's key, then the other side's rows of each distinct key (decoded once).
  keys_.clear();
  key_end_.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    key_encoder_[own].encode(in, r, keys_);
    key_end_[r] = keys_.size();
  }
  // Both sides' state of every key, asked for before it is needed: the lookups below miss
  // the cache once per row on a large state, and issued together the misses overlap.
  for (std::size_t r = 0; r < n; ++r) {
    backend_->prefetch(state_[other], key_of(r));
    backend_->prefetch(state_[own], key_of(r));
  }
  touched_.clear();
  entries_.clear();
  entry_bytes_.clear();
  other_rows_[other].clear();
  row_entries_.resize(n);
  row_range_.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    std::string_view key = key_of(r);
    auto [it, created] = touched_.try_emplace(key);
    if (created) it->second = load_other(key, other);
    const bool null_key = has_null_key(in, r, spec_.keys[own], spec_.filter_nulls);
    row_entries_[r] = null_key ? Range{0, 0} : it->second;
  }
  // 2. In chunks of rows whose candidate pairs stay under kMaxPairs (so a hot key does
  // not materialise rows x matches joined rows at once), the residual over the chunk's
  // pairs in one pass, then 3. per row, in order: the subclass's transitions and emissions.
  for (std::size_t r = 0; r < n;) {
    joined_.reset_pairs();
    std::size_t end = r;
    while (end < n && (end == r || joined_.num_pairs() + (row_entries_[end].second - row_entries_[end].first) <=
                                       kMaxPairs)) {
      row_range_[end].first = static_cast<std::uint32_t>(joined_.num_pairs());
      for (std::uint32_t e = row_entries_[end].first; e < row_entries_[end].second; ++e)
        joined_.add_pair(static_cast<std::uint32_t>(end), e);
      row_range_[end].second = static_cast<std::uint32_t>(joined_.num_pairs());
      ++end;
    }
    joined_.evaluate(own, in, other_rows_[other]);
    for (; r < end; ++r) {
      matched_.clear();
      occurrences_ = 0;
      for (std::size_t p = row_range_[r].first; p < row_range_[r].second; ++p)
        if (joined_.matches(p)) {
          matched_.push_back(p);
          occurrences_ += entries_[pair_entry(p)].count;
        }
      row_bytes_.clear();
      codec_[own].encode(in, r, row_bytes_);
      backend_->set_current_key(key_of(r));
      process_row(in, r, own, other);
    }
  }
  // 4. Match counts of the other side's rows changed by this batch.
  for (auto& e : entries_) {
    if (!e.dirty) continue;
    backend_->set_current_key(e.key);
    put_value(other, std::string_view(entry_bytes_).substr(e.bytes_at, e.bytes_len), {e.count, e.matches});
  }
  joined_.flush(output());
}

StreamingJoinBase::Range StreamingJoinBase::load_other(std::string_view key, int other) {
  backend_->set_current_key(key);
  auto first = static_cast<std::uint32_t>(entries_.size());
  if (cfg_->list_state[other]) {
    load_other_list(key, other);
    return {first, static_cast<std::uint32_t>(entries_.size())};
  }
  expired_.clear();
  backend_->map_for_each(state_[other], [&](std::string_view row, std::string_view value) {
    RecordValue v;
    if (!read_value(value, v)) {
      expired_.emplace_back(row);
      return true;
    }
    add_entry(key, row, v, other);
    return true;
  });
  for (const auto& row : expired_) backend_->map_remove(state_[other], row);
  return {first, static_cast<std::uint32_t>(entries_.size())};
}

void StreamingJoinBase::load_other_list(std::string_view key, int other) {
  if (!backend_->get(state_[other], list_bytes_)) return;
  std::string_view in(list_bytes_);
  while (!in.empty()) {
    const std::uint64_t len = get_varint(in);
    if (len > in.size()) throw ClinkError(spec_.where + ": corrupt join state list");
    add_entry(key, in.substr(0, len), {1, 0}, other);
    in.remove_prefix(len);
  }
}

// A list side's entries are never written back (their matches are not kept), so their
// bytes are not kept either.
void StreamingJoinBase::add_entry(std::string_view key, std::string_view row, RecordValue v, int other) {
  OtherEntry e;
  e.key = key;
  e.count = v.count;
  e.matches = v.matches;
  if (!cfg_->list_state[other]) {
    e.bytes_at = entry_bytes_.size();
    e.bytes_len = row.size();
    entry_bytes_.append(row);
  }
  entries_.push_back(e);
  codec_[other].decode(row, other_rows_[other]);
}

void StreamingJoinBase::add_record(int side, std::int32_t matches) {
  if (cfg_->list_state[side]) {
    value_.clear();
    put_varint(row_bytes_.size(), value_);
    value_.append(row_bytes_);
    backend_->append(state_[side], value_);
    return;
  }
  backend_->map_update(state_[side], row_bytes_, [&](bool present, std::string_view current, std::string& next) {
    RecordValue v;
    if (present && read_value(current, v)) v.count += 1;
    else v.count = 1;
    v.matches = matches;
    encode_value(v, next);
    return true;
  });
}

void StreamingJoinBase::retract_record(int side) {
  if (cfg_->list_state[side])
    throw ClinkError(spec_.where + ": a retraction on input " + std::to_string(side) +
                     ", which the plan declared insert-only");
  backend_->map_update(state_[side], row_bytes_, [&](bool present, std::string_view current, std::string& next) {
    RecordValue v;
    if (!present || !read_value(current, v) || v.count <= 1) return false;
    v.count -= 1;
    encode_value(v, next);
    return true;
  });
}

// An expired entry (TTL) reads as absent.
bool StreamingJoinBase::read_value(std::string_view value, RecordValue& v) const {
  if (cfg_->state_ttl_ms > 0) {
    std::int64_t ts = get_ttl_timestamp(value);
    if (ttl_expired(ts, cfg_->state_ttl_ms, now_)) return false;
  }
  const std::uint64_t count = get_varint(value);
  const std::uint64_t matches = get_varint(value);
  if (!value.empty() || count > INT32_MAX || matches > INT32_MAX)
    throw ClinkError(spec_.where + ": corrupt join state value");
  v.count = static_cast<std::int32_t>(count);
  v.matches = static_cast<std::int32_t>(matches);
  return true;
}

void StreamingJoinBase::encode_value(RecordValue v, std::string& out) const {
  if (cfg_->state_ttl_ms > 0) put_ttl_timestamp(now_, out);
  put_varint(static_cast<std::uint64_t>(v.count), out);
  put_varint(static_cast<std::uint64_t>(v.matches), out);
}

void StreamingJoinBase::put_value(int side, std::string_view row, RecordValue v) {
  value_.clear();
  encode_value(v, value_);
  backend_->map_put(state_[side], row, value_);
}

}  // namespace clink::sql
