// VECTOR_SEARCH's index (vector_index.hpp). Ranking runs on floats (half the memory
// traffic of doubles, 4-wide SIMD lanes); the few candidates it keeps are re-scored in
// double from the corpus' values, so an exact search prints exact scores.
#include "clink/sql/ops/vector_index.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <hnswlib/hnswlib.h>

namespace clink::sql {
namespace {

// Four lanes of float: GCC and Clang lower it to SSE/NEON (AVX when built for it).
using f4 = float __attribute__((vector_size(16)));

f4 load4(const float* p) {
  f4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

float hsum(f4 v) { return (v[0] + v[1]) + (v[2] + v[3]); }

float dot_f(const float* a, const float* b, std::size_t n) {
  f4 s0{}, s1{};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    s0 += load4(a + i) * load4(b + i);
    s1 += load4(a + i + 4) * load4(b + i + 4);
  }
  float s = hsum(s0 + s1);
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

float l2sq_f(const float* a, const float* b, std::size_t n) {
  f4 s0{}, s1{};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    f4 d0 = load4(a + i) - load4(b + i);
    f4 d1 = load4(a + i + 4) - load4(b + i + 4);
    s0 += d0 * d0;
    s1 += d1 * d1;
  }
  float s = hsum(s0 + s1);
  for (; i < n; ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
  return s;
}

double norm_d(const double* a, std::size_t n) {
  double s = 0;
  for (std::size_t i = 0; i < n; ++i) s += a[i] * a[i];
  return std::sqrt(s);
}

// The corpus in float, unit-length rows for cosine (then cosine is a dot product).
class Base : public VectorIndex {
 public:
  Base(VectorCorpus corpus, VectorMetric metric) : c_(std::move(corpus)), metric_(metric) {
    const std::size_t n = c_.size(), d = c_.dim;
    norms_.resize(n);
    f_.resize(n * d);
    for (std::size_t r = 0; r < n; ++r) {
      const double* v = &c_.values[r * d];
      norms_[r] = norm_d(v, d);
      const double scale = metric_ == VectorMetric::kCosine && norms_[r] > 0 ? 1.0 / norms_[r] : 1.0;
      for (std::size_t i = 0; i < d; ++i) f_[r * d + i] = static_cast<float>(v[i] * scale);
    }
  }

 protected:
  // The query in the corpus' float form.
  const float* prepare(const double* q) {
    qf_.resize(c_.dim);
    q_norm_ = norm_d(q, c_.dim);
    const double scale = metric_ == VectorMetric::kCosine && q_norm_ > 0 ? 1.0 / q_norm_ : 1.0;
    for (std::size_t i = 0; i < c_.dim; ++i) qf_[i] = static_cast<float>(q[i] * scale);
    return qf_.data();
  }

  // Exact scores of the candidate vectors, best first (ties: lower corpus row), k kept.
  void finish(const double* q, const std::vector<std::uint32_t>& candidates, std::size_t k, std::vector<VectorHit>& out) {
    out.clear();
    const std::size_t d = c_.dim;
    for (std::uint32_t v : candidates) {
      const double* x = &c_.values[static_cast<std::size_t>(v) * d];
      double s = 0;
      if (metric_ == VectorMetric::kL2) {
        for (std::size_t i = 0; i < d; ++i) s += (q[i] - x[i]) * (q[i] - x[i]);
        s = std::sqrt(s);
      } else {
        for (std::size_t i = 0; i < d; ++i) s += q[i] * x[i];
        // A zero vector has no direction: its cosine similarity with anything is 0.
        if (metric_ == VectorMetric::kCosine) s = q_norm_ > 0 && norms_[v] > 0 ? s / (q_norm_ * norms_[v]) : 0.0;
      }
      out.push_back({v, s});
    }
    const bool ascending = metric_ == VectorMetric::kL2;
    std::sort(out.begin(), out.end(), [&](const VectorHit& a, const VectorHit& b) {
      if (a.score != b.score) return ascending ? a.score < b.score : a.score > b.score;
      return c_.rows[a.row] < c_.rows[b.row];
    });
    if (out.size() > k) out.resize(k);
    for (auto& h : out) h.row = c_.rows[h.row];
  }

  VectorCorpus c_;
  VectorMetric metric_;
  std::vector<double> norms_;
  std::vector<float> f_;
  std::vector<float> qf_;
  double q_norm_ = 0;
  std::vector<std::uint32_t> candidates_;
};

// Exact: every vector scored, the best few kept in a min-heap (the worst kept on top).
class FlatIndex final : public Base {
 public:
  using Base::Base;

  void search(const double* q, std::size_t k, std::vector<VectorHit>& out) override {
    const float* qf = prepare(q);
    const std::size_t n = c_.size(), d = c_.dim;
    // A margin over k absorbs float rounding among near-ties; the double re-score orders them.
    const std::size_t keep = std::min(n, 2 * k + 16);
    heap_.clear();
    auto worse = [](const Cand& a, const Cand& b) { return a.goodness > b.goodness || (a.goodness == b.goodness && a.row < b.row); };
    for (std::size_t r = 0; r < n; ++r) {
      const float* x = &f_[r * d];
      const float g = metric_ == VectorMetric::kL2 ? -l2sq_f(qf, x, d) : dot_f(qf, x, d);
      if (heap_.size() < keep) {
        heap_.push_back({g, static_cast<std::uint32_t>(r)});
        std::push_heap(heap_.begin(), heap_.end(), worse);
      } else if (g > heap_.front().goodness) {
        std::pop_heap(heap_.begin(), heap_.end(), worse);
        heap_.back() = {g, static_cast<std::uint32_t>(r)};
        std::push_heap(heap_.begin(), heap_.end(), worse);
      }
    }
    candidates_.clear();
    for (const auto& c : heap_) candidates_.push_back(c.row);
    finish(q, candidates_, k, out);
  }

 private:
  struct Cand {
    float goodness;
    std::uint32_t row;
  };
  std::vector<Cand> heap_;
};

// Approximate: hnswlib's graph over the float rows (inner product for cosine and dot,
// squared L2 for l2). Built single-threaded in corpus order with a fixed seed, so the
// same corpus gives the same graph (and the same answers) on every subtask and restart.
class HnswIndex final : public Base {
 public:
  HnswIndex(VectorCorpus corpus, VectorMetric metric, const VectorIndexOptions& o) : Base(std::move(corpus), metric), o_(o) {
    const std::size_t n = c_.size(), d = c_.dim;
    if (metric == VectorMetric::kL2) space_ = std::make_unique<hnswlib::L2Space>(d);
    else space_ = std::make_unique<hnswlib::InnerProductSpace>(d);
    graph_ = std::make_unique<hnswlib::HierarchicalNSW<float>>(space_.get(), std::max<std::size_t>(n, 1), o.m, o.ef_construction, 100);
    for (std::size_t r = 0; r < n; ++r) graph_->addPoint(&f_[r * d], r);
  }

  void search(const double* q, std::size_t k, std::vector<VectorHit>& out) override {
    const float* qf = prepare(q);
    // As flat: a margin over k, so rows tied at the k-th score are ordered by corpus row.
    const std::size_t want = std::min(c_.size(), 2 * k + 16);
    candidates_.clear();
    if (want > 0) {
      graph_->setEf(std::max(o_.ef_search, want));
      auto found = graph_->searchKnn(qf, want);
      while (!found.empty()) {
        candidates_.push_back(static_cast<std::uint32_t>(found.top().second));
        found.pop();
      }
    }
    finish(q, candidates_, k, out);
  }

  void set_ef_search(std::size_t ef) override { o_.ef_search = ef; }

 private:
  VectorIndexOptions o_;
  std::unique_ptr<hnswlib::SpaceInterface<float>> space_;
  std::unique_ptr<hnswlib::HierarchicalNSW<float>> graph_;
};

}  // namespace

bool parse_vector_metric(const std::string& text, VectorMetric& out) {
  std::string t = text;
  for (auto& ch : t) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (t == "cosine") out = VectorMetric::kCosine;
  else if (t == "l2") out = VectorMetric::kL2;
  else if (t == "dot") out = VectorMetric::kDot;
  else return false;
  return true;
}

std::unique_ptr<VectorIndex> make_vector_index(VectorCorpus corpus, VectorMetric metric, const VectorIndexOptions& options) {
  if (options.hnsw) return std::make_unique<HnswIndex>(std::move(corpus), metric, options);
  return std::make_unique<FlatIndex>(std::move(corpus), metric);
}

}  // namespace clink::sql
