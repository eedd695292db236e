#include "clink/connectors/kafka/kafka_transaction_admin.hpp"

#include <algorithm>
#include <map>
#include <thread>

#include "clink/core/error.hpp"
#include "kafka_wire.hpp"

namespace clink::kafka {

using wire::Clock;
using wire::RetriableError;

std::string to_string(const KafkaTransactionState& s) {
  return "state " + s.state + ", producer id " + std::to_string(s.producer_id) + ", epoch " +
         std::to_string(s.producer_epoch) + ", " + std::to_string(s.partitions.size()) + " partition(s)";
}

namespace {

// The transaction timeout InitProducerId registers for the id when abort_lingering fences
// it. No transaction is begun under it; it only has to pass the broker's
// transaction.max.timeout.ms (15 minutes by default).
constexpr std::int32_t kFencingTransactionTimeoutMs = 60000;

struct HostPort {
  std::string host;
  int port = 0;
};

std::vector<HostPort> parse_bootstrap(const std::string& servers) {
  std::vector<HostPort> out;
  std::size_t start = 0;
  while (start <= servers.size()) {
    std::size_t comma = servers.find(',', start);
    std::string item = servers.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) {
      std::size_t colon = item.rfind(':');
      if (colon == std::string::npos || colon + 1 == item.size())
        throw ClinkError("Kafka bootstrap server '" + item + "' has no port (expected host:port)");
      std::string host = item.substr(0, colon);
      if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
      int port = 0;
      try {
        port = std::stoi(item.substr(colon + 1));
      } catch (const std::exception&) {
        port = 0;
      }
      if (port <= 0 || port > 65535) throw ClinkError("Kafka bootstrap server '" + item + "' has a bad port");
      out.push_back({host, port});
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (out.empty()) throw ClinkError("Kafka bootstrap servers are empty");
  return out;
}

// Errors that mean "ask again, perhaps another broker": the coordinator for the id is
// loading its state, has moved, or is not elected yet.
bool coordinator_error(std::int16_t e) {
  return e == wire::kCoordinatorLoadInProgress || e == wire::kCoordinatorNotAvailable || e == wire::kNotCoordinator ||
         e == wire::kRequestTimedOut;
}

}  // namespace

struct KafkaTransactionAdmin::Impl {
  std::vector<HostPort> bootstrap;
  std::chrono::milliseconds timeout;
  std::map<std::string, std::unique_ptr<wire::Connection>> connections;  // by "host:port"
  std::map<std::string, HostPort> coordinators;                          // by transactional id

  wire::Connection& connect(const HostPort& hp, Clock::time_point deadline) {
    std::string key = hp.host + ":" + std::to_string(hp.port);
    auto& conn = connections[key];
    if (!conn || conn->broken()) {
      conn.reset();
      conn = std::make_unique<wire::Connection>(hp.host, hp.port, deadline);
    }
    return *conn;
  }

  // Any reachable bootstrap server (FindCoordinator may go to any broker).
  wire::Connection& any_broker(Clock::time_point deadline) {
    std::string failures;
    for (const HostPort& hp : bootstrap) {
      try {
        return connect(hp, deadline);
      } catch (const RetriableError& e) {
        failures += std::string(failures.empty() ? "" : "; ") + e.what();
      }
    }
    throw RetriableError("no Kafka bootstrap server reachable: " + failures, true);
  }

