// sql_vector_search: VECTOR_SEARCH (docs/vector-search.md). Per input row, the top_k rows
// of a bounded vector table nearest to the row's query vector, each appended to the input
// row with a DOUBLE score. At open() the op reads the whole vector table through the
// table's own connector (the SqlSource its scan would use, bounded_sql_source.hpp) into a
// VectorIndex (flat or HNSW, vector_index.hpp); with corpus_refresh_ms it reads the table
// again and rebuilds the index once that interval has passed, before the next batch.
//
// The index is derived state: nothing is checkpointed. A restored subtask rebuilds it from
// the table at open(), so it answers every replayed row as before (same corpus, same
// deterministic build). Stateless otherwise: each output row carries its input row's kind
// and event time; watermarks pass through.
//
// Batch in, batch out: the query expression is evaluated once per batch; the hits of all
// its rows fill two index vectors (input row, corpus row) that drive one gather per column.
#include <chrono>
#include <memory>
#include <thread>

#include <nlohmann/json.hpp>

#include "clink/connectors/sql/bounded_sql_source.hpp"
#include "clink/core/error.hpp"
#include "clink/runtime/operator.hpp"
#include "clink/sql/expression/expr_compiler.hpp"
#include "clink/sql/spec/expr_json.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"
#include "sql_op_registration.hpp"
#include "clink/sql/ops/vector_index.hpp"

namespace clink::sql {
namespace {

// Past this many rows the vector table is taken for an unbounded source (it never ends).
constexpr std::size_t kMaxCorpusRows = std::size_t{1} << 31;

struct VectorSearchConfig {
  std::string where;
  std::string table;
  SchemaPtr out_schema;
  ExprPtr query;
  std::size_t top_k = 1;
  VectorMetric metric = VectorMetric::kCosine;
  std::size_t index_column = 0;
  VectorIndexOptions index;
  std::int64_t refresh_ms = 0;  // 0: the corpus is read once, at open()
  std::shared_ptr<const SqlSource> source;
  SessionContext session;
};

// A vector cell as doubles; false for a NULL array or a NULL element.
bool read_vector(const Column& list, std::size_t row, std::vector<double>& out) {
  out.clear();
  if (list.is_null(row)) return false;
  auto [b, e] = list.list_range(row);
  const Column& el = list.child(0);
  const bool is_float = el.type().is(TypeKind::kFloat);
  for (std::uint32_t i = b; i < e; ++i) {
    if (el.is_null(i)) return false;
    out.push_back(is_float ? static_cast<double>(el.values<float>()[i]) : el.values<double>()[i]);
  }
  return true;
}

class SqlVectorSearchOperator final : public StreamOperator {
 public:
  explicit SqlVectorSearchOperator(std::shared_ptr<const VectorSearchConfig> cfg) : cfg_(std::move(cfg)), query_(cfg_->query, cfg_->session) {}

  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    load_corpus();
  }

  void process_batch(int, BatchPtr batch) override {
    const auto& in = column_batch_cast(*batch);
    if (in.size() == 0) return;
    if (cfg_->refresh_ms > 0 && std::chrono::steady_clock::now() - loaded_at_ >= std::chrono::milliseconds(cfg_->refresh_ms))
      load_corpus();
    const Column* q = nullptr;
    try {
      q = &query_.evaluate(in);
    } catch (const SqlRuntimeError& e) {
      throw ClinkError(cfg_->where + ": " + e.what());
    }
    input_rows_.clear();
    corpus_rows_.clear();
    scores_.clear();
    for (std::size_t r = 0; r < in.size(); ++r) {
      if (!read_vector(*q, r, qv_)) continue;  // a NULL query finds nothing
      if (qv_.size() != dim_) {
        if (corpus_.size() == 0) continue;  // an empty table: nothing to find, any dimension
        throw ClinkError(cfg_->where + ": VECTOR_SEARCH: the query vector has " + std::to_string(qv_.size()) +
                         " values, the vectors of table `" + cfg_->table + "` have " + std::to_string(dim_));
      }
      index_->search(qv_.data(), cfg_->top_k, hits_);
      for (const auto& h : hits_) {
        input_rows_.push_back(static_cast<std::uint32_t>(r));
        corpus_rows_.push_back(h.row);
        scores_.push_back(h.score);
      }
    }
    const std::size_t n = input_rows_.size();
    if (n == 0) return;
    auto out = std::make_unique<ColumnBatch>(cfg_->out_schema, n);
    const std::size_t n_in = in.num_columns();
    for (std::size_t c = 0; c < n_in; ++c) out->column(c).append_gather(in.column(c), input_rows_.data(), n);
    for (std::size_t c = 0; c < table_->num_columns(); ++c)
      out->column(n_in + c).append_gather(table_->column(c), corpus_rows_.data(), n);
    Column& score = out->column(n_in + table_->num_columns());
    for (double s : scores_) score.append(s);
    auto& kinds = out->row_kinds();
    auto& times = out->event_times();
    kinds.resize(n);
    times.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
      kinds[k] = in.row_kind(input_rows_[k]);
      times[k] = in.event_times()[input_rows_[k]];
    }
    output().emit(std::move(out));
  }

