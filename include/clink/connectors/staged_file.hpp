#pragma once
// A file written under a hidden in-progress name in its final directory and renamed
// into place on commit, so a reader sees either nothing or the whole file.
//
// This is the "pending" half of Flink's two-phase commit file sink. When sinks commit
// on checkpoint completion, a writer will roll a StagedFile per checkpoint and
// commit() it when that checkpoint completes; abort() is what recovery does to files
// of checkpoints that never completed.
#include <string>
#include <string_view>

namespace clink {

class StagedFile {
 public:
  // Creates the parent directory if needed and opens ".<name>.inprogress" next to
  // `final_path` (truncating a stale one). Throws ClinkError naming the path.
  explicit StagedFile(std::string final_path);
  // Aborts unless committed: a failed job leaves no partial file behind.
  ~StagedFile();
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;

  // Writes all of `data` (callers batch their writes).
  void append(std::string_view data);
  // Makes the file durable (fsync) and visible under its final name (rename).
  void commit();
  // Removes the in-progress file.
  void abort();

  const std::string& final_path() const { return final_path_; }
  const std::string& staging_path() const { return staging_path_; }
  bool committed() const { return committed_; }

 private:
  void close_fd();
  std::string final_path_;
  std::string staging_path_;
  int fd_ = -1;
  bool committed_ = false;
};

// Where subtask `subtask` of a file sink at `path` writes: `path` itself at
// parallelism 1 when it neither ends in '/' nor is an existing directory; otherwise
// the part file "<path>/part-<subtask>-0.<extension>".
std::string file_sink_target(const std::string& path, int subtask, int parallelism, std::string_view extension);

}  // namespace clink