  wire::Connection& coordinator(const std::string& id, Clock::time_point deadline) {
    if (auto it = coordinators.find(id); it != coordinators.end()) return connect(it->second, deadline);
    wire::Connection& conn = any_broker(deadline);
    // v4+ (KIP-699) batches keys in an array; v3 is the first flexible version; v1-v2 classic.
    std::int16_t v = conn.pick_version(wire::kFindCoordinator, 1, 6);
    bool flexible = v >= 3;
    wire::Writer w;
    if (v >= 4) {
      w.i8(1);  // key type: transaction
      w.compact_array_length(1);
      w.compact_string(id);
    } else {
      if (flexible) w.compact_string(id);
      else w.string(id);
      w.i8(1);
    }
    if (flexible) w.no_tagged_fields();
    std::vector<std::uint8_t> body = conn.request(wire::kFindCoordinator, v, flexible, w.bytes(), deadline);
    wire::Reader r(body);
    r.i32();  // throttle time
    std::int16_t error = 0;
    HostPort found;
    if (v >= 4) {
      if (r.compact_array_length() != 1) throw ClinkError("Kafka FindCoordinator: expected one coordinator in the response");
      r.compact_string();  // key
      r.i32();             // node id
      found.host = r.compact_string();
      found.port = r.i32();
      error = r.i16();
    } else {
      error = r.i16();
      if (flexible) r.compact_string();
      else r.string();  // error message
      r.i32();         // node id
      found.host = flexible ? r.compact_string() : r.string();
      found.port = r.i32();
    }
    if (coordinator_error(error))
      throw RetriableError("finding the transaction coordinator: " + wire::error_name(error), true);
    if (error != wire::kNone)
      throw ClinkError("Kafka FindCoordinator for transactional id " + id + ": " + wire::error_name(error));
    coordinators[id] = found;
    return connect(found, deadline);
  }

  // Runs attempt(deadline) until it returns or throws something other than RetriableError,
  // backing off between attempts; gives up with ClinkError when the call's timeout is spent.
  template <class F>
  auto retrying(const std::string& what, const std::string& id, F&& attempt) -> decltype(attempt(Clock::now())) {
    const Clock::time_point deadline = Clock::now() + timeout;
    std::chrono::milliseconds backoff(20);
    for (;;) {
      try {
        return attempt(deadline);
      } catch (const RetriableError& e) {
        if (e.coordinator_moved) coordinators.erase(id);
        if (Clock::now() + backoff >= deadline)
          throw ClinkError(what + ": gave up after " + std::to_string(timeout.count()) + " ms: " + e.what());
      }
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(500));
    }
  }

  std::optional<KafkaTransactionState> describe_once(const std::string& id, Clock::time_point deadline) {
    wire::Connection& conn = coordinator(id, deadline);
    std::int16_t v = conn.pick_version(wire::kDescribeTransactions, 0, 0);  // flexible from v0
    wire::Writer w;
    w.compact_array_length(1);
    w.compact_string(id);
    w.no_tagged_fields();
    std::vector<std::uint8_t> body = conn.request(wire::kDescribeTransactions, v, true, w.bytes(), deadline);
    wire::Reader r(body);
    r.i32();  // throttle time
    if (r.compact_array_length() != 1) throw ClinkError("Kafka DescribeTransactions: expected one state in the response");
    std::int16_t error = r.i16();
    r.compact_string();  // transactional id
    KafkaTransactionState s;
    s.state = r.compact_string();
    r.i32();  // transaction timeout
    r.i64();  // transaction start time
    s.producer_id = r.i64();
    s.producer_epoch = r.i16();
    for (std::int32_t topics = r.compact_array_length(); topics > 0; --topics) {
      std::string topic = r.compact_string();
      for (std::int32_t n = r.compact_array_length(); n > 0; --n) s.partitions.emplace_back(topic, r.i32());
      r.skip_tagged_fields();
    }
    r.skip_tagged_fields();
    if (error == wire::kTransactionalIdNotFound) return std::nullopt;
    if (coordinator_error(error))
      throw RetriableError("DescribeTransactions: " + wire::error_name(error), true);
    if (error != wire::kNone)
      throw ClinkError("Kafka DescribeTransactions for transactional id " + id + ": " + wire::error_name(error));
    std::sort(s.partitions.begin(), s.partitions.end());
    return s;
  }

  std::int16_t end_txn(const std::string& id, std::int64_t producer_id, std::int16_t epoch, bool commit,
                       Clock::time_point deadline) {
    wire::Connection& conn = coordinator(id, deadline);
    // At most v4: v5 is KIP-890's transaction protocol v2 (epoch bumped at every end), which
    // the coordinator must not apply to a librdkafka 2.0.2 (protocol v1) transaction.
    std::int16_t v = conn.pick_version(wire::kEndTxn, 0, 4);
    bool flexible = v >= 3;
    wire::Writer w;
    if (flexible) w.compact_string(id);
    else w.string(id);
    w.i64(producer_id);
    w.i16(epoch);
    w.boolean(commit);
    if (flexible) w.no_tagged_fields();
    std::vector<std::uint8_t> body = conn.request(wire::kEndTxn, v, flexible, w.bytes(), deadline);
    wire::Reader r(body);
    r.i32();  // throttle time
    return r.i16();
  }

