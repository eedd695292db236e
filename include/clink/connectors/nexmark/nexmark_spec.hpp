#pragma once
// The `nexmark` spec factory: a source of nexmark_event records whose params are
// Nexmark's option names (nexmark_options.hpp), with string, integer or boolean values.
#include "clink/runtime/operator_registry.hpp"

namespace clink {

void register_nexmark_connector(OperatorRegistry& registry);

}  // namespace clink