 private:
  // Reads the whole vector table (its connector's reader, as one subtask of one) and
  // builds the index over the rows whose vector is not NULL.
  void load_corpus() {
    auto table = std::make_unique<ColumnBatch>(cfg_->source->output_schema());
    auto reader = cfg_->source->create_reader(0, 1);
    try {
      reader->open(ctx());
      for (;;) {
        auto status = reader->poll(*table, kDefaultBatchSize);
        if (status == SqlSourceReader::Status::kEnd) break;
        if (table->size() > kMaxCorpusRows)
          throw ClinkError("more than " + std::to_string(kMaxCorpusRows) + " rows: the vector table must be bounded");
        if (status == SqlSourceReader::Status::kNothingAvailable)
          std::this_thread::sleep_for(std::chrono::milliseconds(std::max<std::int64_t>(1, reader->wait_hint_ms())));
      }
      reader->close();
    } catch (const ClinkError& e) {
      throw ClinkError(cfg_->where + ": reading the vector table `" + cfg_->table + "`: " + e.what());
    }
    VectorCorpus corpus;
    const Column& vectors = table->column(cfg_->index_column);
    for (std::size_t r = 0; r < table->size(); ++r) {
      if (!read_vector(vectors, r, qv_)) continue;
      if (corpus.rows.empty()) corpus.dim = qv_.size();
      if (qv_.size() != corpus.dim)
        throw ClinkError(cfg_->where + ": VECTOR_SEARCH: row " + std::to_string(r + 1) + " of table `" + cfg_->table +
                         "` has a vector of " + std::to_string(qv_.size()) + " values, the first has " +
                         std::to_string(corpus.dim));
      corpus.values.insert(corpus.values.end(), qv_.begin(), qv_.end());
      corpus.rows.push_back(static_cast<std::uint32_t>(r));
    }
    dim_ = corpus.dim;
    corpus_ = corpus;  // the row list, for the empty-table check (values are moved below)
    corpus_.values.clear();
    index_ = make_vector_index(std::move(corpus), cfg_->metric, cfg_->index);
    table_ = std::move(table);
    loaded_at_ = std::chrono::steady_clock::now();
  }

  std::shared_ptr<const VectorSearchConfig> cfg_;
  CompiledExpr query_;
  std::unique_ptr<ColumnBatch> table_;  // the vector table's rows
  VectorCorpus corpus_;                 // rows only
  std::size_t dim_ = 0;
  std::unique_ptr<VectorIndex> index_;
  std::chrono::steady_clock::time_point loaded_at_;
  std::vector<double> qv_;
  std::vector<VectorHit> hits_;
  std::vector<std::uint32_t> input_rows_, corpus_rows_;
  std::vector<double> scores_;
};

bool is_vector_type(const LogicalType& t) {
  return t.is(TypeKind::kArray) && (t.element_type().is(TypeKind::kFloat) || t.element_type().is(TypeKind::kDouble));
}

}  // namespace

