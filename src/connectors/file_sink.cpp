#include "clink/connectors/file_sink.hpp"

#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <vector>

#include "clink/core/error.hpp"
#include "clink/runtime/runtime_context.hpp"
#include "clink/state/state_codec.hpp"

namespace clink {

namespace fs = std::filesystem;

namespace {

// Operator state (union): the staging files each subtask had pre-committed but not
// yet committed at the checkpoint. After a restore every subtask knows them all, so it
// can delete the staging files of a failed run without touching one that the
// restored checkpoint still commits (perhaps through another subtask).
constexpr const char* kPreCommittedState = "file-sink-pre-committed";

// The subtask index of a staging file name ".part-<subtask>-<n>.<extension>.inprogress",
// or -1 for any other name.
int staging_file_subtask(std::string_view name, std::string_view extension) {
  constexpr std::string_view prefix = ".part-", suffix = ".inprogress";
  if (name.size() <= prefix.size() + suffix.size() + extension.size() + 1) return -1;
  if (!name.starts_with(prefix) || !name.ends_with(suffix)) return -1;
  name.remove_prefix(prefix.size());
  name.remove_suffix(suffix.size());
  if (!name.ends_with(extension) || name[name.size() - extension.size() - 1] != '.') return -1;
  name.remove_suffix(extension.size() + 1);  // "<subtask>-<n>"
  auto dash = name.find('-');
  if (dash == std::string_view::npos || dash == 0 || dash + 1 == name.size()) return -1;
  for (std::size_t i = 0; i < name.size(); ++i)
    if (i != dash && (name[i] < '0' || name[i] > '9')) return -1;
  int subtask = -1;
  auto [end, ec] = std::from_chars(name.data(), name.data() + dash, subtask);
  if (ec != std::errc() || end != name.data() + dash) return -1;
  return subtask;
}

}  // namespace

FilePartWriter::FilePartWriter(std::string path, int subtask, int parallelism, std::string extension)
    : path_(std::move(path)),
      subtask_(subtask),
      parallelism_(parallelism),
      extension_(std::move(extension)),
      single_file_(file_sink_single_file(path_, parallelism)) {}

std::int64_t FilePartWriter::part_number(std::int64_t transaction_id, int subtask) {
  // TwoPhaseCommitSinkOperator numbers subtask s's transaction after checkpoint n
  // (s << 40) + n + 1, so part n is the data between checkpoints n and n + 1, unique
  // per subtask across restores. (Older clinks continued above every id a checkpoint
  // recorded, perhaps in another subtask's range; ids below the first one, from a
  // numbering shared by all subtasks, count from 1.)
  const std::int64_t first = (static_cast<std::int64_t>(subtask) << 40) + 1;
  return transaction_id >= first ? transaction_id - first : transaction_id - 1;
}

void FilePartWriter::open(RuntimeContext& ctx) {
  state_ = &ctx.operator_state();
  if (single_file_) return;
  std::error_code ec;
  fs::create_directories(path_, ec);
  if (ec) throw ClinkError("file sink: cannot create directory " + path_ + ": " + ec.message());
  auto& restored = state_->list(kPreCommittedState, Redistribution::kUnion);
  std::set<std::string> keep(restored.begin(), restored.end());
  restored.clear();  // rewritten by every pre-commit
  remove_stale_staging_files(keep);
}

void FilePartWriter::remove_stale_staging_files(const std::set<std::string>& keep) const {
  // Staging names of subtask s are created by subtask s only; subtask 0 also takes
  // those of subtasks beyond the parallelism, which no subtask of this run creates. So
  // no staging file of this run's transactions is removed.
  std::vector<fs::path> stale;
  std::error_code ec;
  for (fs::directory_iterator it(path_, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    int owner = staging_file_subtask(name, extension_);
    if (owner < 0 || keep.count(name)) continue;
    if (owner == subtask_ || (subtask_ == 0 && owner >= parallelism_)) stale.push_back(it->path());
  }
  for (const auto& p : stale) {
    std::error_code rm;
    fs::remove(p, rm);  // best effort
  }
}

void FilePartWriter::begin_transaction(std::int64_t transaction_id) {
  if (single_file_ && began_) {
    // A checkpoint pre-committed the single file and started another transaction.
    if (!pre_committed_.empty()) ::unlink(staging_path_for(path_).c_str());
    pre_committed_.clear();
    throw ClinkError("file sink '" + path_ +
                     "' writes a single file; with checkpointing give a directory (a path ending in '/')");
  }
  abort();  // a transaction that was neither pre-committed nor aborted leaves nothing
  began_ = true;
  part_ = part_number(transaction_id, subtask_);
}

void FilePartWriter::ensure_file() {
  if (!file_) file_.emplace(file_sink_target(path_, subtask_, parallelism_, extension_, part_));
}

void FilePartWriter::append(std::string_view lines) {
  if (lines.empty()) return;
  ensure_file();
  buf_.append(lines);
  if (buf_.size() >= kFlushBytes) flush();
}

void FilePartWriter::flush() {
  if (buf_.empty()) return;
  file_->append(buf_);
  buf_.clear();
}

std::string FilePartWriter::pre_commit() {
  if (single_file_) ensure_file();  // the single file exists even when empty
  std::string committable;          // stays empty without records: nothing to commit
  if (file_) {
    flush();
    file_->persist();
    StateCodec<std::string>::encode(file_->staging_path(), committable);
    StateCodec<std::string>::encode(file_->final_path(), committable);
    pre_committed_.insert(fs::path(file_->staging_path()).filename().string());
    file_.reset();
  }
  if (!single_file_ && state_)
    state_->list(kPreCommittedState, Redistribution::kUnion).assign(pre_committed_.begin(), pre_committed_.end());
  return committable;
}

void FilePartWriter::commit(const std::string& committable) {
  if (committable.empty()) return;  // a transaction without records
  std::string_view in(committable);
  std::string staging = StateCodec<std::string>::decode(in);
  std::string final_path = StateCodec<std::string>::decode(in);
  commit_staged_file(staging, final_path);
  pre_committed_.erase(fs::path(staging).filename().string());
}

void FilePartWriter::abort() {
  buf_.clear();
  if (file_) file_->abort();
  file_.reset();
}

}  // namespace clink
