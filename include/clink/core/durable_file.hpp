#pragma once
// Writing a small file so that a crash or power loss leaves either the old content or the
// new one, never a file that claims more than was written: the content goes to
// "<target>.tmp", is fsynced, renamed over the target, and the directory is fsynced so
// the rename itself is durable. For checkpoint `_metadata` (whose presence says a
// checkpoint is complete) and catalog files.
#include <filesystem>
#include <string_view>

namespace clink {

// Throws ClinkError naming the file when a step fails.
void write_file_durably(const std::filesystem::path& target, std::string_view content);

}  // namespace clink
