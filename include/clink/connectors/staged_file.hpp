#pragma once
// A file written under a hidden in-progress name in its final directory and renamed
// into place on commit, so a reader sees either nothing or the whole file.
//
// This is the "pending" half of Flink's two-phase commit file sink: the exactly-once
// FileSink writes one StagedFile per transaction, persist()s it when a checkpoint
// pre-commits the transaction, and commit_staged_file()s it when that checkpoint
// completes, possibly in another process run after a restore.
#include <cstdint>
#include <string>
#include <string_view>

namespace clink {

class StagedFile {
 public:
  // Creates the parent directory if needed and opens ".<name>.inprogress" next to
  // `final_path` (truncating a stale one). Throws ClinkError naming the path.
  explicit StagedFile(std::string final_path);
  // Aborts unless committed or persisted: a failed job leaves no partial file behind.
  ~StagedFile();
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;

  // Writes all of `data` (callers batch their writes).
  void append(std::string_view data);
  // Makes the file durable (fsync) and closes it, keeping it under its staging name
  // (the destructor no longer removes it); commit_staged_file() makes it visible later.
  void persist();
  // Makes the file durable and visible under its final name (persist, then rename).
  void commit();
  // Removes the in-progress file (unless committed).
  void abort();

  const std::string& final_path() const { return final_path_; }
  const std::string& staging_path() const { return staging_path_; }
  bool committed() const { return committed_; }
  bool persisted() const { return persisted_; }

 private:
  void close_fd();
  std::string final_path_;
  std::string staging_path_;
  int fd_ = -1;
  bool persisted_ = false;
  bool committed_ = false;
};

// The hidden in-progress name StagedFile uses for `final_path`.
std::string staging_path_for(const std::string& final_path);

// Commits a persisted staging file by path: renames it to `final_path` (and syncs the
// directory). Idempotent: if the staging file is gone but `final_path` exists, it was
// committed already and nothing happens. Throws ClinkError if neither exists (the
// pre-committed data was lost) or the rename fails.
void commit_staged_file(const std::string& staging_path, const std::string& final_path);

// Whether a file sink at `path` with `parallelism` subtasks writes the single file
// `path`: at parallelism 1 when `path` neither ends in '/' nor is an existing directory.
bool file_sink_single_file(const std::string& path, int parallelism);

// Where transaction `part` of subtask `subtask` of a file sink at `path` writes: `path`
// itself in single-file mode; otherwise the part file
// "<path>/part-<subtask>-<part>.<extension>".
std::string file_sink_target(const std::string& path, int subtask, int parallelism, std::string_view extension,
                             std::int64_t part);

}  // namespace clink
