#pragma once
// The registry of every built-in operator, connector and key selector: the one place that
// links the runtime's OperatorRegistry to the parts that register into it (the runtime
// itself knows no operator, connector or SQL).
#include "clink/runtime/operator_registry.hpp"

namespace clink {

const OperatorRegistry& builtin_registry();

}  // namespace clink
