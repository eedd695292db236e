#include "clink/core/private_directory.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "clink/core/error.hpp"

namespace clink {

bool create_private_directories(const std::filesystem::path& dir) {
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec)) return false;
  std::vector<std::filesystem::path> missing;  // innermost first
  for (std::filesystem::path p = dir; !p.empty() && !std::filesystem::exists(p, ec); p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  bool created = false;
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0700) == 0) {
      created = *it == dir;
    } else if (errno != EEXIST) {  // another thread or process may have made it meanwhile
      throw ClinkError("cannot create the directory " + it->string() + ": " + std::strerror(errno));
    }
  }
  if (!std::filesystem::is_directory(dir, ec)) throw ClinkError("cannot create the directory " + dir.string() + ": a file is in the way");
  return created;
}

}  // namespace clink
