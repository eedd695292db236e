// clink bench nexmark: runs a Nexmark query (examples/nexmark/<query>.sql, or all of them) on the
// in-process generator with a given number of events and reports events/s, events/s per
// core of CPU time (getrusage over the whole process: generator, operators and sinks, as
// Flink's Nexmark counts it) and the peak resident memory.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <memory>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "clink/cluster/coordinator/cluster_runtime.hpp"
#include "clink/cluster/worker/worker.hpp"
#include "clink/registry/builtin_registry.hpp"
#include "clink/sql/parser/parser.hpp"
#include "commands.hpp"
#include "sql_session.hpp"

namespace clink::cli {
namespace {

struct BenchOptions {
  std::string query = "q0";
  std::vector<std::int64_t> events{10'000'000};
  std::string output;   // a results file (tab-separated) to write
  std::string compare;  // a results file of an earlier run to compare with
  int parallelism = 1;
  std::string file;  // default: examples/nexmark/<query>.sql
  int workers = 0;   // > 0: on a cluster of this many workers in this process
};

double cpu_seconds(const rusage& u) {
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

std::string find_query(const BenchOptions& opts) {
  if (!opts.file.empty()) return opts.file;
  std::string rel = "examples/nexmark/" + opts.query + ".sql";
  if (std::filesystem::exists(rel)) return rel;
  std::string src = std::string(CLINK_SOURCE_DIR) + "/" + rel;
  if (std::filesystem::exists(src)) return src;
  throw ClinkError(fmt::format("no Nexmark query '{}' (looked for {} here and in {})", opts.query, rel, CLINK_SOURCE_DIR));
}

// Every nexmark source generates `events` events unthrottled; print sinks become
// blackholes (Nexmark measures with blackhole sinks; printing would measure the terminal).
void size_job(nlohmann::json& spec, std::int64_t events) {
  for (auto& op : spec["ops"]) {
    std::string factory = op.value("type", "");
    if (factory == "sql_nexmark_source") {
      op["params"]["events.num"] = std::to_string(events);
      op["params"]["max-emit-speed"] = "true";
    } else if (factory == "sql_print_sink" || factory == "sql_collect_sink" || factory == "sql_filesystem_sink") {
      // (q10's filesystem sink too: Nexmark measures the query, not the disk)
      nlohmann::json p = {{"schema", op["params"]["schema"]}};
      if (op["params"].contains("input_schemas")) p["input_schemas"] = op["params"]["input_schemas"];
      op["type"] = "sql_blackhole_sink";
      op["params"] = std::move(p);
    }
  }
}

// The queries of examples/nexmark/ in Nexmark's order (q0, q1, q2, q5w, q10, ...).
std::vector<std::string> example_queries() {
  std::string dir = "examples/nexmark";
  if (!std::filesystem::is_directory(dir)) dir = std::string(CLINK_SOURCE_DIR) + "/examples/nexmark";
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".sql") names.push_back(e.path().stem().string());
  if (names.empty()) throw ClinkError("no Nexmark queries in " + dir);
  auto number = [](const std::string& q) { return std::atoi(q.c_str() + 1); };
  std::sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    return number(a) != number(b) ? number(a) < number(b) : a < b;
  });
  return names;
}

// One measured run: a query at a number of events.
struct BenchResult {
  std::string query;
  std::int64_t events = 0;
  int parallelism = 1;
  double wall_s = 0, events_per_s = 0, per_core = 0, peak_mib = 0;
};

constexpr const char* kResultHeader = "query\tevents\tparallelism\twall_s\tevents_per_s\tevents_per_core_s\tpeak_mib";

// A results file of --output: the header, then one line per run.
std::vector<BenchResult> read_results(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ClinkError("--compare: cannot read " + path);
  std::vector<BenchResult> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (number == 1) {
      if (line != kResultHeader) throw ClinkError(fmt::format("--compare: {} is not a results file of --output (line 1)", path));
      continue;
    }
    if (line.empty()) continue;
    BenchResult r;
    std::istringstream fields(line);
    if (!(fields >> r.query >> r.events >> r.parallelism >> r.wall_s >> r.events_per_s >> r.per_core >> r.peak_mib))
      throw ClinkError(fmt::format("--compare: {} line {}: expected 7 tab-separated fields", path, number));
    out.push_back(r);
  }
  return out;
}

