// sql_correlate: Flink's StreamExecCorrelate for UNNEST, REPLICATE_ROWS (INTERSECT ALL /
// EXCEPT ALL) and user table functions (table_function.hpp). Per input row, the rows of the collection its argument evaluates
// to (or the function returns for its arguments), each appended to the input row. Stateless: every
// output row carries its input row's kind (a -U or -D row retracts what its +I/+U
// expanded to) and event time; watermarks pass through.
//
// Batch in, batch out: the argument is evaluated once per batch (a vectorised kernel),
// then two index vectors (input row and element of every output row, reused across
// batches) drive one gather per output column. No per-row allocation beyond the output.
#include <limits>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "clink/core/error.hpp"
#include "clink/runtime/operator.hpp"
#include "clink/sql/common/multiset_type.hpp"
#include "clink/sql/expression/expr_compiler.hpp"
#include "clink/sql/function/table_function.hpp"
#include "clink/sql/spec/expr_json.hpp"
#include "clink/sql/spec/plan_structs.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"
#include "sql_op_registration.hpp"

namespace clink::sql {
namespace {

constexpr std::uint32_t kNoElement = std::numeric_limits<std::uint32_t>::max();

// How the collection's elements become columns.
// kMultisetElements: a multiset's element once per count (its entries are element -> count).
enum class Expansion { kElement, kRowFields, kMapEntries, kMultisetElements };

struct CorrelateConfig {
  std::string where;
  SchemaPtr out_schema;
  std::string function;                    // UNNEST, REPLICATE_ROWS or the user function's name
  const TableFunctionDef* udtf = nullptr;  // a user table function
  bool replicate_rows = false;             // REPLICATE_ROWS(n, cols...)
  std::vector<ExprPtr> udtf_args;          // a user function's or REPLICATE_ROWS' arguments
  ExprPtr collection;
  Expansion expansion = Expansion::kElement;
  bool with_ordinality = false;
  bool left_outer = false;
  ExprPtr condition;  // LEFT JOIN UNNEST ... ON condition, over the output row
  SessionContext session;
};

// Appends src[idx[k]] for every k, a NULL where idx[k] is kNoElement (a LEFT row padded).
// `rows`: the ROW column `src` is a field of (a NULL row gives NULL fields), or null.
void append_elements(Column& dst, const Column& src, const std::vector<std::uint32_t>& idx, const Column* rows) {
  const std::size_t base = dst.size();
  const std::size_t n = idx.size();
  std::size_t k = 0;
  while (k < n) {
    if (idx[k] == kNoElement) {
      dst.append_null();
      ++k;
      continue;
    }
    std::size_t end = k;
    while (end < n && idx[end] != kNoElement) ++end;
    dst.append_gather(src, idx.data() + k, end - k);
    k = end;
  }
  if (rows)
    for (std::size_t r = 0; r < n; ++r)
      if (idx[r] != kNoElement && rows->is_null(idx[r])) dst.set_valid(base + r, false);
}

class SqlCorrelateOperator final : public StreamOperator {
 public:
  explicit SqlCorrelateOperator(const CorrelateConfig& cfg) : cfg_(cfg) {
    if (cfg.udtf || cfg.replicate_rows) {
      for (const auto& a : cfg.udtf_args) udtf_args_.emplace_back(a, cfg.session);
    } else {
      collection_.emplace(cfg.collection, cfg.session);
    }
    if (cfg.condition) condition_.emplace(cfg.condition, cfg.session);
  }

  void process_batch(int, BatchPtr batch) override {
    const auto& in = column_batch_cast(*batch);
    if (in.size() == 0) return;
    try {
      if (cfg_.udtf) call_function(in);
      else if (cfg_.replicate_rows) replicate_rows(in);
      else expand(in, collection_->evaluate(in));
    } catch (const SqlRuntimeError& e) {
      throw ClinkError(cfg_.where + ": " + e.what());
    }
  }

