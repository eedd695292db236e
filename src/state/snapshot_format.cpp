#include "snapshot_format.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <random>

#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "clink/state/state_ttl.hpp"

namespace clink::state_internal {

namespace fs = std::filesystem;

namespace {
constexpr char kMagic[] = "CLINKKS1";
constexpr std::size_t kMagicSize = 8;
}  // namespace

const char* kind_name(StateKind kind) {
  switch (kind) {
    case StateKind::kValue: return "value";
    case StateKind::kList: return "list";
    case StateKind::kMap: return "map";
    case StateKind::kReducing: return "reducing";
    case StateKind::kAggregating: return "aggregating";
  }
  return "?";
}

StateKind kind_from_name(const std::string& name) {
  for (auto k : {StateKind::kValue, StateKind::kList, StateKind::kMap, StateKind::kReducing,
                 StateKind::kAggregating})
    if (name == kind_name(k)) return k;
  throw ClinkError("state snapshot: unknown state kind '" + name + "'");
}

nlohmann::json states_to_json(const std::vector<StateMeta>& states) {
  auto j = nlohmann::json::array();
  for (const auto& s : states) j.push_back({{"name", s.name}, {"kind", kind_name(s.kind)}, {"ttl_ms", s.ttl_ms}});
  return j;
}

std::vector<StateMeta> states_from_json(const nlohmann::json& j) {
  std::vector<StateMeta> out;
  for (const auto& s : j)
    out.push_back({s.at("name").get<std::string>(), kind_from_name(s.at("kind").get<std::string>()),
                   s.value("ttl_ms", std::int64_t{0})});
  return out;
}

void check_compatible(StateMeta& existing, StateKind kind, std::int64_t ttl_ms) {
  if (existing.kind != kind)
    throw ClinkError("state '" + existing.name + "' is a " + kind_name(existing.kind) + " state, not a " +
                     kind_name(kind) + " state");
  if ((existing.ttl_ms > 0) != (ttl_ms > 0))
    throw ClinkError("state '" + existing.name + "' " + (existing.ttl_ms > 0 ? "has" : "has no") +
                     " TTL in its checkpoint; enabling or disabling TTL on existing state is not supported");
  existing.ttl_ms = ttl_ms;
}

std::string_view get_length_prefixed(std::string_view& in) {
  auto n = get_varint(in);
  if (in.size() < n) throw ClinkError("state: truncated entry");
  auto s = in.substr(0, n);
  in.remove_prefix(n);
  return s;
}

void parse_composite_key(std::string_view& in, std::string_view& key, std::string_view& ns) {
  key = get_length_prefixed(in);
  ns = get_length_prefixed(in);
}

bool snapshot_value(StateKind kind, std::int64_t ttl_ms, std::int64_t now, std::string_view value,
                    std::string& scratch, std::string_view& out) {
  out = value;
  if (ttl_ms <= 0) return true;
  if (kind == StateKind::kList) {
    scratch.clear();
    if (ttl_filter_list(value, ttl_ms, now, scratch)) {
      if (scratch.empty()) return false;
      out = scratch;
    }
    return true;
  }
  return !ttl_value_expired(value, ttl_ms, now);
}

std::string file_stem(const std::string& operator_uid, int subtask) {
  std::string s;
  for (char c : operator_uid) s.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ? c : '_');
  if (s.empty()) s = "op";
  return s + "-" + std::to_string(subtask);
}

std::string random_hex(int bytes) {
  static thread_local std::mt19937_64 rng{std::random_device{}() ^
                                          (static_cast<std::uint64_t>(::getpid()) << 32)};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < bytes; ++i) {
    auto b = static_cast<unsigned>(rng() & 0xff);
    s.push_back(kHex[b >> 4]);
    s.push_back(kHex[b & 15]);
  }
  return s;
}

void move_file(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (!ec) return;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
  fs::remove(from);
}

void link_or_copy(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::create_hard_link(from, to, ec);
  if (!ec) return;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
}

// ---- writer ----

FullSnapshotWriter::FullSnapshotWriter(fs::path dir, std::string file_name, KeyGroupRange range,
                                       std::vector<StateMeta> states)
    : dir_(std::move(dir)), file_name_(std::move(file_name)), range_(range), states_(std::move(states)) {
  fs::create_directories(dir_);
  auto path = dir_ / file_name_;
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_) throw ClinkError("state snapshot: cannot create " + path.string() + ": " + std::strerror(errno));
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
  offsets_.reserve(static_cast<std::size_t>(range_.size()) + 1);
  current_kg_ = range_.first - 1;
  write(std::string_view(kMagic, kMagicSize));
}

FullSnapshotWriter::~FullSnapshotWriter() {
  if (file_) std::fclose(file_);
}