// --query all, several --events, --output or --compare: each run in its own process (this
// binary), so that CPU time and peak memory are each run's own; one table of their
// figures, with the ratio of events/s per core to the same run in the --compare file.
int bench_table(const BenchOptions& opts) {
  try {
    auto queries = opts.query == "all" ? example_queries() : std::vector<std::string>{opts.query};
    std::vector<BenchResult> baseline;
    if (!opts.compare.empty()) baseline = read_results(opts.compare);
    std::ofstream output;
    if (!opts.output.empty()) {
      output.open(opts.output);
      if (!output) throw ClinkError("--output: cannot write " + opts.output);
      output << kResultHeader << "\n";
    }
    std::printf("nexmark: parallelism %d%s\n\n", opts.parallelism,
                opts.compare.empty() ? "" : fmt::format(", compared to {}", opts.compare).c_str());
    std::printf("%-6s %11s %10s %14s %18s %10s%s\n", "query", "events", "wall s", "events/s", "events/s per core",
                "peak MiB", opts.compare.empty() ? "" : "   vs before");
    std::fflush(stdout);
    int failed = 0, slower = 0;
    // The shell popen runs would be /proc/self/exe there: resolve this binary first.
    const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    for (std::int64_t events : opts.events)
      for (const auto& q : queries) {
        std::string cmd = fmt::format("'{}' bench nexmark --query {} --events {} -p {}{} 2>&1", self, q, events,
                                      opts.parallelism, opts.file.empty() ? "" : " -f '" + opts.file + "'")
                          + (opts.workers > 0 ? fmt::format(" --workers {}", opts.workers) : "");
        FILE* pipe = ::popen(cmd.c_str(), "r");
        if (!pipe) throw ClinkError("cannot run " + cmd);
        std::string out;
        char buf[4096];
        while (std::size_t n = std::fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
        int status = ::pclose(pipe);
        auto figure = [&](const char* label) -> double {
          auto at = out.find(label);
          if (at == std::string::npos) return -1;
          return std::atof(out.c_str() + at + std::strlen(label));
        };
        BenchResult r{q, events, opts.parallelism, figure("wall time"), figure("throughput"), figure("per core"),
                      figure("peak rss")};
        if (status != 0 || r.events_per_s < 0) {
          ++failed;
          std::printf("%-6s %11lld failed: %s\n", q.c_str(), static_cast<long long>(events),
                      out.substr(0, out.find('\n')).c_str());
          std::fflush(stdout);
          continue;
        }
        std::string versus;
        if (!opts.compare.empty()) {
          auto before = std::find_if(baseline.begin(), baseline.end(), [&](const BenchResult& b) {
            return b.query == q && b.events == events && b.parallelism == opts.parallelism;
          });
          if (before == baseline.end() || before->per_core <= 0) {
            versus = "   (not in it)";
          } else {
            double ratio = r.per_core / before->per_core;
            // Per-core figures of one query vary by a few percent run to run here.
            bool regressed = ratio < 0.9;
            slower += regressed;
            versus = fmt::format("   {:.2f}x{}", ratio, regressed ? "  SLOWER" : "");
          }
        }
        std::printf("%-6s %11lld %10.3f %14.0f %18.0f %10.1f%s\n", q.c_str(), static_cast<long long>(events), r.wall_s,
                    r.events_per_s, r.per_core, r.peak_mib, versus.c_str());
        std::fflush(stdout);
        if (output.is_open())
          output << fmt::format("{}\t{}\t{}\t{:.3f}\t{:.0f}\t{:.0f}\t{:.1f}\n", q, events, r.parallelism, r.wall_s,
                                r.events_per_s, r.per_core, r.peak_mib)
                 << std::flush;
      }
    if (slower > 0) std::printf("\n%d run(s) more than 10%% slower per core than in %s\n", slower, opts.compare.c_str());
    return failed == 0 ? kExitOk : kExitError;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitError;
  }
}

int bench_nexmark(const BenchOptions& opts) {
  if ((opts.query == "all" && opts.file.empty()) || opts.events.size() > 1 || !opts.output.empty() ||
      !opts.compare.empty())
    return bench_table(opts);
  try {
    std::string path = find_query(opts);
    auto script = sql::parse(read_file(path));
    SqlJobSettings settings;
    settings.parallelism = opts.parallelism;
    std::int64_t events = opts.events.front();
    settings.rewrite_spec = [events](nlohmann::json& spec) { size_job(spec, events); };
    // --workers: a coordinator's runtime and workers in this process (their gRPC streams
    // and TCP channels real), so getrusage counts the cluster's whole CPU time.
    std::unique_ptr<cluster::ClusterRuntime> runtime;
    std::vector<std::unique_ptr<cluster::Worker>> workers;
    if (opts.workers > 0) {
      runtime = std::make_unique<cluster::ClusterRuntime>(cluster::ClusterRuntimeConfig{});
      for (int i = 0; i < opts.workers; ++i) {
        cluster::WorkerConfig wc;
        std::string rpc = "127.0.0.1:" + std::to_string(runtime->rpc_port());
        wc.coordinator = [rpc] { return rpc; };
        wc.slots = (opts.parallelism + opts.workers - 1) / opts.workers;
        wc.worker_id = "w" + std::to_string(i);
        workers.push_back(std::make_unique<cluster::Worker>(wc, builtin_registry()));
      }
      while (runtime->workers().size() < static_cast<std::size_t>(opts.workers))
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      settings.launch = [&runtime](const JobGraph& g, const ExecutionOptions& o, cluster::JobTexts) {
        static int n = 0;
        return runtime->launch(fmt::format("{:032x}", ++n), g, o);
      };
    }
    SqlSession session(settings, "", stdout);
    rusage before{}, after{};
    getrusage(RUSAGE_SELF, &before);
    auto start = std::chrono::steady_clock::now();
    for (const auto& st : script.statements) {
      try {
        session.execute(st);
      } catch (const std::exception& e) {
        throw ClinkError(path + ": " + describe_error(e, st.pos));
      }
    }
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    getrusage(RUSAGE_SELF, &after);
    double cpu = cpu_seconds(after) - cpu_seconds(before);
    double n = static_cast<double>(events);
    std::printf("nexmark %s: %lld events, parallelism %d%s\n", opts.query.c_str(), static_cast<long long>(events),
                opts.parallelism, opts.workers > 0 ? fmt::format(", on {} workers", opts.workers).c_str() : "");
    std::printf("  wall time      %.3f s\n", wall);
    std::printf("  throughput     %.0f events/s\n", n / wall);
    std::printf("  cpu time       %.3f s\n", cpu);
    std::printf("  per core       %.0f events/s per core of CPU time\n", cpu > 0 ? n / cpu : 0.0);
    std::printf("  peak rss       %.1f MiB\n", static_cast<double>(after.ru_maxrss) / 1024.0);
    return kExitOk;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitError;
  }
}

}  // namespace

