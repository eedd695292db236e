#include "join_mini_batch.hpp"

#include <numeric>

namespace clink::sql {

JoinMiniBatch::JoinMiniBatch(const JoinSpec& spec, std::int64_t size, const bool insert_only[2])
    : spec_(spec), size_(size), codec_{SideRowCodec(*spec.side[0]), SideRowCodec(*spec.side[1])} {
  for (int side = 0; side < 2; ++side) side_[side].fold = !insert_only[side];
}

void JoinMiniBatch::add(int side, const ColumnBatch& in, std::size_t from, std::size_t to) {
  Side& s = side_[side];
  if (!s.rows) s.rows = std::make_unique<ColumnBatch>(spec_.side[side], to - from);
  idx_.resize(to - from);
  std::iota(idx_.begin(), idx_.end(), static_cast<std::uint32_t>(from));
  s.rows->append_gather(in, idx_.data(), idx_.size());
  if (s.fold)
    for (std::size_t r = from; r < to; ++r) {
      codec_[side].encode(in, r, s.bytes);
      s.ends.push_back(s.bytes.size());
    }
  count_ += static_cast<std::int64_t>(to - from);
}

std::unique_ptr<ColumnBatch> JoinMiniBatch::take(int side) {
  Side& s = side_[side];
  count_ = 0;
  if (!s.rows || s.rows->size() == 0) return nullptr;
  std::unique_ptr<ColumnBatch> rows = std::move(s.rows);
  if (!s.fold) return rows;
  const std::size_t n = rows->size(), left = fold(s, *rows);
  s.bytes.clear();
  s.ends.clear();
  if (left == n) return rows;
  if (left == 0) return nullptr;
  idx_.clear();
  for (std::size_t r = 0; r < n; ++r)
    if (!cancelled_[r]) idx_.push_back(static_cast<std::uint32_t>(r));
  auto kept = std::make_unique<ColumnBatch>(spec_.side[side], left);
  kept->append_gather(*rows, idx_.data(), idx_.size());
  return kept;
}

// All rows with the same values remaining at a time have the same polarity (an opposite
// one would have cancelled), so only the last of them needs a look.
std::size_t JoinMiniBatch::fold(const Side& s, const ColumnBatch& rows) {
  const std::size_t n = rows.size();
  last_.clear();
  previous_.assign(n, -1);
  cancelled_.assign(n, false);
  std::size_t left = n;
  for (std::size_t r = 0; r < n; ++r) {
    const std::size_t at = r == 0 ? 0 : s.ends[r - 1];
    const std::string_view values = std::string_view(s.bytes).substr(at, s.ends[r] - at);
    auto [it, created] = last_.try_emplace(values, static_cast<std::int32_t>(r));
    if (created) continue;
    const std::int32_t last = it->second;
    if (last >= 0 && is_accumulate(rows.row_kind(static_cast<std::size_t>(last))) != is_accumulate(rows.row_kind(r))) {
      cancelled_[static_cast<std::size_t>(last)] = cancelled_[r] = true;
      it->second = previous_[static_cast<std::size_t>(last)];
      left -= 2;
      continue;
    }
    previous_[r] = last;
    it->second = static_cast<std::int32_t>(r);
  }
  return left;
}

}  // namespace clink::sql
