#include "kafka_wire.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace clink::kafka::wire {

std::string error_name(std::int16_t code) {
  const char* name = nullptr;
  switch (code) {
    case -1: name = "UNKNOWN_SERVER_ERROR"; break;
    case 0: name = "NONE"; break;
    case 7: name = "REQUEST_TIMED_OUT"; break;
    case 14: name = "COORDINATOR_LOAD_IN_PROGRESS"; break;
    case 15: name = "COORDINATOR_NOT_AVAILABLE"; break;
    case 16: name = "NOT_COORDINATOR"; break;
    case 35: name = "UNSUPPORTED_VERSION"; break;
    case 42: name = "INVALID_REQUEST"; break;
    case 47: name = "INVALID_PRODUCER_EPOCH"; break;
    case 48: name = "INVALID_TXN_STATE"; break;
    case 49: name = "INVALID_PRODUCER_ID_MAPPING"; break;
    case 50: name = "INVALID_TRANSACTION_TIMEOUT"; break;
    case 51: name = "CONCURRENT_TRANSACTIONS"; break;
    case 52: name = "TRANSACTION_COORDINATOR_FENCED"; break;
    case 53: name = "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"; break;
    case 59: name = "UNKNOWN_PRODUCER_ID"; break;
    case 90: name = "PRODUCER_FENCED"; break;
    case 105: name = "TRANSACTIONAL_ID_NOT_FOUND"; break;
    case 120: name = "TRANSACTION_ABORTABLE"; break;
    default: break;
  }
  return (name ? std::string(name) : std::string("Kafka error")) + " (" + std::to_string(code) + ")";
}

// ---- Writer / Reader ----

void Writer::uvarint(std::uint32_t v) {
  while (v >= 0x80) {
    bytes_.push_back(static_cast<std::uint8_t>(v | 0x80));
    v >>= 7;
  }
  bytes_.push_back(static_cast<std::uint8_t>(v));
}

void Writer::string(std::string_view s) {
  i16(static_cast<std::int16_t>(s.size()));
  bytes_.insert(bytes_.end(), s.begin(), s.end());
}

void Writer::nullable_string(const std::string* s) {
  if (s) string(*s);
  else i16(-1);
}

void Writer::compact_string(std::string_view s) {
  uvarint(static_cast<std::uint32_t>(s.size() + 1));
  bytes_.insert(bytes_.end(), s.begin(), s.end());
}

void Writer::compact_nullable_string(const std::string* s) {
  if (s) compact_string(*s);
  else uvarint(0);
}

const std::uint8_t* Reader::take(std::size_t n) {
  if (static_cast<std::size_t>(end_ - p_) < n) throw ClinkError("Kafka: truncated or malformed response");
  const std::uint8_t* at = p_;
  p_ += n;
  return at;
}

std::uint32_t Reader::uvarint() {
  std::uint32_t v = 0;
  for (int shift = 0; shift <= 28; shift += 7) {
    std::uint8_t b = take(1)[0];
    v |= static_cast<std::uint32_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  throw ClinkError("Kafka: malformed varint in response");
}

std::string Reader::string() {
  std::int16_t n = i16();
  if (n < 0) return {};
  const std::uint8_t* b = take(static_cast<std::size_t>(n));
  return std::string(reinterpret_cast<const char*>(b), static_cast<std::size_t>(n));
}

std::string Reader::compact_string() {
  std::uint32_t n = uvarint();
  if (n == 0) return {};
  const std::uint8_t* b = take(n - 1);
  return std::string(reinterpret_cast<const char*>(b), n - 1);
}

void Reader::skip_tagged_fields() {
  for (std::uint32_t n = uvarint(); n > 0; --n) {
    uvarint();         // tag
    take(uvarint());   // size, data
  }
}

// ---- Connection ----

namespace {

int remaining_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

}  // namespace

Connection::Connection(const std::string& host, int port, Clock::time_point deadline)
    : address_(host + ":" + std::to_string(port)) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res); rc != 0)
    throw RetriableError("Kafka broker " + address_ + ": cannot resolve: " + gai_strerror(rc), true);
  std::string last = "no address";
  for (addrinfo* ai = res; ai && fd_ < 0; ai = ai->ai_next) {
    fd_ = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd_ < 0) { last = std::strerror(errno); continue; }
    int err = 0;
    if (::connect(fd_, ai->ai_addr, ai->ai_addrlen) != 0) {
      err = errno;
      if (err == EINPROGRESS) {
        pollfd p{fd_, POLLOUT, 0};
        int rc = ::poll(&p, 1, remaining_ms(deadline));
        socklen_t len = sizeof err;
        if (rc <= 0) err = rc == 0 ? ETIMEDOUT : errno;
        else if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      }
    }
    if (err != 0) {
      last = std::strerror(err);
      ::close(fd_);
      fd_ = -1;
    }
  }
  ::freeaddrinfo(res);
  if (fd_ < 0) throw RetriableError("Kafka broker " + address_ + ": cannot connect: " + last, true);
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);

  // ApiVersions v3: the first flexible version (every Kafka since 2.4 has it). Its response
  // header is always v0 (no tagged fields) so that a client can parse it before it knows
  // what the broker speaks.
  Writer w;
  w.compact_string("clink");
  w.compact_string(CLINK_VERSION);
  w.no_tagged_fields();
  std::vector<std::uint8_t> body = request(kApiVersions, 3, true, w.bytes(), deadline);
  Reader r(body);
  std::int16_t error = r.i16();
  if (error != kNone) {
    ::close(fd_);
    fd_ = -1;
    throw ClinkError("Kafka broker " + address_ + ": ApiVersions failed: " + error_name(error));
  }
  for (std::int32_t n = r.compact_array_length(); n > 0; --n) {
    std::int16_t key = r.i16(), lo = r.i16(), hi = r.i16();
    r.skip_tagged_fields();
    versions_[key] = {lo, hi};
  }
}

