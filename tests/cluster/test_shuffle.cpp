// The network shuffle on real sockets over loopback: a ShuffleServer with registered
// InputGates on one side, connect_channel writers on the other.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "clink/api/spec_types.hpp"
#include "clink/cluster/shuffle/batch_codec.hpp"
#include "clink/cluster/shuffle/remote_channel_writer.hpp"
#include "clink/cluster/shuffle/shuffle_server.hpp"
#include "clink/core/error.hpp"
#include "clink/runtime/input_gate.hpp"
#include "clink/sql/common/column_batch.hpp"
#include "../../src/cluster/shuffle/wire.hpp"

namespace clink::test {
namespace {

using cluster::ChannelConnectOptions;
using cluster::ChannelFailure;
using cluster::ShuffleServer;
using cluster::ShuffleServerOptions;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

const std::string kJob = "0123456789abcdef0123456789abcdef";

template <class T>
BatchPtr batch_of(std::vector<Record<T>> records) {
  return std::make_unique<Batch<T>>(std::move(records));
}

BatchPtr int_batch(std::int64_t first, std::int64_t n) {
  auto b = std::make_unique<Batch<std::int64_t>>();
  for (std::int64_t i = 0; i < n; ++i) b->push(first + i, 1000 + first + i);
  return b;
}

// Pops one element, failing the test after 10 s.
InputGate::Popped pop(InputGate& gate) {
  auto p = gate.pop(Clock::now() + 10s);
  if (!p) throw std::runtime_error("no element within 10 s");
  return std::move(*p);
}

template <class T>
const std::vector<Record<T>>& records_of(const StreamElement& e) {
  return batch_cast<T>(*std::get<BatchPtr>(e)).records;
}

// Records failures reported by the server (instead of stderr).
struct Failures {
  std::mutex mu;
  std::vector<ChannelFailure> seen;
  ShuffleServerOptions options(std::chrono::milliseconds gate_wait = 30000ms) {
    ShuffleServerOptions o;
    o.gate_wait = gate_wait;
    o.on_channel_failure = [this](const ChannelFailure& f) {
      std::lock_guard lock(mu);
      seen.push_back(f);
    };
    return o;
  }
  std::vector<ChannelFailure> get() {
    std::lock_guard lock(mu);
    return seen;
  }
};

std::unique_ptr<ChannelWriter> connect(const ShuffleServer& server, std::int64_t attempt, std::int32_t task,
                                       std::uint32_t channel, std::function<bool()> cancelled = {},
                                       ChannelConnectOptions options = {}) {
  return cluster::connect_channel("127.0.0.1", server.port(), kJob, attempt, task, channel, std::move(cancelled), options);
}

sql::SchemaPtr bid_schema() {
  using sql::LogicalType;
  return sql::make_schema({{"auction", LogicalType::bigint()},
                           {"bidder", LogicalType::bigint()},
                           {"price", LogicalType::bigint()},
                           {"channel", LogicalType::string()},
                           {"url", LogicalType::string()},
                           {"date_time", LogicalType::timestamp(3)},
                           {"extra", LogicalType::string()}});
}

TEST(ShuffleTest, EveryElementKindRoundTripsInOrder) {
  Failures failures;
  // Declared before the server: it must outlive the server's connection threads.
  InputGate gate({0}, 64);
  ShuffleServer server("127.0.0.1", 0, failures.options());
  ASSERT_GT(server.port(), 0);
  server.register_gate(kJob, 1, 3, &gate);
  auto writer = connect(server, 1, 3, 0);

  using sql::LogicalType;
  auto bids = std::make_unique<sql::ColumnBatch>(bid_schema());
  bids->append_row({1000, 2001, 1234567, "Google", "https://www.nexmark.com/a", 1600000000123, "x"},
                   sql::RowKind::kInsert, 1600000000123);
  bids->append_row({1001, sql::Value::null(), 7, sql::Value::null(), "u", 1600000000456, ""}, sql::RowKind::kUpdateAfter,
                   1600000000456);
  auto other = std::make_unique<sql::ColumnBatch>(
      sql::make_schema({{"k", LogicalType::string()}, {"v", LogicalType::double_type()}, {"ok", LogicalType::boolean()}}));
  other->append_row({"key", 2.5, true}, sql::RowKind::kDelete);
  const auto bid_rows = sql::format_rows(*bids);
  const auto other_rows = sql::format_rows(*other);
  const auto bids_schema = bids->schema();
  auto bids_again = bids->clone();

  writer->push(int_batch(10, 3));
  writer->push(batch_of<std::string>({{"a", 5, 2}, {"", kNoEventTime, kNoPartition}, {std::string(300, 'z')}}));
  writer->push(Watermark::at(1234));
  writer->push(batch_of<Event>({{Event{"k1", -42}, 77}}));
  writer->push(Watermark::idle_marker(99));
  writer->push(batch_of<WordCount>({{WordCount{"the", 6}}}));
  writer->push(CheckpointBarrier{7, 1700000000000, false, false});
  writer->push(batch_of<WindowCount>({{WindowCount{"k", 10000, 357}, 10999}}));
  writer->push(batch_of<DeadLetter>({{DeadLetter{"src", "in.txt", 12, "bad json", "{oops"}}}));
  writer->push(std::move(bids));
  writer->push(CheckpointBarrier{8, 1700000000500, true, true});
  writer->push(std::move(other));
  writer->push(std::move(bids_again));  // the first schema again: sent again, decoded with it
  writer->push(batch_of<std::int64_t>({}));
  writer->push(EndOfInput{});

  auto e = pop(gate).element;
  EXPECT_EQ(records_of<std::int64_t>(e),
            (std::vector<Record<std::int64_t>>{{10, 1010}, {11, 1011}, {12, 1012}}));
  EXPECT_EQ(records_of<std::string>(pop(gate).element),
            (std::vector<Record<std::string>>{{"a", 5, 2}, {"", kNoEventTime, kNoPartition}, {std::string(300, 'z')}}));
  EXPECT_EQ(std::get<Watermark>(pop(gate).element), Watermark::at(1234));
  EXPECT_EQ(records_of<Event>(pop(gate).element), (std::vector<Record<Event>>{{Event{"k1", -42}, 77}}));
  EXPECT_EQ(std::get<Watermark>(pop(gate).element), Watermark::idle_marker(99));
  EXPECT_EQ(records_of<WordCount>(pop(gate).element), (std::vector<Record<WordCount>>{{WordCount{"the", 6}}}));
  EXPECT_EQ(std::get<CheckpointBarrier>(pop(gate).element), (CheckpointBarrier{7, 1700000000000, false, false}));
  EXPECT_EQ(records_of<WindowCount>(pop(gate).element),
            (std::vector<Record<WindowCount>>{{WindowCount{"k", 10000, 357}, 10999}}));
  EXPECT_EQ(records_of<DeadLetter>(pop(gate).element),
            (std::vector<Record<DeadLetter>>{{DeadLetter{"src", "in.txt", 12, "bad json", "{oops"}}}));
  {
    auto b = std::move(std::get<BatchPtr>(pop(gate).element));
    auto& cb = sql::column_batch_cast(*b);
    EXPECT_EQ(*cb.schema(), *bids_schema);
    EXPECT_EQ(sql::format_rows(cb), bid_rows);
    EXPECT_EQ(cb.event_times(), (std::vector<EventTime>{1600000000123, 1600000000456}));
    EXPECT_EQ(cb.row_kinds(), (std::vector<sql::RowKind>{sql::RowKind::kInsert, sql::RowKind::kUpdateAfter}));
  }
  EXPECT_EQ(std::get<CheckpointBarrier>(pop(gate).element), (CheckpointBarrier{8, 1700000000500, true, true}));
  {
    auto b = std::move(std::get<BatchPtr>(pop(gate).element));
    EXPECT_EQ(sql::format_rows(sql::column_batch_cast(*b)), other_rows);
    EXPECT_EQ(other_rows, (std::vector<std::string>{"-D[key, 2.5, true]"}));
  }
  {
    auto b = std::move(std::get<BatchPtr>(pop(gate).element));
    EXPECT_EQ(*sql::column_batch_cast(*b).schema(), *bids_schema);
    EXPECT_EQ(sql::format_rows(sql::column_batch_cast(*b)), bid_rows);
  }
  EXPECT_TRUE(records_of<std::int64_t>(pop(gate).element).empty());
  EXPECT_TRUE(std::holds_alternative<EndOfInput>(pop(gate).element));
  EXPECT_FALSE(gate.pop(Clock::now() + 50ms));
  writer.reset();  // waits for the receiver to close after the end of input
  EXPECT_TRUE(failures.get().empty());
  server.unregister_attempt(kJob, 1);
  EXPECT_EQ(server.open_connections(), 0u);
}

TEST(ShuffleTest, NestedAndParameterisedSqlTypesKeepTheirSchemaAndValues) {
  using sql::LogicalType;
  using sql::Value;
  using sql::ValueList;
  auto schema = sql::make_schema({{"id", LogicalType::bigint().not_null()},
                                  {"amount", LogicalType::decimal(10, 2)},
                                  {"at", LogicalType::timestamp_ltz(3)},
                                  {"tags", LogicalType::array(LogicalType::int_type())},
                                  {"attrs", LogicalType::map(LogicalType::string(), LogicalType::bigint())},
                                  {"who", LogicalType::row({{"name", LogicalType::varchar(20)}, {"age", LogicalType::int_type()}})},
                                  {"raw", LogicalType::bytes()}});
  auto batch = std::make_unique<sql::ColumnBatch>(schema);
  batch->append_row({7, Value::decimal(12345), 1600000000123, ValueList{{1, 2, Value::null()}},
                     ValueList{{"a", 1, "b", Value::null()}}, ValueList{{"ann", 42}}, std::string("\x00\xff", 2)});
  batch->append_row({8, Value::null(), Value::null(), ValueList{}, Value::null(), ValueList{{Value::null(), 1}}, Value::null()});
  const auto rows = sql::format_rows(*batch);
  ASSERT_EQ(rows.size(), 2u);

  InputGate gate({0}, 4);
  ShuffleServer server("127.0.0.1", 0);
  server.register_gate(kJob, 1, 0, &gate);
  auto writer = connect(server, 1, 0, 0);
  writer->push(std::move(batch));
  writer->push(EndOfInput{});
  auto b = std::move(std::get<BatchPtr>(pop(gate).element));
  const auto& cb = sql::column_batch_cast(*b);
  EXPECT_EQ(*cb.schema(), *schema);
  EXPECT_EQ(cb.schema()->to_string(), schema->to_string());
  EXPECT_EQ(sql::format_rows(cb), rows);
  EXPECT_EQ(cb.row_values(0), (std::vector<Value>{7, Value::decimal(12345), 1600000000123, ValueList{{1, 2, Value::null()}},
                                                  ValueList{{"a", 1, "b", Value::null()}}, ValueList{{"ann", 42}},
                                                  std::string("\x00\xff", 2)}));
  EXPECT_TRUE(std::holds_alternative<EndOfInput>(pop(gate).element));
}

TEST(ShuffleTest, SlowConsumerBlocksTheSenderAndTheGateNeverExceedsItsCapacity) {
  Failures failures;
  // Declared before the server: it must outlive the server's connection threads.
  InputGate gate({0}, 2);
  ShuffleServer server("127.0.0.1", 0, failures.options());
  server.register_gate(kJob, 1, 0, &gate);
  constexpr int kBatches = 200;
  std::atomic<std::int64_t> blocked_ns{0};
  std::thread sender([&] {
    auto writer = connect(server, 1, 0, 0);
    for (int i = 0; i < kBatches; ++i) blocked_ns += writer->push(int_batch(i * 10, 10));
    blocked_ns += writer->push(EndOfInput{});
  });
  std::int64_t next = 0;
  for (int i = 0; i < kBatches; ++i) {
    std::this_thread::sleep_for(1ms);  // the slow consumer
    auto p = pop(gate);
    ASSERT_EQ(p.channel, 0u);
    for (const auto& r : records_of<std::int64_t>(p.element)) ASSERT_EQ(r.value, next++);
  }
  EXPECT_TRUE(std::holds_alternative<EndOfInput>(pop(gate).element));
  sender.join();
  EXPECT_EQ(next, kBatches * 10);
  EXPECT_GT(blocked_ns.load(), 0);
  EXPECT_EQ(gate.high_water_mark(), 2u);  // filled to its capacity, never past it
  EXPECT_TRUE(failures.get().empty());
}

// Barrier alignment over the network: the consumer blocks each channel at its barrier
// until every channel has delivered that barrier, at several capacities (credits go back
// in messages of max(1, capacity / 4)). Nothing may deadlock or exceed the capacity.
TEST(ShuffleTest, AlignedBarriersAcrossChannelsNeverDeadlockAtAnyCapacity) {
  for (std::size_t capacity : {1u, 2u, 3u, 8u, 13u}) {
    SCOPED_TRACE("capacity " + std::to_string(capacity));
    constexpr std::uint32_t kChannels = 3;
    constexpr int kRounds = 20, kBatchesPerRound = 15;
    InputGate gate(std::vector<int>(kChannels, 0), capacity);
    Failures failures;
    ShuffleServer server("127.0.0.1", 0, failures.options());
    server.register_gate(kJob, 1, 0, &gate);
    std::vector<std::thread> senders;
    for (std::uint32_t c = 0; c < kChannels; ++c)
      senders.emplace_back([&, c] {
        auto writer = connect(server, 1, 0, c);
        for (int round = 1; round <= kRounds; ++round) {
          // Uneven rounds, so one channel runs ahead of the others.
          for (int i = 0; i < kBatchesPerRound + static_cast<int>(c) * 3; ++i) writer->push(int_batch(i, 2));
          writer->push(CheckpointBarrier{round, 0, false, false});
        }
        writer->push(EndOfInput{});
      });
    std::vector<int> barriers(kChannels, 0);
    std::vector<std::int64_t> records(kChannels, 0);
    std::uint32_t ended = 0;
    while (ended < kChannels) {
      auto p = pop(gate);
      if (auto* b = std::get_if<CheckpointBarrier>(&p.element)) {
        ASSERT_EQ(b->checkpoint_id, barriers[p.channel] + 1);
        barriers[p.channel] = static_cast<int>(b->checkpoint_id);
        gate.set_blocked(p.channel, true);
        if (std::all_of(barriers.begin(), barriers.end(), [&](int x) { return x == b->checkpoint_id; }))
          for (std::uint32_t c = 0; c < kChannels; ++c) gate.set_blocked(c, false);
      } else if (std::holds_alternative<EndOfInput>(p.element)) {
        ++ended;
      } else {
        records[p.channel] += static_cast<std::int64_t>(std::get<BatchPtr>(p.element)->size());
      }
    }
    for (auto& t : senders) t.join();
    for (std::uint32_t c = 0; c < kChannels; ++c) {
      EXPECT_EQ(barriers[c], kRounds);
      EXPECT_EQ(records[c], kRounds * (kBatchesPerRound + static_cast<int>(c) * 3) * 2);
    }
    EXPECT_EQ(gate.high_water_mark(), capacity);
    EXPECT_TRUE(failures.get().empty());
  }
}

TEST(ShuffleTest, CancelUnblocksASenderWaitingForCredits) {
  Failures failures;
  // Declared before the server: it must outlive the server's connection threads.
  InputGate gate({0}, 1);
  ShuffleServer server("127.0.0.1", 0, failures.options());
  server.register_gate(kJob, 1, 0, &gate);
  std::atomic<bool> cancelled{false};
  auto writer = connect(server, 1, 0, 0, [&] { return cancelled.load(); });
  writer->push(int_batch(0, 1));  // the only credit
  std::thread canceller([&] {
    std::this_thread::sleep_for(200ms);
    cancelled = true;
  });
  auto start = Clock::now();
  EXPECT_THROW(writer->push(int_batch(1, 1)), TaskCancelled);
  auto waited = Clock::now() - start;
  canceller.join();
  EXPECT_GE(waited, 190ms);
  EXPECT_LT(waited, 2s);
  EXPECT_EQ(gate.high_water_mark(), 1u);
  writer.reset();
  server.unregister_attempt(kJob, 1);
}

TEST(ShuffleTest, AReceiverRegisteredLateStillGetsEverything) {
  Failures failures;
  // Declared before the server: it must outlive the server's connection threads.
  InputGate gate({0}, 4);
  ShuffleServer server("127.0.0.1", 0, failures.options());
  std::atomic<std::int64_t> blocked_ns{0};
  std::thread sender([&] {
    auto writer = connect(server, 2, 5, 0);
    for (int i = 0; i < 50; ++i) blocked_ns += writer->push(int_batch(i * 3, 3));
    writer->push(EndOfInput{});
  });
  std::this_thread::sleep_for(500ms);  // the sender connected and waits for its first credit
  EXPECT_EQ(server.open_connections(), 1u);
  server.register_gate(kJob, 2, 5, &gate);
  std::int64_t next = 0;
  for (;;) {
    auto p = pop(gate);
    if (std::holds_alternative<EndOfInput>(p.element)) break;
    for (const auto& r : records_of<std::int64_t>(p.element)) ASSERT_EQ(r.value, next++);
  }
  sender.join();
  EXPECT_EQ(next, 150);
  EXPECT_GE(blocked_ns.load(), 400'000'000);  // the first push waited for the registration
  EXPECT_LE(gate.high_water_mark(), 4u);
  EXPECT_TRUE(failures.get().empty());
}

TEST(ShuffleTest, TwoChannelsOnOneGateKeepEachChannelsOrder) {
  Failures failures;
  // Declared before the server: it must outlive the server's connection threads.
  InputGate gate({0, 0}, 3);
  ShuffleServer server("127.0.0.1", 0, failures.options());
  server.register_gate(kJob, 1, 1, &gate);
  auto send = [&](std::uint32_t channel) {
    auto writer = connect(server, 1, 1, channel);
    for (int i = 0; i < 100; ++i) {
      writer->push(int_batch(channel * 1'000'000 + i * 5, 5));
      if (i % 10 == 9) writer->push(Watermark::at(channel * 1000 + i));
    }
    writer->push(EndOfInput{});
  };
  std::thread a(send, 0), b(send, 1);
  std::int64_t next[2] = {0, 1'000'000};
  std::int64_t watermarks[2] = {0, 0};
  int ended = 0;
  while (ended < 2) {
    auto p = pop(gate);
    if (std::holds_alternative<EndOfInput>(p.element)) {
      ++ended;
    } else if (auto* wm = std::get_if<Watermark>(&p.element)) {
      EXPECT_EQ(wm->timestamp, static_cast<EventTime>(p.channel * 1000 + watermarks[p.channel] * 10 + 9));
      ++watermarks[p.channel];
    } else {
      for (const auto& r : records_of<std::int64_t>(p.element)) ASSERT_EQ(r.value, next[p.channel]++);
    }
  }
  a.join();
  b.join();
  EXPECT_EQ(next[0], 500);
  EXPECT_EQ(next[1], 1'000'500);
  EXPECT_EQ(watermarks[0], 10);
  EXPECT_EQ(watermarks[1], 10);
  EXPECT_LE(gate.high_water_mark(), 3u);
  EXPECT_TRUE(failures.get().empty());
}

TEST(ShuffleTest, ALazyWriterConnectsOnItsFirstPush) {
  Failures failures;
  InputGate gate({0}, 2);
  ShuffleServer server("127.0.0.1", 0, failures.options());
  server.register_gate(kJob, 1, 0, &gate);
  auto writer = cluster::connect_channel_lazily("127.0.0.1", server.port(), kJob, 1, 0, 0, {});
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(server.open_connections(), 0u);
  writer->push(int_batch(5, 2));
  writer->push(EndOfInput{});
  EXPECT_EQ(records_of<std::int64_t>(pop(gate).element), (std::vector<Record<std::int64_t>>{{5, 1005}, {6, 1006}}));
  EXPECT_TRUE(std::holds_alternative<EndOfInput>(pop(gate).element));
  writer.reset();
  EXPECT_TRUE(failures.get().empty());
}

TEST(ShuffleTest, ConnectingToADeadServerFailsNamingHostAndPortAfterTheDeadline) {
  int port;
  {
    // A port nobody listens on: bound, then closed.
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
    socklen_t len = sizeof sa;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
    port = ntohs(sa.sin_port);
    ::close(fd);
  }
  ChannelConnectOptions options;
  options.connect_timeout = 300ms;
  auto start = Clock::now();
  try {
    cluster::connect_channel("127.0.0.1", port, kJob, 4, 2, 1, {}, options);
    FAIL() << "connected to a dead port";
  } catch (const ClinkError& e) {
    EXPECT_EQ(std::string(e.what()), "shuffle: cannot connect to 127.0.0.1:" + std::to_string(port) + " for job " + kJob +
                                         " attempt 4 task 2 channel 1 within 300 ms: Connection refused");
  }
  auto took = Clock::now() - start;
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 2s);
}

TEST(ShuffleTest, ACancelStopsTheConnectRetries) {
  int port;
  {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    socklen_t len = sizeof sa;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
    port = ntohs(sa.sin_port);
    ::close(fd);
  }
  auto start = Clock::now();
  auto cancelled = [&] { return Clock::now() - start > 200ms; };
  EXPECT_THROW(cluster::connect_channel("127.0.0.1", port, kJob, 1, 0, 0, cancelled), TaskCancelled);
  EXPECT_LT(Clock::now() - start, 2s);
}

TEST(ShuffleTest, AChannelWhoseGateNeverComesIsRefusedWithAnError) {
  Failures failures;
  ShuffleServer server("127.0.0.1", 0, failures.options(200ms));
  auto writer = connect(server, 9, 4, 2);
  try {
    writer->push(int_batch(0, 1));
    FAIL() << "pushed without a receiver";
  } catch (const ClinkError& e) {
    EXPECT_EQ(std::string(e.what()), "shuffle: the receiver at 127.0.0.1:" + std::to_string(server.port()) + " (job " + kJob +
                                         ", attempt 9, task 4, channel 2) rejected the channel: channel 2 of task 4 (job " +
                                         kJob + ", attempt 9) from " + failures.get().at(0).peer +
                                         ": no such task registered on this worker within 200 ms");
  }
  auto seen = failures.get();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].job_id, kJob);
  EXPECT_EQ(seen[0].attempt, 9);
  EXPECT_EQ(seen[0].task, 4);
  EXPECT_EQ(seen[0].channel, 2);
  // The writer stays failed.
  EXPECT_THROW(writer->push(EndOfInput{}), ClinkError);
}