 private:
  // A user table function: called per input row, it appends its rows straight into the
  // function's output columns; the input columns are gathered after.
  void call_function(const ColumnBatch& in) {
    std::vector<const Column*> arg_columns;
    for (auto& a : udtf_args_) arg_columns.push_back(&a.evaluate(in));
    auto out = std::make_unique<ColumnBatch>(cfg_.out_schema, in.size());
    const std::size_t n_in = in.num_columns();
    std::vector<Column*> function_columns;
    for (std::size_t c = n_in; c < out->num_columns(); ++c) function_columns.push_back(&out->column(c));
    TableFunctionArgs args(std::move(arg_columns));
    TableFunctionOutput rows(std::move(function_columns));
    input_rows_.clear();
    for (std::size_t r = 0; r < in.size(); ++r) {
      args.set_row(r);
      const std::size_t before = rows.rows();
      try {
        cfg_.udtf->eval(args, rows);
      } catch (const std::exception& e) {
        throw ClinkError(cfg_.where + ": table function " + function_name() + ": " + e.what());
      }
      if (rows.rows() == before && cfg_.left_outer) rows.add_row();  // one row of NULLs
      input_rows_.insert(input_rows_.end(), rows.rows() - before, static_cast<std::uint32_t>(r));
    }
    rows.finish_row();
    emit(in, std::move(out));
  }

  // REPLICATE_ROWS(n, cols...): cols, n times per input row (Flink's ReplicateRows: none
  // for a NULL or non-positive n). One gather per column drives the copies.
  void replicate_rows(const ColumnBatch& in) {
    std::vector<const Column*> arg_columns;
    for (auto& a : udtf_args_) arg_columns.push_back(&a.evaluate(in));
    const Column& times = *arg_columns[0];
    input_rows_.clear();
    for (std::size_t r = 0; r < in.size(); ++r) {
      if (times.is_null(r)) continue;
      const std::int64_t n = times.values<std::int64_t>()[r];
      if (n > 0) input_rows_.insert(input_rows_.end(), static_cast<std::size_t>(n), static_cast<std::uint32_t>(r));
    }
    if (input_rows_.empty()) return;
    auto out = std::make_unique<ColumnBatch>(cfg_.out_schema, input_rows_.size());
    for (std::size_t a = 1; a < arg_columns.size(); ++a)
      out->column(in.num_columns() + a - 1).append_gather(*arg_columns[a], input_rows_.data(), input_rows_.size());
    emit(in, std::move(out));
  }

  // The input columns, kinds and event times of the output rows (input_rows_), then out.
  void emit(const ColumnBatch& in, std::unique_ptr<ColumnBatch> out) {
    if (input_rows_.empty()) return;
    add_input_columns(in, *out);
    output().emit(std::move(out));
  }
  void add_input_columns(const ColumnBatch& in, ColumnBatch& out) const {
    const std::size_t n = input_rows_.size();
    for (std::size_t c = 0; c < in.num_columns(); ++c) out.column(c).append_gather(in.column(c), input_rows_.data(), n);
    auto& kinds = out.row_kinds();
    auto& times = out.event_times();
    kinds.resize(n);
    times.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
      kinds[k] = in.row_kind(input_rows_[k]);
      times[k] = in.event_times()[input_rows_[k]];
    }
  }

  void expand(const ColumnBatch& in, const Column& collection) {
    collect_elements(in, collection);
    if (input_rows_.empty()) return;
    auto out = unnested(in, collection);
    // LEFT JOIN UNNEST ... ON condition: evaluated over the joined rows, which are then
    // built again from the rows it kept (and the padding of input rows it kept none of).
    if (condition_ && keep_matching(*out)) {
      if (input_rows_.empty()) return;
      out = unnested(in, collection);
    }
    output().emit(std::move(out));
  }

  // Per output row: its input row, its element and (WITH ORDINALITY) its 1-based position
  // among its input row's rows (a multiset's element counts once per repetition).
  void collect_elements(const ColumnBatch& in, const Column& collection) {
    input_rows_.clear();
    elements_.clear();
    ordinals_.clear();
    for (std::size_t r = 0; r < in.size(); ++r) {
      auto [begin, end] = collection.is_null(r) ? std::pair<std::uint32_t, std::uint32_t>{0, 0} : collection.list_range(r);
      if (begin == end) {
        if (!cfg_.left_outer) continue;  // INNER: a NULL or empty collection drops the row
        input_rows_.push_back(static_cast<std::uint32_t>(r));
        elements_.push_back(kNoElement);
        ordinals_.push_back(0);
        continue;
      }
      std::int32_t position = 0;
      for (std::uint32_t e = begin; e < end; ++e) {
        std::int32_t times = 1;
        if (cfg_.expansion == Expansion::kMultisetElements) {
          const Column& counts = collection.child(1);
          times = counts.is_null(e) ? 0 : counts.values<std::int32_t>()[e];  // <= 0: no row, as Flink's loop
        }
        for (std::int32_t t = 0; t < times; ++t) {
          input_rows_.push_back(static_cast<std::uint32_t>(r));
          elements_.push_back(e);
          ordinals_.push_back(++position);
        }
      }
    }
  }