Connection::~Connection() {
  if (fd_ >= 0) ::close(fd_);
}

std::int16_t Connection::pick_version(std::int16_t api_key, std::int16_t lo, std::int16_t hi) const {
  auto it = versions_.find(api_key);
  if (it != versions_.end()) {
    std::int16_t v = std::min(hi, it->second.second);
    if (v >= std::max(lo, it->second.first)) return v;
  }
  std::string supported = it == versions_.end() ? std::string("none")
                                                 : std::to_string(it->second.first) + "-" + std::to_string(it->second.second);
  throw ClinkError("Kafka broker " + address_ + " supports versions " + supported + " of api key " +
                   std::to_string(api_key) + ", clink speaks " + std::to_string(lo) + "-" + std::to_string(hi));
}

void Connection::fail(const std::string& what) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  throw RetriableError("Kafka broker " + address_ + ": " + what, true);
}

void Connection::wait(short events, Clock::time_point deadline, const char* doing) {
  pollfd p{fd_, events, 0};
  int rc = ::poll(&p, 1, remaining_ms(deadline));
  if (rc == 0) fail(std::string("timed out ") + doing);
  if (rc < 0 && errno != EINTR) fail(std::string(doing) + ": " + std::strerror(errno));
}

void Connection::send_all(const std::vector<std::uint8_t>& data, Clock::time_point deadline) {
  std::size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::send(fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n > 0) off += static_cast<std::size_t>(n);
    else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) wait(POLLOUT, deadline, "sending");
    else fail(std::string("send: ") + std::strerror(errno));
  }
}

void Connection::recv_exact(std::uint8_t* out, std::size_t size, Clock::time_point deadline) {
  std::size_t off = 0;
  while (off < size) {
    ssize_t n = ::recv(fd_, out + off, size - off, 0);
    if (n > 0) off += static_cast<std::size_t>(n);
    else if (n == 0) fail("connection closed by the broker");
    else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) wait(POLLIN, deadline, "waiting for a response");
    else fail(std::string("recv: ") + std::strerror(errno));
  }
}

std::vector<std::uint8_t> Connection::request(std::int16_t api_key, std::int16_t version, bool flexible,
                                              const std::vector<std::uint8_t>& body, Clock::time_point deadline) {
  if (fd_ < 0) throw RetriableError("Kafka broker " + address_ + ": connection lost", true);
  std::int32_t correlation_id = next_correlation_id_++;
  Writer w;
  w.i32(0);  // size, patched below
  w.i16(api_key);
  w.i16(version);
  w.i32(correlation_id);
  w.string("clink");  // client id: a classic string even in header v2
  if (flexible) w.no_tagged_fields();
  w.bytes().insert(w.bytes().end(), body.begin(), body.end());
  std::uint32_t size = static_cast<std::uint32_t>(w.bytes().size() - 4);
  for (int i = 0; i < 4; ++i) w.bytes()[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(size >> (8 * (3 - i)));
  send_all(w.bytes(), deadline);

  std::uint8_t head[4];
  recv_exact(head, 4, deadline);
  std::uint32_t n = (std::uint32_t{head[0]} << 24) | (std::uint32_t{head[1]} << 16) | (std::uint32_t{head[2]} << 8) | head[3];
  if (n < 4 || n > (64u << 20)) fail("implausible response size " + std::to_string(n));
  std::vector<std::uint8_t> response(n);
  recv_exact(response.data(), n, deadline);
  Reader r(response);
  if (r.i32() != correlation_id) fail("response to another request (correlation id mismatch)");
  // Response header v1 (flexible requests, except ApiVersions) adds tagged fields.
  if (flexible && api_key != kApiVersions) r.skip_tagged_fields();
  return std::vector<std::uint8_t>(response.begin() + static_cast<std::ptrdiff_t>(r.position()), response.end());
}

}  // namespace clink::kafka::wire
