#include "clink/sql/function_registry.hpp"
namespace clink::sql {
void register_json_functions(FunctionRegistry&) {}
}  // namespace clink::sql
