// clink bench kafka: Nexmark bids as JSON in a Kafka topic, read by clink's kafka source.
// Two figures, each in records/s per core of this process's CPU time (the broker's CPU is
// reported apart, from /proc/<broker pid>/stat, when its pid is given):
//   source  kafka (json) -> blackhole: the JSON source alone;
//   e2e     kafka (json) -> filter/project -> kafka (json, exactly-once), checkpoints
//           every second: the end-to-end exactly-once pipeline.
// The topic is filled once per size (by a clink job: nexmark -> kafka) and reused.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include <fmt/format.h>
#include <librdkafka/rdkafka.h>
#include <unistd.h>

#include "clink/sql/parser/parser.hpp"
#include "commands.hpp"
#include "sql_session.hpp"

namespace clink::cli {
namespace {

struct KafkaBenchOptions {
  std::string bootstrap;
  std::int64_t records = 1'000'000;
  int broker_pid = 0;
};

double cpu_seconds(const rusage& u) {
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// utime + stime of a process, in seconds (0 when it cannot be read).
double process_cpu_seconds(int pid) {
  if (pid <= 0) return 0;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 2));
  std::string f;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i)
    if (i == 14 || i == 15) ticks += std::stod(f);  // utime, stime
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// The datagen table and bid view of examples/nexmark (Nexmark's generator).
std::string nexmark_bids(std::int64_t events) {
  // 998 bids in every 1000 events (the generator needs a person and an auction too).
  return fmt::format(R"(
CREATE TABLE datagen (event_type INT,
  person ROW<id BIGINT, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR, city VARCHAR, state VARCHAR,
             dateTime TIMESTAMP(3), extra VARCHAR>,
  auction ROW<id BIGINT, itemName VARCHAR, description VARCHAR, initialBid BIGINT, reserve BIGINT,
              dateTime TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra VARCHAR>,
  bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, dateTime TIMESTAMP(3),
          extra VARCHAR>)
WITH ('connector' = 'nexmark', 'events.num' = '{}', 'max-emit-speed' = 'true', 'person.proportion' = '1',
      'auction.proportion' = '1', 'bid.proportion' = '998');
)",
                     (events * 1000 + 997) / 998);
}

const char* kBidColumns =
    "auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, dateTime TIMESTAMP(3), extra STRING";

// The records in the topic (the sum of its partitions' end offsets; 0 when it does not exist).
std::int64_t topic_records(const std::string& bootstrap, const std::string& topic) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), err, sizeof err);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (!rk) throw ClinkError(std::string("kafka: ") + err);
  std::int64_t total = 0;
  const rd_kafka_metadata_t* md = nullptr;
  if (rd_kafka_metadata(rk, 1, nullptr, &md, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    for (int t = 0; t < md->topic_cnt; ++t) {
      if (topic != md->topics[t].topic) continue;
      for (int p = 0; p < md->topics[t].partition_cnt; ++p) {
        std::int64_t lo = 0, hi = 0;
        if (rd_kafka_query_watermark_offsets(rk, topic.c_str(), md->topics[t].partitions[p].id, &lo, &hi, 10000) ==
            RD_KAFKA_RESP_ERR_NO_ERROR)
          total += hi - lo;
      }
    }
    rd_kafka_metadata_destroy(md);
  }
  rd_kafka_destroy(rk);
  return total;
}

struct Run {
  double wall = 0, cpu = 0, broker_cpu = 0;
};

Run run_script(const std::string& sql, const KafkaBenchOptions& opts, std::int64_t checkpoint_ms,
               const std::filesystem::path& checkpoint_dir) {
  SqlJobSettings settings;
  settings.parallelism = 1;
  if (checkpoint_ms > 0) {
    settings.execution.checkpoints.interval_ms = checkpoint_ms;
    settings.execution.checkpoints.directory = checkpoint_dir;
  }
  SqlSession session(settings, "", stdout);
  auto script = sql::parse(sql);
  rusage before{}, after{};
  getrusage(RUSAGE_SELF, &before);
  const double broker_before = process_cpu_seconds(opts.broker_pid);
  auto start = std::chrono::steady_clock::now();
  for (const auto& st : script.statements) session.execute(st);
  Run r;
  r.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  getrusage(RUSAGE_SELF, &after);
  r.cpu = cpu_seconds(after) - cpu_seconds(before);
  r.broker_cpu = process_cpu_seconds(opts.broker_pid) - broker_before;
  return r;
}

