#pragma once
// Session settings (SET 'k' = 'v'): read by the binder, the planners and the statement
// runner, so they sit below all of them.
#include <map>
#include <string>

namespace clink::sql {

using SessionConfig = std::map<std::string, std::string>;

}  // namespace clink::sql
