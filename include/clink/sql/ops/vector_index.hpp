#pragma once
// The in-memory index of VECTOR_SEARCH's vector table (sql_vector_search.cpp): the corpus
// as one contiguous row-major float matrix, searched exactly (`flat`: brute force with a
// small top-k heap, loops the compiler vectorises) or approximately (`hnsw`: Debian's
// header-only hnswlib, kept out of this header). Either way the candidates are re-scored
// in double precision from the corpus' own values and ordered best first, ties by corpus
// row, so the scores printed are exact and the order deterministic.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace clink::sql {

enum class VectorMetric { kCosine, kL2, kDot };

// Parses cosine | l2 | dot (any case); nullopt-like: returns false for anything else.
bool parse_vector_metric(const std::string& text, VectorMetric& out);

struct VectorIndexOptions {
  bool hnsw = false;                 // 'index' = 'hnsw' (default 'flat')
  std::size_t m = 16;                // HNSW links per node
  std::size_t ef_construction = 200;
  std::size_t ef_search = 64;        // raised to k when smaller
};

struct VectorHit {
  std::uint32_t row = 0;  // corpus row
  double score = 0;       // cosine similarity, dot product, or Euclidean distance (l2)
};

// The corpus: `rows` vectors of `dim` values, row-major (double: the exact values the
// scores are computed from). A row whose vector is NULL or of another dimension is left
// out by the caller (it can never be a result).
struct VectorCorpus {
  std::size_t dim = 0;
  std::vector<double> values;        // rows * dim
  std::vector<std::uint32_t> rows;   // the corpus row of each vector (into the table rows)
  std::size_t size() const { return rows.size(); }
};

class VectorIndex {
 public:
  virtual ~VectorIndex() = default;
  // The best `k` hits for query `q` (dim values), best first; `out` is cleared first.
  virtual void search(const double* q, std::size_t k, std::vector<VectorHit>& out) = 0;
  // HNSW's search breadth (raised to k at each search); no effect on flat.
  virtual void set_ef_search(std::size_t) {}
};

std::unique_ptr<VectorIndex> make_vector_index(VectorCorpus corpus, VectorMetric metric, const VectorIndexOptions& options);

}  // namespace clink::sql
