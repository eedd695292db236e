#pragma once
// What the control plane's server and client share (private to src/cluster/control).
#include <google/protobuf/descriptor.h>

#include <chrono>
#include <cstdint>

namespace clink::cluster {

// gRPC refuses messages over 4 MiB by default; a Deploy carries a whole JobGraphSpec and
// a CheckpointAck a subtask's snapshot description, so allow far more.
inline constexpr int kMaxControlMessageBytes = 256 << 20;

inline int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The name of the oneof field a message holds ("register", "heartbeat", ...), for errors.
template <class Message>
const char* kind_name(const Message& message) {
  const auto* field = Message::descriptor()->FindFieldByNumber(static_cast<int>(message.kind_case()));
  return field ? field->name().c_str() : "an empty message";
}

}  // namespace clink::cluster
