#pragma once
// Checkpoint integrity (issue 16, item 6): every file of a completed checkpoint is
// recorded in its `_metadata` with its size and xxh64, and `_metadata` carries a
// checksum of itself. A restore verifies them first, so a bit flip in keyed state, a
// source position or the metadata, or a truncated RocksDB file, fails with an error
// naming the file and the checkpoint instead of restoring different state.
//
// Where clink chose the checkpoint (the newest of a checkpoint directory, a restart
// after a failure, a new HA leader resuming a job), a corrupt or incomplete newest
// checkpoint gives way to the next older intact one. A checkpoint or savepoint the user
// named is never replaced by another: it fails.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "clink/checkpoint/checkpoint_metadata.hpp"

namespace clink {

// The size and xxh64 of a file's bytes; throws ClinkError naming the file if unreadable.
FileDigest digest_file(const std::filesystem::path& file);

// The digests of a checkpoint's files before its `_metadata` is written: every regular
// file under `dir` (relative names) and the shared files its keyed handles reference
// (absolute names). Shared files are immutable: their digests are taken once and kept
// in `shared_cache` across checkpoints.
std::map<std::string, FileDigest> digest_checkpoint_files(const std::filesystem::path& dir,
                                                          const CheckpointMetadata& meta,
                                                          std::map<std::string, FileDigest>& shared_cache);

// Checks every recorded file of the checkpoint in `dir` (present, same size, same
// xxh64); throws CorruptCheckpointError naming the checkpoint and the file.
void verify_checkpoint_files(const std::filesystem::path& dir, const CheckpointMetadata& meta);

// Reads `_metadata` (its own checksum included) and verifies the files: what a restore
// reads. Throws CorruptCheckpointError for a damaged or incomplete checkpoint.
CheckpointMetadata read_verified_checkpoint(const std::filesystem::path& dir);

// The newest intact completed checkpoint under a checkpoint directory with an id below
// `below` (if given); the newer corrupt or incomplete ones are passed over, each with
// its reason appended to `passed_over`.
std::optional<std::filesystem::path> latest_intact_checkpoint(const std::filesystem::path& directory,
                                                              std::vector<std::string>* passed_over = nullptr,
                                                              std::optional<std::int64_t> below = std::nullopt);

// `chk` itself if intact, else the newest intact chk-<n> older than it in the same
// directory (for a checkpoint clink chose, e.g. HA's latest); nullopt if there is none.
std::optional<std::filesystem::path> intact_checkpoint_or_older(const std::filesystem::path& chk,
                                                                std::vector<std::string>* passed_over = nullptr);

}  // namespace clink