void report(const char* what, const Run& r, std::int64_t n, const KafkaBenchOptions& opts) {
  const double records = static_cast<double>(n);
  std::printf("%-8s %10.3f %14.0f %22.0f", what, r.wall, records / r.wall, r.cpu > 0 ? records / r.cpu : 0.0);
  if (opts.broker_pid > 0) std::printf(" %16.2f", r.broker_cpu);
  std::printf("\n");
  std::fflush(stdout);
}

int bench_kafka(KafkaBenchOptions opts) {
  try {
    if (opts.bootstrap.empty()) {
      const char* env = std::getenv("CLINK_KAFKA_BOOTSTRAP");
      opts.bootstrap = env && *env ? env : "127.0.0.1:19092";
    }
    const std::string topic = fmt::format("clink-bench-bids-{}", opts.records);
    const auto tmp = std::filesystem::temp_directory_path() / fmt::format("clink-bench-kafka-{}", ::getpid());
    std::filesystem::create_directories(tmp);
    auto table = [&](const std::string& name, const std::string& t, const std::string& extra) {
      return fmt::format("CREATE TABLE {} ({}) WITH ('connector' = 'kafka', 'topic' = '{}', "
                         "'properties.bootstrap.servers' = '{}', 'format' = 'json'{});\n",
                         name, kBidColumns, t, opts.bootstrap, extra);
    };
    const std::string bounded = ", 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset'";
    std::printf("kafka: %lld Nexmark bids as JSON in topic %s at %s\n", static_cast<long long>(opts.records),
                topic.c_str(), opts.bootstrap.c_str());
    // Fill the topic unless a run before did.
    if (topic_records(opts.bootstrap, topic) < opts.records) {
      run_script(nexmark_bids(opts.records) + table("bids_out", topic, ", 'sink.delivery-guarantee' = 'at-least-once'") +
                     "INSERT INTO bids_out SELECT bid.auction, bid.bidder, bid.price, bid.channel, bid.url, "
                     "bid.dateTime, bid.extra FROM datagen WHERE event_type = 2;\n",
                 opts, 0, tmp);
    }
    const std::int64_t records = topic_records(opts.bootstrap, topic);
    std::printf("\n%-8s %10s %14s %22s%s\n", "case", "wall s", "records/s", "records/s per core",
                opts.broker_pid > 0 ? "    broker cpu s" : "");
    Run source = run_script(table("bids", topic, bounded) +
                                fmt::format("CREATE TABLE sink ({}) WITH ('connector' = 'blackhole');\n", kBidColumns) +
                                "INSERT INTO sink SELECT * FROM bids;\n",
                            opts, 0, tmp);
    report("source", source, records, opts);
    const std::string out = fmt::format("clink-bench-out-{}", ::getpid());
    Run e2e = run_script(
        table("bids", topic, bounded) +
            table("filtered", out,
                  fmt::format(", 'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = '{}'",
                              out)) +
            "INSERT INTO filtered SELECT auction, bidder, price * 100, channel, url, dateTime, extra FROM bids "
            "WHERE auction % 10 <> 7;\n",
        opts, 1000, tmp / "checkpoints");
    report("e2e", e2e, records, opts);
    std::filesystem::remove_all(tmp);
    return kExitOk;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitError;
  }
}

}  // namespace

void add_bench_kafka_command(CLI::App& bench, int& exit_code) {
  auto opts = std::make_shared<KafkaBenchOptions>();
  auto* kafka = bench.add_subcommand("kafka", "Read Nexmark bids as JSON from Kafka: the source alone, and "
                                              "kafka -> filter/project -> kafka exactly-once (records/s per core)");
  kafka->add_option("--bootstrap", opts->bootstrap, "The broker (default: $CLINK_KAFKA_BOOTSTRAP or 127.0.0.1:19092)");
  kafka->add_option("-n,--records", opts->records, "Bids in the topic")->default_val(1'000'000)->check(CLI::Range(1LL, 1LL << 40));
  kafka->add_option("--broker-pid", opts->broker_pid, "The broker's pid, to report its CPU time too");
  kafka->callback([opts, &exit_code] { exit_code = bench_kafka(*opts); });
}

}  // namespace clink::cli