  // InitProducerId for the id as a new producer (producer id/epoch -1): fences whoever had
  // the id and aborts its open transaction.
  std::int16_t init_producer_id(const std::string& id, Clock::time_point deadline) {
    wire::Connection& conn = coordinator(id, deadline);
    // v6 (KIP-939, two-phase commit: keep the prepared transaction) is not stable in Kafka 4.4.
    std::int16_t v = conn.pick_version(wire::kInitProducerId, 0, 5);
    bool flexible = v >= 2;
    wire::Writer w;
    if (flexible) w.compact_nullable_string(&id);
    else w.nullable_string(&id);
    w.i32(kFencingTransactionTimeoutMs);
    if (v >= 3) {
      w.i64(-1);  // producer id: none, i.e. a new producer instance
      w.i16(-1);
    }
    if (flexible) w.no_tagged_fields();
    std::vector<std::uint8_t> body = conn.request(wire::kInitProducerId, v, flexible, w.bytes(), deadline);
    wire::Reader r(body);
    r.i32();  // throttle time
    return r.i16();
  }
};

KafkaTransactionAdmin::KafkaTransactionAdmin(std::string bootstrap_servers, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>()) {
  impl_->bootstrap = parse_bootstrap(bootstrap_servers);
  impl_->timeout = timeout;
}

KafkaTransactionAdmin::~KafkaTransactionAdmin() = default;
KafkaTransactionAdmin::KafkaTransactionAdmin(KafkaTransactionAdmin&&) noexcept = default;
KafkaTransactionAdmin& KafkaTransactionAdmin::operator=(KafkaTransactionAdmin&&) noexcept = default;

std::optional<KafkaTransactionState> KafkaTransactionAdmin::describe(const std::string& transactional_id) {
  return impl_->retrying("describe Kafka transactional id " + transactional_id, transactional_id,
                         [&](Clock::time_point deadline) { return impl_->describe_once(transactional_id, deadline); });
}

KafkaCommitResult KafkaTransactionAdmin::commit(const std::string& transactional_id, std::int64_t producer_id,
                                                std::int16_t producer_epoch) {
  const std::string what = "commit Kafka transaction " + transactional_id + " (producer id " +
                           std::to_string(producer_id) + ", epoch " + std::to_string(producer_epoch) + ")";
  auto same_producer = [&](const KafkaTransactionState& s) {
    return s.producer_id == producer_id && s.producer_epoch == producer_epoch;
  };
  bool ended = false;  // our EndTxn was accepted; only the markers remain
  return impl_->retrying(what, transactional_id, [&](Clock::time_point deadline) {
    if (!ended) {
      std::optional<KafkaTransactionState> s = impl_->describe_once(transactional_id, deadline);
      if (!s)
        throw ClinkError(what + " failed: " + wire::error_name(wire::kTransactionalIdNotFound) +
                         ": the coordinator does not know the id (expired?); the transaction's records are lost");
      // A committed protocol-v1 transaction keeps its producer id/epoch until the id is
      // used again, so this recognizes a commit that a crash interrupted after the fact.
      if (s->state == "CompleteCommit" && same_producer(*s)) return KafkaCommitResult::kAlreadyCommitted;
      std::int16_t error = impl_->end_txn(transactional_id, producer_id, producer_epoch, true, deadline);
      // CONCURRENT_TRANSACTIONS: the coordinator is still writing the markers of a previous
      // end (perhaps this very commit, sent before a crash); asking again settles it.
      if (error == wire::kConcurrentTransactions)
        throw RetriableError("EndTxn: " + wire::error_name(error) + " (" + to_string(*s) + ")", false);
      if (coordinator_error(error)) throw RetriableError("EndTxn: " + wire::error_name(error), true);
      if (error != wire::kNone)
        throw ClinkError(what + " failed: " + wire::error_name(error) + "; the coordinator has " + to_string(*s) +
                         (s->state.find("Abort") != std::string::npos ? " (the transaction was aborted)" : ""));
      ended = true;
    }
    // EndTxn answers once PrepareCommit is logged; the markers that make the records
    // visible follow. Wait for them so a caller may rely on the records being readable.
    std::optional<KafkaTransactionState> s = impl_->describe_once(transactional_id, deadline);
    if (s && s->state == "PrepareCommit" && same_producer(*s))
      throw RetriableError("waiting for the commit markers", false);
    return KafkaCommitResult::kCommitted;
  });
}

bool KafkaTransactionAdmin::abort_lingering(const std::string& transactional_id) {
  bool fenced = false;
  return impl_->retrying("abort the lingering Kafka transaction of " + transactional_id, transactional_id,
                         [&](Clock::time_point deadline) {
    if (!fenced) {
      // Only an id the coordinator knows: InitProducerId would create an unknown one.
      if (!impl_->describe_once(transactional_id, deadline)) return false;
      std::int16_t error = impl_->init_producer_id(transactional_id, deadline);
      // CONCURRENT_TRANSACTIONS: the coordinator has begun aborting the open transaction
      // (epoch fence); InitProducerId succeeds once the abort markers are written.
      if (error == wire::kConcurrentTransactions)
        throw RetriableError("InitProducerId: " + wire::error_name(error), false);
      if (coordinator_error(error)) throw RetriableError("InitProducerId: " + wire::error_name(error), true);
      if (error != wire::kNone)
        throw ClinkError("abort the lingering Kafka transaction of " + transactional_id +
                         ": InitProducerId failed: " + wire::error_name(error));
      fenced = true;
    }
    std::optional<KafkaTransactionState> s = impl_->describe_once(transactional_id, deadline);
    if (s && s->open()) throw RetriableError("waiting for the abort to complete (" + to_string(*s) + ")", false);
    return true;
  });
}

std::vector<std::string> KafkaTransactionAdmin::list_open(const std::string& prefix,
                                                        const std::vector<std::string>& brokers) {
  std::vector<HostPort> targets = impl_->bootstrap;
  if (!brokers.empty()) {
    std::string joined;
    for (const auto& b : brokers) joined += (joined.empty() ? "" : ",") + b;
    targets = parse_bootstrap(joined);
  }
  std::vector<std::string> out;
  for (const HostPort& hp : targets) {
    auto ids = impl_->retrying("list the open Kafka transactions on " + hp.host + ":" + std::to_string(hp.port), "",
                               [&](Clock::time_point deadline) {
      wire::Connection& conn = impl_->connect(hp, deadline);
      std::int16_t v = conn.pick_version(wire::kListTransactions, 0, 0);  // flexible from v0
      wire::Writer w;
      w.compact_array_length(1);  // state filters
      w.compact_string("Ongoing");
      w.compact_array_length(0);  // producer id filters
      w.no_tagged_fields();
      std::vector<std::uint8_t> body = conn.request(wire::kListTransactions, v, true, w.bytes(), deadline);
      wire::Reader r(body);
      r.i32();  // throttle time
      std::int16_t error = r.i16();
      for (std::int32_t n = r.compact_array_length(); n > 0; --n) r.compact_string();  // unknown state filters
      std::vector<std::string> found;
      for (std::int32_t n = r.compact_array_length(); n > 0; --n) {
        std::string id = r.compact_string();
        r.i64();              // producer id
        r.compact_string();   // state
        r.skip_tagged_fields();
        if (id.starts_with(prefix)) found.push_back(std::move(id));
      }
      r.skip_tagged_fields();
      if (coordinator_error(error)) throw RetriableError("ListTransactions: " + wire::error_name(error), false);
      if (error != wire::kNone) throw ClinkError("Kafka ListTransactions: " + wire::error_name(error));
      return found;
    });
    out.insert(out.end(), ids.begin(), ids.end());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace clink::kafka
