#pragma once
// The Kafka wire protocol, as much as KafkaTransactionAdmin needs: big-endian primitives,
// classic and "flexible" (KIP-482: compact strings/arrays, tagged fields) encodings, and
// one blocking broker connection that frames requests with timeouts. Private to
// src/connectors/kafka; field layouts follow Kafka's clients/.../common/message/*.json.
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "clink/core/error.hpp"

namespace clink::kafka::wire {

using Clock = std::chrono::steady_clock;

// Api keys (org.apache.kafka.common.protocol.ApiKeys).
inline constexpr std::int16_t kFindCoordinator = 10;
inline constexpr std::int16_t kApiVersions = 18;
inline constexpr std::int16_t kInitProducerId = 22;
inline constexpr std::int16_t kEndTxn = 26;
inline constexpr std::int16_t kDescribeTransactions = 65;
inline constexpr std::int16_t kListTransactions = 66;

// Error codes (org.apache.kafka.common.protocol.Errors) the admin reacts to.
inline constexpr std::int16_t kNone = 0;
inline constexpr std::int16_t kRequestTimedOut = 7;
inline constexpr std::int16_t kCoordinatorLoadInProgress = 14;
inline constexpr std::int16_t kCoordinatorNotAvailable = 15;
inline constexpr std::int16_t kNotCoordinator = 16;
inline constexpr std::int16_t kConcurrentTransactions = 51;
inline constexpr std::int16_t kTransactionalIdNotFound = 105;

// "PRODUCER_FENCED (90)" for messages; the names of the codes transactions can meet.
std::string error_name(std::int16_t code);

// A failure worth retrying within the caller's deadline: a dropped or refused connection,
// a coordinator that is moving or loading. Everything else is a ClinkError.
class RetriableError : public ClinkError {
 public:
  RetriableError(const std::string& what, bool coordinator_moved) : ClinkError(what), coordinator_moved(coordinator_moved) {}
  bool coordinator_moved;  // forget the cached coordinator before retrying
};

class Writer {
 public:
  void i8(std::int8_t v) { bytes_.push_back(static_cast<std::uint8_t>(v)); }
  void boolean(bool v) { i8(v ? 1 : 0); }
  void i16(std::int16_t v) { be(static_cast<std::uint16_t>(v), 2); }
  void i32(std::int32_t v) { be(static_cast<std::uint32_t>(v), 4); }
  void i64(std::int64_t v) { be(static_cast<std::uint64_t>(v), 8); }
  void uvarint(std::uint32_t v);
  // Classic (non-flexible) string: int16 length; null is length -1.
  void string(std::string_view s);
  void nullable_string(const std::string* s);
  // Flexible versions: unsigned-varint length + 1 (0 = null).
  void compact_string(std::string_view s);
  void compact_nullable_string(const std::string* s);
  void compact_array_length(std::size_t n) { uvarint(static_cast<std::uint32_t>(n + 1)); }
  void no_tagged_fields() { uvarint(0); }

  std::vector<std::uint8_t>& bytes() { return bytes_; }

 private:
  void be(std::uint64_t v, int n) {
    for (int i = n - 1; i >= 0; --i) bytes_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  std::vector<std::uint8_t> bytes_;
};

// Reads a response body; throws ClinkError when it runs past the end (a malformed or
// misunderstood response, not worth retrying).
class Reader {
 public:
  Reader(const std::uint8_t* data, std::size_t size) : begin_(data), p_(data), end_(data + size) {}
  explicit Reader(const std::vector<std::uint8_t>& v) : Reader(v.data(), v.size()) {}

  std::int8_t i8() { return static_cast<std::int8_t>(take(1)[0]); }
  bool boolean() { return i8() != 0; }
  std::int16_t i16() { return static_cast<std::int16_t>(be(2)); }
  std::int32_t i32() { return static_cast<std::int32_t>(be(4)); }
  std::int64_t i64() { return static_cast<std::int64_t>(be(8)); }
  std::uint32_t uvarint();
  std::string string();                 // classic; null reads as ""
  std::string compact_string();         // flexible; null reads as ""
  std::int32_t array_length() { return i32(); }  // classic; -1 = null
  std::int32_t compact_array_length() { return static_cast<std::int32_t>(uvarint()) - 1; }
  void skip_tagged_fields();
  std::size_t position() const { return static_cast<std::size_t>(p_ - begin_); }

 private:
  const std::uint8_t* take(std::size_t n);
  std::uint64_t be(int n) {
    const std::uint8_t* b = take(static_cast<std::size_t>(n));
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i) v = (v << 8) | b[i];
    return v;
  }
  const std::uint8_t* begin_;
  const std::uint8_t* p_;
  const std::uint8_t* end_;
};

// One TCP connection to one broker. Learns the broker's supported versions (ApiVersions)
// when it opens, because Kafka 4 dropped many old versions (KIP-896) and newer ones can
// change semantics (KIP-890), so every request version is chosen against this table.
class Connection {
 public:
  // Connects and exchanges ApiVersions; throws RetriableError when the broker cannot be reached.
  Connection(const std::string& host, int port, Clock::time_point deadline);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // The highest version in [lo, hi] the broker supports; throws ClinkError when none is.
  std::int16_t pick_version(std::int16_t api_key, std::int16_t lo, std::int16_t hi) const;

  // Sends one request (header v1, or v2 when `flexible`) and returns the response body
  // after its header. A socket failure or timeout throws RetriableError and leaves the
  // connection broken() (responses can no longer be matched to requests).
  std::vector<std::uint8_t> request(std::int16_t api_key, std::int16_t version, bool flexible,
                                    const std::vector<std::uint8_t>& body, Clock::time_point deadline);

  bool broken() const { return fd_ < 0; }
  const std::string& address() const { return address_; }

 private:
  void fail(const std::string& what);  // closes, throws RetriableError
  void send_all(const std::vector<std::uint8_t>& data, Clock::time_point deadline);
  void recv_exact(std::uint8_t* out, std::size_t n, Clock::time_point deadline);
  void wait(short events, Clock::time_point deadline, const char* doing);

  int fd_ = -1;
  std::string address_;
  std::int32_t next_correlation_id_ = 1;
  std::map<std::int16_t, std::pair<std::int16_t, std::int16_t>> versions_;  // api key -> [min, max]
};

}  // namespace clink::kafka::wire