void FullSnapshotWriter::write(std::string_view bytes) {
  if (bytes.empty()) return;
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size())
    throw ClinkError("state snapshot: cannot write " + (dir_ / file_name_).string() + ": " + std::strerror(errno));
  pos_ += bytes.size();
}

void FullSnapshotWriter::flush_state() {
  if (count_ > 0) {
    std::string header;
    put_varint(static_cast<std::uint64_t>(current_state_), header);
    put_varint(count_, header);
    write(header);
    write(section_);
  }
  section_.clear();
  count_ = 0;
  current_state_ = -1;
}

void FullSnapshotWriter::begin_key_group(int kg) {
  if (kg <= current_kg_ || kg > range_.last) throw ClinkError("state snapshot: key groups out of order");
  flush_state();
  while (current_kg_ < kg) {
    offsets_.push_back(pos_);
    ++current_kg_;
  }
}

void FullSnapshotWriter::add(int state_index, std::string_view key, std::string_view ns, std::string_view value) {
  if (state_index != current_state_) {
    flush_state();
    current_state_ = state_index;
  }
  append_composite_key(key, ns, section_);
  put_length_prefixed(value, section_);
  ++count_;
  ++entries_;
}

KeyedStateHandle FullSnapshotWriter::finish(std::int64_t checkpoint_id, const char* backend) {
  flush_state();
  while (current_kg_ < range_.last) {
    offsets_.push_back(pos_);
    ++current_kg_;
  }
  offsets_.push_back(pos_);
  bool ok = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
  ok = std::fclose(file_) == 0 && ok;
  file_ = nullptr;
  if (!ok) throw ClinkError("state snapshot: cannot write " + (dir_ / file_name_).string() + ": " + std::strerror(errno));
  KeyedStateHandle h;
  h.key_groups = range_;
  h.description = {{"format", kFullFormat},
                   {"backend", backend},
                   {"checkpoint_id", checkpoint_id},
                   {"dir", fs::absolute(dir_).string()},
                   {"file", file_name_},
                   {"states", states_to_json(states_)},
                   {"offsets", offsets_},
                   {"entries", entries_},
                   {"size", pos_}};
  return h;
}

// ---- readers ----

void read_full_snapshot(const KeyedStateHandle& handle, KeyGroupRange range, const OnStates& on_states,
                        const OnEntry& on_entry) {
  const nlohmann::json& d = *handle.description;
  auto states = states_from_json(d.at("states"));
  on_states(states);
  int lo = std::max(range.first, handle.key_groups.first);
  int hi = std::min(range.last, handle.key_groups.last);
  if (lo > hi) return;
  auto offsets = d.at("offsets").get<std::vector<std::uint64_t>>();
  if (offsets.size() != static_cast<std::size_t>(handle.key_groups.size()) + 1)
    throw ClinkError("state snapshot: key-group index does not match the handle's key groups");
  auto at = [&](int kg) { return offsets[static_cast<std::size_t>(kg - handle.key_groups.first)]; };
  const std::uint64_t begin = at(lo), end = at(hi + 1);
  if (end <= begin) return;

  fs::path path = fs::path(d.at("dir").get<std::string>()) / d.at("file").get<std::string>();
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw ClinkError("state restore: cannot open " + path.string() + ": " + std::strerror(errno));
  std::string bytes(end - begin, '\0');
  bool ok = std::fseek(f, static_cast<long>(begin), SEEK_SET) == 0 &&
            std::fread(bytes.data(), 1, bytes.size(), f) == bytes.size();
  std::fclose(f);
  if (!ok) throw ClinkError("state restore: cannot read " + path.string() + " (truncated?)");

  for (int kg = lo; kg <= hi; ++kg) {
    std::string_view in = std::string_view(bytes).substr(at(kg) - begin, at(kg + 1) - at(kg));
    while (!in.empty()) {
      auto state = get_varint(in);
      auto count = get_varint(in);
      if (state >= states.size()) throw ClinkError("state restore: bad state index in " + path.string());
      for (std::uint64_t i = 0; i < count; ++i) {
        std::string_view key, ns;
        parse_composite_key(in, key, ns);
        std::string_view value = get_length_prefixed(in);
        on_entry(static_cast<int>(state), kg, key, ns, value);
      }
    }
  }
}

void read_snapshot(const KeyedStateHandle& handle, KeyGroupRange range, const OnStates& on_states,
                   const OnEntry& on_entry) {
  auto format = handle.description->value("format", std::string{});
  if (format == kFullFormat) return read_full_snapshot(handle, range, on_states, on_entry);
  if (format == kRocksDbFormat) return read_rocksdb_snapshot(handle, range, on_states, on_entry);
  throw ClinkError("state restore: unknown keyed state format '" + format + "'");
}

}  // namespace clink::state_internal
