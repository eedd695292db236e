// The state handles of process table functions (process_table_function.hpp) over the
// operator's keyed state backend (here, not in sql/function: the backend is a layer above).
#include <cstring>

#include "clink/core/error.hpp"
#include "clink/sql/function/process_table_function.hpp"
#include "clink/state/keyed_state_backend.hpp"

namespace clink::sql {

namespace {

StateId sid(int id) { return StateId{id}; }

void put_u32(std::string& out, std::uint32_t v) {
  char b[4];
  std::memcpy(b, &v, 4);
  out.append(b, 4);
}

}  // namespace

std::optional<std::string> PtfValueState::get() const {
  std::string out;
  if (!access_->get(sid(id_), out)) return std::nullopt;
  return out;
}
void PtfValueState::set(std::string_view bytes) { access_->put(sid(id_), bytes); }
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
  put_u32(e, static_cast<std::uint32_t>(element.size()));
  e.append(element);
  access_->append(sid(id_), e);
}
std::vector<std::string> PtfListState::get() const {
  std::string all;
  std::vector<std::string> out;
  if (!access_->get(sid(id_), all)) return out;
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
  return out;
}
void PtfMapState::put(std::string_view key, std::string_view value) { access_->map_put(sid(id_), key, value); }
void PtfMapState::remove(std::string_view key) { access_->map_remove(sid(id_), key); }
void PtfMapState::for_each(const std::function<bool(std::string_view, std::string_view)>& fn) const {
  access_->map_for_each(sid(id_), fn);
}
void PtfMapState::clear() { access_->map_clear(sid(id_)); }

}  // namespace clink::sql
