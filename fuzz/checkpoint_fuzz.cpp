// libFuzzer target: what a restore reads from a checkpoint directory (docs/fuzzing.md).
// The first byte picks the reader, the rest is the file: the `_metadata` file
// (CheckpointMetadata::read), an operator state file (OperatorStateStore::parse), a
// keyed state snapshot in the canonical format restored by the memory or the RocksDB
// backend (its key-group index from the next three bytes), or a timers file. A damaged file must fail with a ClinkError (CorruptCheckpointError for the
// metadata), never crash, hang or allocate without bound. (Checkpoint files carry
// checksums, so damage is normally caught before these readers; they must hold anyway.)
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "clink/checkpoint/checkpoint_metadata.hpp"
#include "clink/checkpoint/operator_state.hpp"
#include "clink/checkpoint/timer_snapshot.hpp"
#include "clink/state/keyed_state_backend.hpp"
#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "fuzz_support.hpp"

namespace {

const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("clink-fuzz-checkpoint-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

constexpr int kMaxParallelism = 4;

// `bytes` as the snapshot file of key groups 0-3: its first three bytes give the sizes of
// key groups 0-2 (clamped), key group 3 takes the rest.
clink::KeyedStateHandle keyed_handle(std::string_view bytes) {
  std::uint64_t sizes[3] = {0, 0, 0};
  for (int i = 0; i < 3 && !bytes.empty(); ++i) {
    sizes[i] = static_cast<unsigned char>(bytes.front());
    bytes.remove_prefix(1);
  }
  const std::string file = std::string("CLINKKS1") + std::string(bytes);
  write_file(scratch() / "keyed.bin", file);
  std::vector<std::uint64_t> offsets{8};
  for (auto n : sizes) offsets.push_back(std::min<std::uint64_t>(offsets.back() + n, file.size()));
  offsets.push_back(file.size());
  nlohmann::json states = nlohmann::json::array();
  for (const char* kind : {"value", "list", "map", "reducing"}) {
    states.push_back({{"name", std::string(kind)}, {"kind", kind}, {"ttl_ms", 0}});
    states.push_back({{"name", std::string(kind) + "-ttl"}, {"kind", kind}, {"ttl_ms", 60000}});
  }
  nlohmann::json d = {{"format", "clink-keyed-full-v1"}, {"backend", "memory"}, {"checkpoint_id", 1},
                      {"dir", scratch().string()}, {"file", "keyed.bin"}, {"states", states},
                      {"offsets", offsets}, {"entries", 0}, {"size", file.size()}};
  return clink::KeyedStateHandle{d, clink::KeyGroupRange{0, kMaxParallelism - 1}};
}

// Restored at parallelism 1 and 2 (the second subtask reads only key groups 2-3);
// RocksDB at parallelism 1 only (opening a database is most of an input's time).
void restore_keyed(const std::string& backend, std::string_view bytes) {
  const auto handle = keyed_handle(bytes);
  for (int parallelism : {1, 2}) {
    if (backend == "rocksdb" && parallelism > 1) break;
    clink::StateBackendConfig config;
    config.kind = backend;
    config.working_dir = scratch() / "working";
    std::filesystem::remove_all(config.working_dir);
    auto range = clink::key_group_range_for_subtask(kMaxParallelism, parallelism, parallelism - 1);
    auto state = clink::make_keyed_state_backend(config, "fuzz", 0, range, kMaxParallelism,
                                                 clink::SystemClock::instance());
    state->restore({handle});
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return -1;
  const std::string_view file(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    switch (data[0] % 5) {
      case 0: {
        write_file(scratch() / clink::kMetadataFile, file);
        auto meta = clink::CheckpointMetadata::read(scratch());
        meta.to_json();
        break;
      }
      case 1:
        clink::OperatorStateStore::parse(file, "fuzz input");
        break;
      case 2:
        restore_keyed("memory", file);
        break;
      case 3:
        restore_keyed("rocksdb", file);
        break;
      default: {
        write_file(scratch() / "timers.bin", file);
        clink::TimerService timers(clink::SystemClock::instance());
        clink::restore_timers(timers, {{scratch() / "timers.bin", 0}}, clink::KeyGroupRange{0, 1}, kMaxParallelism, 0);
      }
    }
  } catch (const clink::ClinkError&) {
  } catch (const std::exception& e) {
    clink::fuzz::finding("an exception that is not a ClinkError", e.what());
  }
  return 0;
}