void register_sql_vector_search(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "sql_vector_search",
      .description = "sql_row -> sql_row: VECTOR_SEARCH; per input row the top_k rows of a bounded vector table "
                     "nearest to the query vector (cosine, l2 or dot; flat or hnsw index), each with a DOUBLE score",
      .num_inputs = 1,
      .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        SqlOpParams p(ctx, "sql_vector_search",
                      {"query", "top_k", "metric", "index_column", "options", "table", "source_factory", "source"});
        SchemaPtr in = p.input_schema(0);
        auto cfg = std::make_shared<VectorSearchConfig>();
        cfg->where = p.where();
        cfg->out_schema = p.output_schema();
        cfg->session = session_from_params(p);
        cfg->table = p.get_string("table", "?");
        try {
          cfg->query = expr_from_json(p.require("query"), *in);
        } catch (const std::exception& e) {
          p.fail(std::string("param 'query': ") + e.what());
        }
        if (!is_vector_type(cfg->query->type))
          p.fail("param 'query' is " + cfg->query->type.to_string() + ", it must be ARRAY<FLOAT> or ARRAY<DOUBLE>");
        cfg->top_k = static_cast<std::size_t>(p.require_int("top_k", 1, 1 << 20));
        if (!parse_vector_metric(p.get_string("metric", "cosine"), cfg->metric))
          p.fail("param 'metric' must be cosine, l2 or dot, got '" + p.get_string("metric", "") + "'");
        const auto& options = p.params().contains("options") ? p.params().at("options") : nlohmann::json::object();
        if (!options.is_object()) p.fail("param 'options' must be an object");
        auto number = [&](const char* key, std::int64_t fallback, std::int64_t min) -> std::int64_t {
          if (!options.contains(key)) return fallback;
          const std::string v = options.at(key).is_string() ? options.at(key).get<std::string>() : options.at(key).dump();
          try {
            std::size_t used = 0;
            std::int64_t n = std::stoll(v, &used);
            if (used == v.size() && n >= min) return n;
          } catch (const std::exception&) {
          }
          p.fail(std::string("option '") + key + "' must be an integer >= " + std::to_string(min) + ", got '" + v + "'");
        };
        for (const auto& [k, v] : options.items())
          if (k != "index" && k != "m" && k != "ef_construction" && k != "ef_search" && k != "corpus_refresh_ms")
            p.fail("unknown option '" + k + "' (options: index, m, ef_construction, ef_search, corpus_refresh_ms)");
        std::string index = options.contains("index") ? options.at("index").get<std::string>() : "flat";
        if (index != "flat" && index != "hnsw") p.fail("option 'index' must be flat or hnsw, got '" + index + "'");
        cfg->index.hnsw = index == "hnsw";
        cfg->index.m = static_cast<std::size_t>(number("m", 16, 2));
        cfg->index.ef_construction = static_cast<std::size_t>(number("ef_construction", 200, 1));
        cfg->index.ef_search = static_cast<std::size_t>(number("ef_search", 64, 1));
        cfg->refresh_ms = number("corpus_refresh_ms", 0, 0);
        const std::string factory = p.get_string("source_factory", "");
        const SqlSourceMaker* maker = find_sql_source_maker(factory);
        if (!maker) p.fail("param 'source_factory': no bounded SQL source '" + factory + "' is registered in this process");
        OperatorSpecContext source_ctx;
        source_ctx.id = ctx.id + "/vector_table";
        nlohmann::json source = p.require("source");
        if (p.params().contains("session") && !source.contains("session")) source["session"] = p.params().at("session");
        source_ctx.params = source;
        cfg->source = (*maker)(source_ctx);
        const Schema& table = *cfg->source->output_schema();
        cfg->index_column = p.column(p.require("index_column"), table, "index_column");
        if (!is_vector_type(table.type(cfg->index_column)))
          p.fail("param 'index_column': `" + table.name(cfg->index_column) + "` is " +
                 table.type(cfg->index_column).to_string() + ", it must be ARRAY<FLOAT> or ARRAY<DOUBLE>");
        const Schema& out = *cfg->out_schema;
        if (out.size() != in->size() + table.size() + 1)
          p.fail("param 'schema' has " + std::to_string(out.size()) + " fields, the input's " + std::to_string(in->size()) +
                 ", the vector table's " + std::to_string(table.size()) + " and the score make " +
                 std::to_string(in->size() + table.size() + 1));
        for (std::size_t i = 0; i < out.size(); ++i) {
          const LogicalType expected = i < in->size() ? in->type(i)
                                       : i < in->size() + table.size() ? table.type(i - in->size())
                                                                       : LogicalType::double_type();
          if (out.type(i).kind() != expected.kind())
            p.fail("param 'schema': field " + std::to_string(i) + " ('" + out.name(i) + "') is " + out.type(i).to_string() +
                   ", expected " + expected.to_string());
        }
        return [cfg] { return std::make_unique<SqlVectorSearchOperator>(cfg); };
      }});
}

}  // namespace clink::sql