TEST(ShuffleTest, AChannelIndexOutsideTheGateAndASecondConnectionAreRefused) {
  Failures failures;
  // Declared before the server: it must outlive the server's connection threads.
  InputGate gate({0, 0}, 2);
  ShuffleServer server("127.0.0.1", 0, failures.options());
  server.register_gate(kJob, 1, 0, &gate);
  auto out_of_range = connect(server, 1, 0, 2);
  EXPECT_THROW(
      {
        try {
          out_of_range->push(EndOfInput{});
        } catch (const ClinkError& e) {
          EXPECT_NE(std::string(e.what()).find("the task's input has 2 channels"), std::string::npos) << e.what();
          throw;
        }
      },
      ClinkError);
  auto first = connect(server, 1, 0, 1);
  first->push(int_batch(0, 1));
  auto second = connect(server, 1, 0, 1);
  try {
    second->push(int_batch(0, 1));
    FAIL() << "a second connection for channel 1 was accepted";
  } catch (const ClinkError& e) {
    EXPECT_NE(std::string(e.what()).find("the channel is already connected"), std::string::npos) << e.what();
  }
  EXPECT_EQ(records_of<std::int64_t>(pop(gate).element).size(), 1u);
  EXPECT_EQ(failures.get().size(), 2u);
}

