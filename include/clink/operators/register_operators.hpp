#pragma once
namespace clink {
class OperatorRegistry;
// The spec operators of operators/ (tokenize, count, watermark_assigner, ...) and their key selectors.
void register_builtin_operators(OperatorRegistry& registry);
}  // namespace clink
