#pragma once
// The file name of a catalog object (catalog.cpp): shared by the models' files.
#include <string>

namespace clink::sql {

// `name` with every byte outside [A-Za-z0-9_-] (and a leading '.') as %XX, plus ".json".
std::string catalog_file_name(const std::string& name);

}  // namespace clink::sql
