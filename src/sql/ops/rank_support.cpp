#include "rank_support.hpp"

#include <algorithm>
#include <cstring>

#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "clink/sql/ops/row_key.hpp"

namespace clink::sql {

namespace {

std::vector<std::size_t> all_columns(const Schema& s) {
  std::vector<std::size_t> c(s.size());
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = i;
  return c;
}

void put_u32(std::uint32_t v, std::string& out) { KeyCodec<std::uint32_t>::encode(v, out); }
std::uint32_t take_u32(std::string_view& in) {
  if (in.size() < 4) throw ClinkError("rank state: truncated buffer");
  return KeyCodec<std::uint32_t>::decode(in);
}

}  // namespace

// ------------------------------------------------------------------ SortKeyEncoder

SortKeyEncoder::SortKeyEncoder(const Schema&, std::vector<SortKey> keys) : keys_(std::move(keys)) {}

void SortKeyEncoder::check_sortable(const LogicalType& type, const SqlOpParams& p) {
  if (type.is_nested()) p.fail("an ORDER BY column of type " + type.to_string() + " has no order");
}

void SortKeyEncoder::encode(const ColumnBatch& b, std::size_t row, std::string& out) const {
  for (const SortKey& k : keys_) {
    const Column& c = b.column(k.column);
    if (c.is_null(row)) {
      out.push_back(k.nulls_first ? '\0' : '\2');
      continue;
    }
    out.push_back('\1');
    const std::size_t from = out.size();
    if (c.type().is_string_like()) {
      // Escaped bytes and a terminator: prefix-free, so byte order is the strings' order
      // (Flink compares strings and binaries by their bytes, unsigned).
      for (char ch : c.string_at(row)) {
        out.push_back(ch);
        if (ch == '\0') out.push_back('\xff');
      }
      out.push_back('\0');
      out.push_back('\0');
    } else {
      // The column key encoding is order-preserving for the fixed-width types; drop its marker.
      scratch_.clear();
      append_key_value(c, row, scratch_);
      out.append(scratch_, 1, std::string::npos);
    }
    if (k.descending)
      for (std::size_t i = from; i < out.size(); ++i) out[i] = static_cast<char>(~static_cast<unsigned char>(out[i]));
  }
}

// ------------------------------------------------------------------ RankRowCodec

RankRowCodec::RankRowCodec(const Schema& schema) : encoder_(schema, all_columns(schema)), columns_(schema.size()) {}

void RankRowCodec::check_storable(const Schema& schema, const SqlOpParams& p) {
  for (const auto& f : schema.fields())
    if (!key_type_decodable(f.type))
      p.fail("column '" + f.name + "' of type " + f.type.to_string() +
             " cannot be kept in rank state (nested types are not supported in Top-N and deduplication)");
}

void RankRowCodec::encode(const ColumnBatch& b, std::size_t row, std::string& out) const {
  KeyCodec<std::int64_t>::encode(b.event_times()[row], out);
  encoder_.encode(b, row, out);
}

EventTime RankRowCodec::event_time(std::string_view bytes) {
  if (bytes.size() < 8) throw ClinkError("rank state: truncated row");
  return KeyCodec<std::int64_t>::decode(bytes);
}

EventTime RankRowCodec::decode(std::string_view bytes, ColumnBatch& out) const {
  const EventTime t = event_time(bytes);
  bytes.remove_prefix(8);
  for (std::size_t c = 0; c < columns_; ++c) decode_key_value(bytes, out.column(c));
  return t;
}

// ------------------------------------------------------------------ TopNBuffer

void TopNBuffer::load(std::string_view in) {
  clear();
  if (in.empty()) return;
  const std::uint32_t n = take_u32(in);
  entries_.reserve(n);
  arena_.reserve(in.size());
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t kl = take_u32(in);
    if (in.size() < kl) throw ClinkError("rank state: truncated buffer");
    const std::string_view k = in.substr(0, kl);
    in.remove_prefix(kl);
    const std::uint32_t rl = take_u32(in);
    if (in.size() < rl) throw ClinkError("rank state: truncated buffer");
    insert(entries_.size(), k, in.substr(0, rl));
    in.remove_prefix(rl);
  }
}

void TopNBuffer::save(std::string& out) const {
  put_u32(static_cast<std::uint32_t>(entries_.size()), out);
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    put_u32(entries_[i].key_len, out);
    out.append(key(i));
    put_u32(entries_[i].row_len, out);
    out.append(row(i));
  }
}

std::size_t TopNBuffer::upper_bound(std::string_view k) const {
  // Small buffers: from the back, where most new rows that still rank land.
  std::size_t i = entries_.size();
  while (i > 0 && key(i - 1) > k) --i;
  return i;
}

void TopNBuffer::insert(std::size_t pos, std::string_view k, std::string_view r) {
  Entry e;
  e.key_off = static_cast<std::uint32_t>(arena_.size());
  e.key_len = static_cast<std::uint32_t>(k.size());
  arena_.append(k);
  e.row_off = static_cast<std::uint32_t>(arena_.size());
  e.row_len = static_cast<std::uint32_t>(r.size());
  arena_.append(r);
  entries_.insert(entries_.begin() + static_cast<std::ptrdiff_t>(pos), e);
}

void TopNBuffer::compact_if_sparse() {
  std::size_t live = 0;
  for (const Entry& e : entries_) live += e.key_len + e.row_len;
  if (arena_.size() <= 2 * live + 4096) return;
  std::string old;
  old.swap(arena_);
  std::vector<Entry> entries;
  entries.swap(entries_);
  arena_.reserve(live);
  entries_.reserve(entries.size());
  for (const Entry& e : entries)
    insert(entries_.size(), {old.data() + e.key_off, e.key_len}, {old.data() + e.row_off, e.row_len});
}

std::size_t TopNBuffer::group_end(std::size_t i) const {
  std::size_t j = i + 1;
  while (j < entries_.size() && key(j) == key(i)) ++j;
  return j;
}

// ------------------------------------------------------------------ RankEmitter

void RankEmitter::emit(std::string_view row, RowKind kind, std::int64_t rank, std::optional<EventTime> time) {
  if (!out_) out_ = std::make_unique<ColumnBatch>(schema_, 64);
  const EventTime t = codec_.decode(row, *out_);
  if (output_rank_) out_->column(schema_->size() - 1).append<std::int64_t>(constant_rank_.value_or(rank));
  out_->row_kinds().push_back(kind);
  out_->event_times().push_back(time.value_or(t));
}

void RankEmitter::flush(Output& out) {
  if (out_ && out_->size() > 0) out.emit(std::move(out_));
  out_.reset();
}

std::vector<SortKey> parse_order_keys(const SqlOpParams& p, const Schema& input) {
  const auto& order = p.require("order");
  if (!order.is_array() || order.empty()) p.fail("param 'order' must be a non-empty array of {column, descending, nulls_first}");
  std::vector<SortKey> keys;
  for (const auto& o : order) {
    SortKey k;
    k.column = p.column(o.at("column"), input, "param 'order'");
    k.descending = o.value("descending", false);
    k.nulls_first = o.value("nulls_first", !k.descending);
    SortKeyEncoder::check_sortable(input.type(k.column), p);
    keys.push_back(k);
  }
  return keys;
}

}  // namespace clink::sql
