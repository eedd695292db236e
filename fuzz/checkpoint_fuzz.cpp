// libFuzzer target: what a restore reads from a checkpoint directory (docs/fuzzing.md).
// The first byte picks the reader: the `_metadata` file (CheckpointMetadata::read) or an
// operator state file (OperatorStateStore::parse); the rest is the file. A damaged file
// must fail with a ClinkError (CorruptCheckpointError for the metadata), never crash,
// hang or allocate without bound.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "clink/checkpoint/checkpoint_metadata.hpp"
#include "clink/checkpoint/operator_state.hpp"
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return -1;
  const std::string_view file(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    if (data[0] % 2 == 0) {
      std::ofstream(scratch() / clink::kMetadataFile, std::ios::binary | std::ios::trunc)
          .write(file.data(), static_cast<std::streamsize>(file.size()));
      auto meta = clink::CheckpointMetadata::read(scratch());
      meta.to_json();
    } else {
      clink::OperatorStateStore::parse(file, "fuzz input");
    }
  } catch (const clink::ClinkError&) {
  } catch (const std::exception& e) {
    clink::fuzz::finding("an exception that is not a ClinkError", e.what());
  }
  return 0;
}