struct UnregisteredBatch final : BatchBase {
  std::size_t size() const override { return 0; }
  BatchPtr clone() const override { return std::make_unique<UnregisteredBatch>(); }
  BatchPtr empty_like(std::size_t) const override { return std::make_unique<UnregisteredBatch>(); }
  std::type_index type() const override { return typeid(UnregisteredBatch); }
};

TEST(ShuffleTest, ABatchTypeWithoutACodecFailsNamingTheType) {
  Failures failures;
  // Declared before the server: it must outlive the server's connection threads.
  InputGate gate({0}, 2);
  ShuffleServer server("127.0.0.1", 0, failures.options());
  server.register_gate(kJob, 1, 0, &gate);
  auto writer = connect(server, 1, 0, 0);
  try {
    writer->push(std::make_unique<UnregisteredBatch>());
    FAIL() << "sent a batch without a codec";
  } catch (const ClinkError& e) {
    EXPECT_EQ(std::string(e.what()), "shuffle: no codec for batch type clink::test::(anonymous namespace)::UnregisteredBatch on the "
                                     "channel to 127.0.0.1:" + std::to_string(server.port()) + " (job " + kJob +
                                         ", attempt 1, task 0, channel 0) (register one with clink::cluster::register_batch_codec)");
  }
}

TEST(ShuffleTest, UnregisteringAnAttemptClosesItsChannels) {
  Failures failures;
  ShuffleServer server("127.0.0.1", 0, failures.options());
  auto gate = std::make_unique<InputGate>(std::vector<int>{0}, 2);
  server.register_gate(kJob, 3, 0, gate.get());
  auto writer = connect(server, 3, 0, 0);
  writer->push(int_batch(0, 1));
  ASSERT_EQ(records_of<std::int64_t>(pop(*gate).element).size(), 1u);
  server.unregister_attempt(kJob, 3);
  gate.reset();  // no element can reach it any more
  EXPECT_EQ(server.open_connections(), 0u);
  // The sender sees the channel closed (at the latest when its credits run out).
  EXPECT_THROW(
      {
        for (int i = 0; i < 10; ++i) writer->push(int_batch(i, 1));
      },
      ClinkError);
  // A late connection for the attempt is refused at once.
  auto late = connect(server, 3, 0, 0);
  try {
    late->push(EndOfInput{});
    FAIL() << "a channel of an unregistered attempt was accepted";
  } catch (const ClinkError& e) {
    EXPECT_NE(std::string(e.what()).find("attempt 3 of job " + kJob + " no longer runs on this worker"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(failures.get().size() == 1u);  // only the late one: the closed channel was ours
}

// A client speaking the framing by hand, to break the protocol on purpose.
class RawClient {
 public:
  explicit RawClient(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons(static_cast<std::uint16_t>(port));
    if (::connect(fd_.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) throw std::runtime_error("connect");
  }
  void send(const std::string& bytes) { ASSERT_TRUE(cluster::wire::send_all_blocking(fd_.get(), bytes)); }
  void send_hello(std::int64_t attempt, std::int32_t task, std::uint32_t channel) {
    std::string f;
    auto at = cluster::wire::begin_frame(f, cluster::wire::FrameKind::kHello);
    f.append(cluster::wire::kMagic, 4);
    cluster::wire::put<std::uint16_t>(f, cluster::wire::kVersion);
    cluster::wire::put<std::uint32_t>(f, static_cast<std::uint32_t>(kJob.size()));
    f += kJob;
    cluster::wire::put<std::int64_t>(f, attempt);
    cluster::wire::put<std::int32_t>(f, task);
    cluster::wire::put<std::uint32_t>(f, channel);
    cluster::wire::end_frame(f, at);
    send(f);
  }
  void send_watermark(std::int64_t ts) {
    std::string f;
    auto at = cluster::wire::begin_frame(f, cluster::wire::FrameKind::kWatermark);
    cluster::wire::put<std::int64_t>(f, ts);
    f.push_back(0);
    cluster::wire::end_frame(f, at);
    send(f);
  }
  // The next frame from the server (kind, payload); kind 0 at the end of the stream.
  std::pair<int, std::string> next() {
    cluster::wire::FrameKind kind;
    std::string_view payload;
    while (!in_.next(kind, payload))
      if (in_.fill(fd_.get()) == cluster::wire::FrameReader::Fill::kEof) return {0, ""};
    return {static_cast<int>(kind), std::string(payload)};
  }

 private:
  cluster::wire::Fd fd_;
  cluster::wire::FrameReader in_;
};

TEST(ShuffleTest, ASenderThatExceedsItsCreditsIsCutOff) {
  Failures failures;
  // Declared before the server: it must outlive the server's connection threads.
  InputGate gate({0}, 2);
  ShuffleServer server("127.0.0.1", 0, failures.options());
  server.register_gate(kJob, 1, 0, &gate);
  RawClient client(server.port());
  client.send_hello(1, 0, 0);
  auto credit = client.next();
  ASSERT_EQ(credit.first, static_cast<int>(cluster::wire::FrameKind::kCredit));
  std::uint32_t granted;
  std::memcpy(&granted, credit.second.data(), 4);
  EXPECT_EQ(granted, 2u);  // the gate's capacity
  for (int i = 0; i < 3; ++i) client.send_watermark(i);
  auto error = client.next();
  EXPECT_EQ(error.first, static_cast<int>(cluster::wire::FrameKind::kError));
  EXPECT_EQ(error.second, "the sender sent a watermark without a credit");
  EXPECT_EQ(client.next().first, 0);  // and closed
  auto seen = failures.get();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].message, "channel 0 of task 0 (job " + kJob + ", attempt 1) from " + seen[0].peer +
                                 ": the sender sent a watermark without a credit");
  EXPECT_EQ(gate.high_water_mark(), 2u);  // the two granted ones only
  EXPECT_EQ(std::get<Watermark>(pop(gate).element), Watermark::at(0));
  EXPECT_EQ(std::get<Watermark>(pop(gate).element), Watermark::at(1));
  EXPECT_FALSE(gate.pop(Clock::now() + 50ms));
}

TEST(ShuffleTest, AConnectionThatIsNotAShuffleChannelIsRefused) {
  Failures failures;
  ShuffleServer server("127.0.0.1", 0, failures.options());
  RawClient client(server.port());
  client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  auto error = client.next();
  EXPECT_EQ(error.first, static_cast<int>(cluster::wire::FrameKind::kError));
  auto seen = failures.get();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(error.second, "the connection from " + seen[0].peer + " is not a clink shuffle channel (no handshake)");
  EXPECT_EQ(seen[0].message, error.second);
  EXPECT_EQ(seen[0].task, -1);
}

TEST(ShuffleTest, AReceivingTaskCancelledClosesItsChannelsAndTheSenderFails) {
  Failures failures;
  // Declared before the server: it must outlive the server's connection threads.
  InputGate gate({0}, 1);
  ShuffleServer server("127.0.0.1", 0, failures.options());
  server.register_gate(kJob, 1, 0, &gate);
  auto writer = connect(server, 1, 0, 0);
  writer->push(int_batch(0, 1));
  ASSERT_EQ(records_of<std::int64_t>(pop(gate).element).size(), 1u);
  gate.cancel();  // the reader sees it when it pushes the next element, and closes the channel
  const std::string where = "127.0.0.1:" + std::to_string(server.port()) + " (job " + kJob + ", attempt 1, task 0, channel 0)";
  try {
    // Either a send fails or, once the credits are used, the closed socket shows.
    for (int i = 0; i < 5; ++i) {
      writer->push(Watermark::at(i));
      std::this_thread::sleep_for(20ms);
    }
    FAIL() << "the sender did not see the closed channel";
  } catch (const ClinkError& e) {
    EXPECT_NE(std::string(e.what()).find(where), std::string::npos) << e.what();
  }
  EXPECT_TRUE(failures.get().empty());
}

}  // namespace
}  // namespace clink::test
