#pragma once
// Directories that hold a job's data (checkpoints, savepoints, the state backends' working
// state) are created readable by their user only: a checkpoint is a copy of the job's
// state, often user data. A directory that exists already keeps its mode (the user chose
// it), and what is written inside a private directory is out of other users' reach
// whatever the files' own modes.
#include <filesystem>

namespace clink {

// Creates `dir` and its missing parents, each with mode 0700. Returns whether `dir` itself
// was created; throws ClinkError naming the directory when one cannot be created.
bool create_private_directories(const std::filesystem::path& dir);

}  // namespace clink