  // Keeps the output rows the condition holds for; an input row whose elements it keeps
  // none of gets one row of NULLs (LEFT). True when it dropped any row.
  bool keep_matching(const ColumnBatch& joined) {
    condition_->select(joined, selection_);
    const std::size_t n = input_rows_.size();
    if (selection_.size() == n) return false;
    std::size_t s = 0, kept = 0;
    auto keep = [&](std::uint32_t r, std::uint32_t e, std::int32_t ordinal) {
      input_rows_[kept] = r;
      elements_[kept] = e;
      ordinals_[kept++] = ordinal;
    };
    for (std::size_t k = 0; k < n;) {
      const std::uint32_t r = input_rows_[k];
      const std::size_t group = kept;
      for (; k < n && input_rows_[k] == r; ++k) {
        const bool holds = s < selection_.size() && selection_[s] == k;
        if (holds) ++s;
        if (holds && elements_[k] != kNoElement) keep(r, elements_[k], ordinals_[k]);
      }
      if (kept == group && cfg_.left_outer) keep(r, kNoElement, 0);
    }
    input_rows_.resize(kept);
    elements_.resize(kept);
    ordinals_.resize(kept);
    return true;
  }

  // The output rows of input_rows_, elements_ and ordinals_.
  std::unique_ptr<ColumnBatch> unnested(const ColumnBatch& in, const Column& collection) {
    const std::size_t n = input_rows_.size();
    auto out = std::make_unique<ColumnBatch>(cfg_.out_schema, n);
    std::size_t c = in.num_columns();
    switch (cfg_.expansion) {
      case Expansion::kElement:
      case Expansion::kMultisetElements: append_elements(out->column(c++), collection.child(0), elements_, nullptr); break;
      case Expansion::kRowFields: {
        const Column& rows = collection.child(0);
        for (std::size_t f = 0; f < rows.num_children(); ++f) append_elements(out->column(c++), rows.child(f), elements_, &rows);
        break;
      }
      case Expansion::kMapEntries:
        append_elements(out->column(c++), collection.child(0), elements_, nullptr);
        append_elements(out->column(c++), collection.child(1), elements_, nullptr);
        break;
    }
    if (cfg_.with_ordinality) {
      Column& ord = out->column(c);
      for (std::size_t k = 0; k < n; ++k) {
        if (elements_[k] == kNoElement) ord.append_null();
        else ord.append(ordinals_[k]);
      }
    }
    add_input_columns(in, *out);
    return out;
  }

  std::string function_name() const { return cfg_.function; }

  CorrelateConfig cfg_;
  std::optional<CompiledExpr> collection_;
  std::optional<CompiledPredicate> condition_;
  std::vector<CompiledExpr> udtf_args_;
  std::vector<std::uint32_t> selection_;   // the rows the condition holds for
  std::vector<std::uint32_t> input_rows_;  // per output row: its input row
  std::vector<std::uint32_t> elements_;    // per output row: its element (kNoElement: padded)
  std::vector<std::int32_t> ordinals_;     // per output row: its position (WITH ORDINALITY)
};

}  // namespace

