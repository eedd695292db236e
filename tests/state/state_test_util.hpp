#pragma once
#include <malloc.h>
// Helpers of the state tests (with tests/support's manual clock): temporary directories,
// backends of both kinds, and a dump of everything a backend holds.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "clink/runtime/key_group.hpp"
#include "clink/state/keyed_state_backend.hpp"

#include "../support/manual_clock.hpp"
#include "../support/temp_dir.hpp"

namespace clink::test {

namespace fs = std::filesystem;

// Builds backends of one kind, with working directories under one temporary directory.
struct BackendMaker {
  std::string kind;
  TempDir work;
  ManualClock clock;
  bool incremental = true;

  std::unique_ptr<KeyedStateBackend> make(KeyGroupRange range, int max_parallelism = kDefaultMaxParallelism,
                                          int subtask = 0, const std::string& uid = "op") {
    StateBackendConfig c;
    c.kind = kind;
    c.working_dir = work.path / "work";
    c.incremental = incremental;
    return make_keyed_state_backend(c, uid, subtask, range, max_parallelism, clock);
  }
  std::unique_ptr<KeyedStateBackend> make_subtask(int parallelism, int subtask, int max_parallelism = kDefaultMaxParallelism) {
    return make(key_group_range_for_subtask(max_parallelism, parallelism, subtask), max_parallelism, subtask);
  }
};

// The key of an int64 key (as the operators encode it), and what a backend holds for the
// current key, read through its public calls: "<absent>" for nothing.
inline std::string key(std::int64_t k) { return encode_key<std::int64_t>(k); }

// The bytes malloc has handed out (small blocks and mmapped ones).
inline std::size_t heap_in_use() {
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}
inline std::string get(KeyedStateBackend& b, StateId id) {
  std::string out;
  return b.get(id, out) ? out : "<absent>";
}
inline std::string map_get(KeyedStateBackend& b, StateId id, std::string_view user_key) {
  std::string out;
  return b.map_get(id, user_key, out) ? out : "<absent>";
}
inline std::vector<std::pair<std::string, std::string>> map_entries(KeyedStateBackend& b, StateId id) {
  std::vector<std::pair<std::string, std::string>> out;
  b.map_for_each(id, [&](std::string_view k, std::string_view v) {
    out.emplace_back(k, v);
    return true;
  });
  return out;
}

// (state, key group, key, namespace, value) of every entry, sorted.
using Dump = std::vector<std::tuple<std::string, int, std::string, std::string, std::string>>;

inline Dump dump(KeyedStateBackend& b, const std::vector<std::pair<std::string, StateId>>& states) {
  Dump out;
  for (const auto& [name, id] : states)
    for (int kg = b.key_groups().first; kg <= b.key_groups().last; ++kg)
      b.for_each_entry(id, kg, [&](std::string_view k, std::string_view ns, std::string_view v) {
        out.emplace_back(name, kg, std::string(k), std::string(ns), std::string(v));
      });
  std::sort(out.begin(), out.end());
  return out;
}

inline std::uint64_t dir_bytes(const fs::path& dir) {
  std::uint64_t n = 0;
  if (!fs::exists(dir)) return 0;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) n += e.file_size();
  return n;
}

// Files (by path) and their sizes under a directory.
inline std::map<std::string, std::uint64_t> files_under(const fs::path& dir) {
  std::map<std::string, std::uint64_t> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out[e.path().string()] = e.file_size();
  return out;
}

}  // namespace clink::test
