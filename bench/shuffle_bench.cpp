// Network shuffle throughput on loopback: Nexmark bids as SQL ColumnBatches (1024 rows:
// auction, bidder, price BIGINT, channel, url STRING, date_time TIMESTAMP(3), extra
// STRING) from a sender process through connect_channel to a ShuffleServer and an
// InputGate whose consumer pops and drops them. The sender is a forked process, so each
// side's CPU time is its own (getrusage): the sender's includes cloning each batch from
// a pool (measured alone too), the receiver's its reader thread (decoding) and the
// consumer. Usage: shuffle_bench [batches=20000] [channels=1] [capacity=8]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "clink/cluster/shuffle/remote_channel_writer.hpp"
#include "clink/cluster/shuffle/shuffle_server.hpp"
#include "clink/connectors/nexmark/nexmark_generator.hpp"
#include "clink/runtime/channel_writer.hpp"
#include "clink/runtime/input_gate.hpp"
#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/common/column_serde.hpp"

using namespace clink;
using Clock = std::chrono::steady_clock;

namespace {

double cpu_seconds(const rusage& u) {
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}
double self_cpu() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return cpu_seconds(u);
}
double self_sys() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_stime.tv_sec) + static_cast<double>(u.ru_stime.tv_usec) / 1e6;
}