void add_bench_command(CLI::App& app, int& exit_code) {
  auto* bench = app.add_subcommand("bench", "Benchmarks");
  bench->require_subcommand(1);
  auto opts = std::make_shared<BenchOptions>();
  auto* nexmark = bench->add_subcommand("nexmark", "Run a Nexmark query on the in-process generator and report "
                                                   "events/s, events/s per core and peak memory");
  nexmark->add_option("-q,--query", opts->query, "The query: examples/nexmark/<query>.sql, or all of them: all")
      ->default_val("q0");
  nexmark->add_option("-n,--events", opts->events, "Events to generate (several, comma-separated: one run each)")
      ->delimiter(',')
      ->check(CLI::Range(1LL, 1LL << 50));
  nexmark->add_option("-o,--output", opts->output, "Write the figures of every run to this file (tab-separated)");
  nexmark->add_option("--compare", opts->compare,
                      "A file of an earlier --output: print each run's events/s per core as a ratio to it");
  nexmark->add_option("-p,--parallelism", opts->parallelism, "Parallelism of the job")->default_val(1)->check(CLI::Range(1, 1 << 15));
  nexmark->add_option("-f,--file", opts->file, "A query script to run instead of examples/nexmark/<query>.sql");
  nexmark->add_option("--workers", opts->workers,
                      "Run on a cluster of this many workers (in this process: real control plane and TCP shuffle)")
      ->default_val(0);
  nexmark->callback([opts, &exit_code] { exit_code = bench_nexmark(*opts); });
  add_bench_kafka_command(*bench, exit_code);
  add_bench_jdbc_command(*bench, exit_code);
  add_bench_json_command(*bench, exit_code);
}

}  // namespace clink::cli
