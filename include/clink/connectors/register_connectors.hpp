#pragma once
namespace clink {
class OperatorRegistry;
// The spec sources and sinks of connectors/ (datagen, files, print, blackhole, collect).
void register_builtin_connectors(OperatorRegistry& registry);
}  // namespace clink