std::vector<BatchPtr> bid_batches(std::size_t count, std::size_t rows) {
  using sql::LogicalType;
  auto schema = sql::make_schema({{"auction", LogicalType::bigint()},
                                  {"bidder", LogicalType::bigint()},
                                  {"price", LogicalType::bigint()},
                                  {"channel", LogicalType::string()},
                                  {"url", LogicalType::string()},
                                  {"date_time", LogicalType::timestamp(3)},
                                  {"extra", LogicalType::string()}});
  nexmark::GeneratorConfig config;
  config.base_time = 1600000000000;
  nexmark::NexmarkGenerator gen(config);
  std::vector<BatchPtr> out;
  std::int64_t n = 0;
  std::string extra;
  for (std::size_t b = 0; b < count; ++b) {
    auto batch = std::make_unique<sql::ColumnBatch>(schema, rows);
    while (batch->size() < rows) {
      NexmarkEvent e = gen.event(n++);
      if (e.type != NexmarkEventType::kBid) continue;
      extra.clear();
      e.bid.extra.append_to(extra);
      batch->column(0).append(e.bid.auction);
      batch->column(1).append(e.bid.bidder);
      batch->column(2).append(e.bid.price);
      batch->column(3).append_string(e.bid.channel);
      batch->column(4).append_string(e.bid.url);
      batch->column(5).append(e.bid.date_time);
      batch->column(6).append_string(extra);
      batch->commit_rows(1, sql::RowKind::kInsert, e.bid.date_time);
    }
    out.push_back(std::move(batch));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t batches = argc > 1 ? std::atoll(argv[1]) : 20000;
  const int channels = argc > 2 ? std::atoi(argv[2]) : 1;
  const std::size_t capacity = argc > 3 ? static_cast<std::size_t>(std::atoll(argv[3])) : 8;
  const std::size_t rows = 1024;
  const std::string job = "00000000000000000000000000000001";

  std::vector<BatchPtr> pool = bid_batches(16, rows);
  std::size_t pool_bytes = 0;
  for (const auto& b : pool) pool_bytes += sql::serialize_batch(sql::column_batch_cast(*b)).size();
  const double bytes_per_batch = static_cast<double>(pool_bytes) / static_cast<double>(pool.size());

  cluster::ShuffleServer server("127.0.0.1", 0);
  InputGate gate(std::vector<int>(static_cast<std::size_t>(channels), 0), capacity);
  server.register_gate(job, 1, 0, &gate);
  const int port = server.port();

  const double cpu_before = self_cpu();
  const double sys_before = self_sys();
  const auto start = Clock::now();
  pid_t child = fork();
  if (child == 0) {
    // Sender: one thread per channel, each pushing its share of the batches.
    std::vector<std::thread> senders;
    for (int c = 0; c < channels; ++c)
      senders.emplace_back([&, c] {
        auto writer = cluster::connect_channel("127.0.0.1", port, job, 1, 0, static_cast<std::uint32_t>(c), {});
        for (std::int64_t i = c; i < batches; i += channels) writer->push(pool[static_cast<std::size_t>(i) % pool.size()]->clone());
        writer->push(EndOfInput{});
      });
    for (auto& t : senders) t.join();
    std::_Exit(0);
  }
  std::int64_t received_rows = 0;
  int ended = 0;
  while (ended < channels) {
    auto p = gate.pop(Clock::now() + std::chrono::seconds(60));
    if (!p) {
      std::fprintf(stderr, "no element within 60 s\n");
      return 1;
    }
    if (std::holds_alternative<EndOfInput>(p->element)) ++ended;
    else if (auto* b = std::get_if<BatchPtr>(&p->element)) received_rows += static_cast<std::int64_t>((*b)->size());
  }
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  const double receiver_cpu = self_cpu() - cpu_before;
  const double receiver_sys = self_sys() - sys_before;
  int status = 0;
  rusage child_usage{};
  wait4(child, &status, 0, &child_usage);
  const double sender_cpu = cpu_seconds(child_usage);
  const double sender_sys = static_cast<double>(child_usage.ru_stime.tv_sec) + static_cast<double>(child_usage.ru_stime.tv_usec) / 1e6;

  // The sender's cloning alone (not shuffle work), to subtract.
  const double clone_before = self_cpu();
  for (std::int64_t i = 0; i < batches; ++i) {
    BatchPtr b = pool[static_cast<std::size_t>(i) % pool.size()]->clone();
  }
  const double clone_cpu = self_cpu() - clone_before;

  // For comparison: the same batches through an in-process channel (what co-located
  // subtasks use), producer and consumer threads in this process.
  double local_cpu = 0, local_wall = 0;
  {
    InputGate local_gate({0}, capacity);
    auto local_writer = make_local_channel_writer(local_gate, 0);
    const double before = self_cpu();
    const auto local_start = Clock::now();
    std::thread producer([&] {
      for (std::int64_t i = 0; i < batches; ++i) local_writer->push(pool[static_cast<std::size_t>(i) % pool.size()]->clone());
      local_writer->push(EndOfInput{});
    });
    for (;;) {
      auto p = local_gate.pop(Clock::now() + std::chrono::seconds(60));
      if (!p || std::holds_alternative<EndOfInput>(p->element)) break;
    }
    producer.join();
    local_wall = std::chrono::duration<double>(Clock::now() - local_start).count();
    local_cpu = self_cpu() - before;
  }

  const double records = static_cast<double>(received_rows);
  const double bytes = bytes_per_batch * static_cast<double>(batches);
  std::printf("shuffle_bench: %lld batches x %zu rows, %d channel(s), gate capacity %zu, %.0f bytes/batch encoded\n",
              static_cast<long long>(batches), rows, channels, capacity, bytes_per_batch);
  std::printf("  wall %.3f s: %.2f M records/s, %.1f MB/s\n", wall, records / wall / 1e6, bytes / wall / 1e6);
  std::printf("  sender CPU %.3f s (kernel %.3f s; cloning batches %.3f s): %.2f M records, %.1f MB per CPU-s without cloning\n",
              sender_cpu, sender_sys, clone_cpu, records / (sender_cpu - clone_cpu) / 1e6, bytes / (sender_cpu - clone_cpu) / 1e6);
  std::printf("  receiver CPU %.3f s (kernel %.3f s; reader threads decoding + consumer popping and freeing): %.2f M records, %.1f MB per CPU-s\n",
              receiver_cpu, receiver_sys, records / receiver_cpu / 1e6, bytes / receiver_cpu / 1e6);
  std::printf("  in-process channel, same batches: wall %.3f s, CPU %.3f s (cloning included); the shuffle's CPU over both sides "
              "is %.3f s more\n",
              local_wall, local_cpu, sender_cpu + receiver_cpu - local_cpu);
  if (received_rows != batches * static_cast<std::int64_t>(rows) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "lost records: %lld of %lld (sender status %d)\n", static_cast<long long>(received_rows),
                 static_cast<long long>(batches * static_cast<std::int64_t>(rows)), status);
    return 1;
  }
  return 0;
}