void register_sql_correlate(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "sql_correlate",
      .description = "sql_row -> sql_row: Flink's Correlate; each input row joined to the rows of a user table function "
                     "or REPLICATE_ROWS (n copies of its columns) or the rows UNNEST makes of a "
                     "collection expression (INNER or LEFT, optional ordinality), kinds kept",
      .num_inputs = 1,
      .out_type = [](const OperatorSpecContext&) { return std::string(kSqlRowType); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        SqlOpParams p(ctx, "sql_correlate", {"function", "args", "with_ordinality", "join_type", "condition"});
        SchemaPtr in = p.input_schema(0);
        auto cfg = std::make_shared<CorrelateConfig>();
        cfg->where = p.where();
        cfg->out_schema = p.output_schema();
        cfg->session = session_from_params(p);
        std::string function = p.get_string("function", "UNNEST");
        cfg->function = function;
        std::string join_type = p.get_string("join_type", "INNER");
        if (join_type != "INNER" && join_type != "LEFT") p.fail("param 'join_type' must be INNER or LEFT, got '" + join_type + "'");
        cfg->left_outer = join_type == "LEFT";
        cfg->with_ordinality = p.get_bool("with_ordinality", false);
        const auto& args = p.require("args");
        if (!args.is_array()) p.fail("param 'args' must be an array of expressions");
        std::vector<ExprPtr> bound;
        for (std::size_t i = 0; i < args.size(); ++i) {
          try {
            bound.push_back(expr_from_json(args[i], *in));
          } catch (const std::exception& e) {
            p.fail("param 'args'[" + std::to_string(i) + "]: " + e.what());
          }
        }
        std::vector<RowField> fields;
        if (function == "REPLICATE_ROWS") {
          cfg->replicate_rows = true;
          if (cfg->with_ordinality) p.fail("param 'with_ordinality' applies to UNNEST only");
          if (cfg->left_outer) p.fail("param 'join_type' must be INNER for REPLICATE_ROWS");
          if (bound.size() < 2) p.fail("param 'args': REPLICATE_ROWS takes a count and at least one column");
          if (!bound[0]->type.is(TypeKind::kBigInt))
            p.fail("param 'args'[0] is " + bound[0]->type.to_string() + ", REPLICATE_ROWS' count must be BIGINT");
          for (std::size_t i = 1; i < bound.size(); ++i) fields.push_back({"f" + std::to_string(i - 1), bound[i]->type});
          cfg->udtf_args = std::move(bound);
        } else if (function != "UNNEST") {
          cfg->udtf = TableFunctionRegistry::process().find(function);
          if (!cfg->udtf) p.fail("param 'function': no table function '" + function + "' is registered in this process");
          if (cfg->with_ordinality) p.fail("param 'with_ordinality' applies to UNNEST only");
          if (bound.size() != cfg->udtf->params.size())
            p.fail("param 'args' has " + std::to_string(bound.size()) + " expressions, " + function + " takes " +
                   std::to_string(cfg->udtf->params.size()));
          for (std::size_t i = 0; i < bound.size(); ++i)
            if (bound[i]->type.kind() != cfg->udtf->params[i].kind() ||
                bound[i]->type.length() != cfg->udtf->params[i].length())
              p.fail("param 'args'[" + std::to_string(i) + "] is " + bound[i]->type.to_string() + ", " + function +
                     " takes " + cfg->udtf->params[i].to_string());
          cfg->udtf_args = std::move(bound);
          for (auto f : cfg->udtf->columns) fields.push_back({f.name, f.type.with_nullable(true)});
        }
        if (!cfg->udtf && !cfg->replicate_rows) {
          if (bound.size() != 1) p.fail("param 'args' must be an array of one expression (the collection)");
          cfg->collection = bound[0];
        }
        if (p.has("condition")) {
          if (cfg->udtf || cfg->replicate_rows || !cfg->left_outer)
            p.fail("param 'condition' applies to a LEFT join with UNNEST only");
          try {
            cfg->condition = expr_from_json(p.require("condition"), *cfg->out_schema);
          } catch (const std::exception& e) {
            p.fail(std::string("param 'condition': ") + e.what());
          }
          if (!cfg->condition->type.is(TypeKind::kBoolean))
            p.fail("param 'condition' is " + cfg->condition->type.to_string() + ", expected BOOLEAN");
        }
        if (!cfg->udtf && !cfg->replicate_rows) {
          const LogicalType& t = cfg->collection->type;
          fields = unnest_fields(t, cfg->with_ordinality, cfg->left_outer);
          if (fields.empty()) p.fail("param 'args'[0] is " + t.to_string() + ": UNNEST needs an ARRAY or MAP");
          cfg->expansion = is_multiset(t)                        ? Expansion::kMultisetElements
                           : t.is(TypeKind::kMap)                  ? Expansion::kMapEntries
                           : t.element_type().is(TypeKind::kRow) ? Expansion::kRowFields
                                                                 : Expansion::kElement;
        }
        const Schema& out = *cfg->out_schema;
        if (out.size() != in->size() + fields.size())
          p.fail("param 'schema' has " + std::to_string(out.size()) + " fields, the input's " + std::to_string(in->size()) +
                 " and " + function + "'s " + std::to_string(fields.size()) + " make " + std::to_string(in->size() + fields.size()));
        for (std::size_t i = 0; i < out.size(); ++i) {
          const LogicalType& expected = i < in->size() ? in->type(i) : fields[i - in->size()].type;
          if (!(out.type(i) == expected))
            p.fail("param 'schema': field " + std::to_string(i) + " ('" + out.name(i) + "') is " + out.type(i).to_string() +
                   ", expected " + expected.to_string());
        }
        return [cfg] { return std::make_unique<SqlCorrelateOperator>(*cfg); };
      }});
}

}  // namespace clink::sql
