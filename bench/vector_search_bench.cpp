// VECTOR_SEARCH's index on a real embedding set: recall@10 of HNSW against the exact flat
// search, and queries per second of both (docs/vector-search.md has the figures).
//
// The set: CPython standard-library docstring sentences embedded with all-MiniLM-L6-v2
// (384 dimensions), made by bench/vector_search_embed.py (see its header for the venv):
//   HF_HUB_OFFLINE=1 ~/.cache/clink/embed-venv/bin/python bench/vector_search_embed.py
//   build/release/bench/vector_search_bench [file] [metric]
// Single-threaded, one query at a time, k = 10, as the operator searches.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "clink/sql/ops/vector_index.hpp"

using clink::sql::VectorCorpus;
using clink::sql::VectorHit;
using clink::sql::VectorIndexOptions;
using clink::sql::VectorMetric;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Set {
  std::uint32_t corpus = 0, queries = 0, dim = 0;
  std::vector<float> values;  // corpus rows, then query rows
};

Set read_set(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "no embedding set at %s: make it with bench/vector_search_embed.py\n", path.c_str());
    std::exit(2);
  }
  char magic[8];
  Set s;
  in.read(magic, 8);
  in.read(reinterpret_cast<char*>(&s.corpus), 4);
  in.read(reinterpret_cast<char*>(&s.queries), 4);
  in.read(reinterpret_cast<char*>(&s.dim), 4);
  if (!in || std::memcmp(magic, "CLVEC001", 8) != 0) {
    std::fprintf(stderr, "%s is not a CLVEC001 file\n", path.c_str());
    std::exit(2);
  }
  s.values.resize(static_cast<std::size_t>(s.corpus + s.queries) * s.dim);
  in.read(reinterpret_cast<char*>(s.values.data()), static_cast<std::streamsize>(s.values.size() * sizeof(float)));
  if (!in) {
    std::fprintf(stderr, "%s is truncated\n", path.c_str());
    std::exit(2);
  }
  return s;
}

VectorCorpus corpus_of(const Set& s) {
  VectorCorpus c;
  c.dim = s.dim;
  c.values.assign(s.values.begin(), s.values.begin() + static_cast<std::ptrdiff_t>(std::size_t{s.corpus} * s.dim));
  for (std::uint32_t r = 0; r < s.corpus; ++r) c.rows.push_back(r);
  return c;
}

// Runs every query; returns queries per second and fills the hits of each.
double run(clink::sql::VectorIndex& index, const Set& s, std::size_t k, std::vector<std::vector<std::uint32_t>>& found) {
  std::vector<double> q(s.dim);
  std::vector<VectorHit> hits;
  found.assign(s.queries, {});
  auto start = Clock::now();
  for (std::uint32_t i = 0; i < s.queries; ++i) {
    const float* src = &s.values[(std::size_t{s.corpus} + i) * s.dim];
    for (std::uint32_t d = 0; d < s.dim; ++d) q[d] = src[d];
    index.search(q.data(), k, hits);
    for (const auto& h : hits) found[i].push_back(h.row);
  }
  return s.queries / seconds_since(start);
}

double recall(const std::vector<std::vector<std::uint32_t>>& truth, const std::vector<std::vector<std::uint32_t>>& got) {
  std::size_t hit = 0, total = 0;
  for (std::size_t i = 0; i < truth.size(); ++i) {
    std::set<std::uint32_t> t(truth[i].begin(), truth[i].end());
    for (auto r : got[i]) hit += t.count(r);
    total += truth[i].size();
  }
  return total ? static_cast<double>(hit) / static_cast<double>(total) : 1.0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* home = std::getenv("HOME");
  std::string path = argc > 1 ? argv[1] : std::string(home ? home : ".") + "/.cache/clink/vector-bench/stdlib_minilm.f32";
  VectorMetric metric = VectorMetric::kCosine;
  if (argc > 2 && !clink::sql::parse_vector_metric(argv[2], metric)) {
    std::fprintf(stderr, "metric must be cosine, l2 or dot\n");
    return 2;
  }
  const std::size_t k = 10;
  Set s = read_set(path);
  std::printf("set: %u corpus vectors, %u queries, dimension %u, k = %zu, metric %s\n", s.corpus, s.queries, s.dim, k,
              argc > 2 ? argv[2] : "cosine");

  auto t = Clock::now();
  auto flat = clink::sql::make_vector_index(corpus_of(s), metric, {});
  std::printf("flat: build %.2f s\n", seconds_since(t));
  std::vector<std::vector<std::uint32_t>> truth, got;
  double flat_qps = run(*flat, s, k, truth);
  std::printf("flat: %.0f queries/s (exact, recall@10 = 1)\n", flat_qps);

  VectorIndexOptions o;
  o.hnsw = true;
  t = Clock::now();
  auto hnsw = clink::sql::make_vector_index(corpus_of(s), metric, o);
  std::printf("hnsw (M=%zu, ef_construction=%zu): build %.2f s\n", o.m, o.ef_construction, seconds_since(t));
  // One graph, searched at several ef_search settings.
  for (std::size_t ef : {16, 32, 64, 128, 256}) {
    hnsw->set_ef_search(ef);
    double qps = run(*hnsw, s, k, got);
    std::printf("hnsw ef_search=%-4zu recall@10 = %.4f  %.0f queries/s  (%.1fx flat)\n", ef, recall(truth, got), qps,
                qps / flat_qps);
  }
  return 0;
}
