// The state handles of process table functions (process_table_function.hpp) over the
// operator's keyed state backend (here, not in sql/function: the backend is a layer above).
// With a TTL (Flink's @StateHint(ttl), as its StateTtlConfig with OnCreateAndWrite and
// NeverReturnExpired) the entries use the backend's TTL layout (state_ttl.hpp): a value or
// map value is `last write time(8) bytes`, a list element `time(8) varint(len) bytes`, so
// full snapshots and RocksDB compaction drop the expired ones too; a read skips and
// removes them.
#include <cstring>

#include "clink/core/error.hpp"
#include "clink/sql/function/process_table_function.hpp"
#include "clink/state/keyed_state_backend.hpp"
#include "clink/state/state_codec.hpp"
#include "clink/state/state_ttl.hpp"

namespace clink::sql {

namespace {

StateId sid(int id) { return StateId{id}; }

void put_u32(std::string& out, std::uint32_t v) {
  char b[4];
  std::memcpy(b, &v, 4);
  out.append(b, 4);
}

// `bytes` after its write time, or none when expired.
std::optional<std::string_view> live(std::string_view stored, std::int64_t ttl_ms, std::int64_t now) {
  const std::int64_t written = get_ttl_timestamp(stored);
  if (ttl_expired(written, ttl_ms, now)) return std::nullopt;
  return stored;
}

std::string stamped(std::string_view bytes, std::int64_t now) {
  std::string out;
  put_ttl_timestamp(now, out);
  out.append(bytes);
  return out;
}

}  // namespace

std::optional<std::string> PtfValueState::get() const {
  std::string out;
  if (!access_->get(sid(id_), out)) return std::nullopt;
  if (ttl_ms_ <= 0) return out;
  auto v = live(out, ttl_ms_, access_->clock().now_ms());
  if (!v) {
    access_->remove(sid(id_));
    return std::nullopt;
  }
  return std::string(*v);
}
void PtfValueState::set(std::string_view bytes) {
  if (ttl_ms_ <= 0) return access_->put(sid(id_), bytes);
  access_->put(sid(id_), stamped(bytes, access_->clock().now_ms()));
}
std::optional<std::int64_t> PtfValueState::get_int64() const {
  auto v = get();
  if (!v) return std::nullopt;
  if (v->size() != 8) throw ClinkError("process table function: value state does not hold an int64");
  std::int64_t x;
  std::memcpy(&x, v->data(), 8);
  return x;
}
void PtfValueState::set_int64(std::int64_t v) {
  char b[8];
  std::memcpy(b, &v, 8);
  set(std::string_view(b, 8));
}
void PtfValueState::clear() { access_->remove(sid(id_)); }

// A list is the concatenation of its elements (the backend's list layout), each a 4-byte
// length then its bytes.
void PtfListState::add(std::string_view element) {
  std::string e;
  if (ttl_ms_ > 0) {
    put_ttl_timestamp(access_->clock().now_ms(), e);
    put_varint(element.size(), e);
  } else {
    put_u32(e, static_cast<std::uint32_t>(element.size()));
  }
  e.append(element);
  access_->append(sid(id_), e);
}
std::vector<std::string> PtfListState::get() const {
  std::string all;
  std::vector<std::string> out;
  if (!access_->get(sid(id_), all)) return out;
  if (ttl_ms_ > 0) {  // the unexpired elements; the expired ones are removed
    const std::int64_t now = access_->clock().now_ms();
    std::string kept;
    bool expired = false;
    for (std::string_view in = all; !in.empty();) {
      std::string_view element_start = in;
      const std::int64_t written = get_ttl_timestamp(in);
      const std::uint64_t n = get_varint(in);
      if (n > in.size()) throw ClinkError("process table function: corrupt list state");
      const std::string_view element = in.substr(0, n);
      in.remove_prefix(n);
      if (ttl_expired(written, ttl_ms_, now)) {
        expired = true;
        continue;
      }
      out.emplace_back(element);
      kept.append(element_start.substr(0, element_start.size() - in.size()));
    }
    if (expired) {
      if (kept.empty()) access_->remove(sid(id_));
      else access_->put(sid(id_), kept);
    }
    return out;
  }
  std::size_t at = 0;
  while (at + 4 <= all.size()) {
    std::uint32_t n;
    std::memcpy(&n, all.data() + at, 4);
    at += 4;
    if (at + n > all.size()) throw ClinkError("process table function: corrupt list state");
    out.emplace_back(all.substr(at, n));
    at += n;
  }
  return out;
}
void PtfListState::clear() { access_->remove(sid(id_)); }

std::optional<std::string> PtfMapState::get(std::string_view key) const {
  std::string out;
  if (!access_->map_get(sid(id_), key, out)) return std::nullopt;
  if (ttl_ms_ <= 0) return out;
  auto v = live(out, ttl_ms_, access_->clock().now_ms());
  if (!v) {
    access_->map_remove(sid(id_), key);
    return std::nullopt;
  }
  return std::string(*v);
}
void PtfMapState::put(std::string_view key, std::string_view value) {
  if (ttl_ms_ <= 0) return access_->map_put(sid(id_), key, value);
  access_->map_put(sid(id_), key, stamped(value, access_->clock().now_ms()));
}
void PtfMapState::remove(std::string_view key) { access_->map_remove(sid(id_), key); }
void PtfMapState::for_each(const std::function<bool(std::string_view, std::string_view)>& fn) const {
  if (ttl_ms_ <= 0) return access_->map_for_each(sid(id_), fn);
  const std::int64_t now = access_->clock().now_ms();
  std::vector<std::string> expired;
  access_->map_for_each(sid(id_), [&](std::string_view key, std::string_view stored) {
    auto v = live(stored, ttl_ms_, now);
    if (!v) {
      expired.emplace_back(key);
      return true;
    }
    return fn(key, *v);
  });
  for (const auto& key : expired) access_->map_remove(sid(id_), key);  // not while iterating
}
void PtfMapState::clear() { access_->map_clear(sid(id_)); }

}  // namespace clink::sql
