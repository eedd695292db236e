// INTERSECT ALL / EXCEPT ALL's exact changelog in a fixed arrival order: the planner's
// own operators (their params from the planned JobGraphSpec) chained by hand after the
// union, the left input's rows pushed first and the right's after (a real job's two
// sources interleave in no fixed order). The GROUP BY retracts a group's row when its
// counts change, and the REPLICATE_ROWS Correlate retracts every copy it had emitted.
#include <gtest/gtest.h>

#include <map>

#include "clink/registry/builtin_registry.hpp"
#include "clink/sql/catalog/catalog.hpp"
#include "clink/sql/handler/statement_runner.hpp"
#include "sql_ops_test_support.hpp"

namespace clink::test {
namespace {

using Lines = std::vector<std::string>;

// One planned operator; what it emits goes to `next`, or is formatted into `lines`.
class Stage final : public Output {
 public:
  explicit Stage(const json& op, Stage* next) : next_(next) {
    OperatorSpecContext sc;
    sc.id = op.at("id").get<std::string>();
    sc.params = op.at("params");
    sc.input_types = {sql::kSqlRowType};
    op_ = builtin_registry().get(op.at("type").get<std::string>()).make(sc)();
    ctx_ = std::make_unique<RuntimeContext>(sc.id, sc.id, 0, 1, kDefaultMaxParallelism, this,
                                            std::make_shared<OperatorMetrics>(), SystemClock::instance());
    ctx_->set_keyed_state_backend(make_keyed_state_backend(StateBackendConfig{}, sc.id, 0, ctx_->key_groups(),
                                                           kDefaultMaxParallelism, SystemClock::instance()));
    op_->open(*ctx_);
  }
  ~Stage() override { op_->close(); }
  void push(BatchPtr b) { op_->process_batch(0, std::move(b)); }

  void emit(BatchPtr b) override {
    if (next_) return next_->push(std::move(b));
    for (auto& l : sql::format_rows(sql::column_batch_cast(*b))) lines.push_back(std::move(l));
  }
  void emit_watermark(Watermark) override {}
  void emit_side(const std::string&, BatchPtr) override {}

  Lines lines;

 private:
  Stage* next_;
  std::unique_ptr<StreamOperator> op_;
  std::unique_ptr<RuntimeContext> ctx_;
};

// The query planned over two one-column tables l(v) and r(v); the ops after the sources.
struct Planned {
  explicit Planned(const std::string& set_op) {
    sql::Catalog catalog;
    sql::StatementRunner runner(catalog);
    runner.run("CREATE TABLE l (v STRING) WITH ('connector' = 'filesystem', 'path' = '/dev/null', 'format' = 'csv');"
               "CREATE TABLE r (v STRING) WITH ('connector' = 'filesystem', 'path' = '/dev/null', 'format' = 'csv');"
               "CREATE TABLE out_t (v STRING) WITH ('connector' = 'collect', 'name' = 'set-all')");
    spec = runner.run("INSERT INTO out_t SELECT v FROM l " + set_op + " SELECT v FROM r").at(0).spec;
    for (const auto& op : spec.at("ops")) by_id[op.at("id").get<std::string>()] = op;
  }
  // The op reading `from` (each op here has one reader).
  const json* reader_of(const std::string& from) const {
    for (const auto& op : spec.at("ops"))
      if (op.contains("inputs"))
        for (const auto& e : op.at("inputs"))
          if (e.at("from") == from) return &op;
    return nullptr;
  }
  json spec;
  std::map<std::string, json> by_id;
};

// Chains every op from the union's readers to the sink (excluded); pushes the left
// batches, then the right ones; the formatted changelog.
Lines run(const std::string& set_op, const std::vector<std::string>& left, const std::vector<std::string>& right) {
  Planned p(set_op);
  std::vector<std::string> sources;
  for (const auto& op : p.spec.at("ops"))
    if (op.at("type") == "sql_filesystem_source") sources.push_back(op.at("id").get<std::string>());
  EXPECT_EQ(sources.size(), 2u);
  // source -> calc (marker) -> group aggregate -> calc -> correlate -> calc -> sink.
  std::vector<const json*> side_calcs{p.reader_of(sources[0]), p.reader_of(sources[1])};
  std::vector<const json*> chain;
  for (const json* op = p.reader_of(side_calcs[0]->at("id").get<std::string>()); op && op->at("type") != "sql_collect_sink";
       op = p.reader_of(op->at("id").get<std::string>()))
    chain.push_back(op);
  std::string types;
  for (const json* op : chain) types += op->at("type").get<std::string>() + " ";
  EXPECT_EQ(types, "sql_group_aggregate sql_calc sql_correlate sql_calc ");
  std::vector<std::unique_ptr<Stage>> stages(chain.size());
  for (std::size_t i = chain.size(); i-- > 0;)
    stages[i] = std::make_unique<Stage>(*chain[i], i + 1 < chain.size() ? stages[i + 1].get() : nullptr);
  Stage left_calc(*side_calcs[0], stages[0].get());
  Stage right_calc(*side_calcs[1], stages[0].get());
  SchemaPtr in = sql::make_schema({{"v", LogicalType::string()}});
  auto push = [&](Stage& s, const std::vector<std::string>& values) {
    for (const auto& v : values)  // one row per batch: the changelog of each arrival
      s.push(std::make_unique<ColumnBatch>(batch(in, {Row{{v == "null" ? Value() : Value(v)}}})));
  };
  push(left_calc, left);
  push(right_calc, right);
  return stages.back()->lines;
}

// The aggregate's row for x updates from the first left row on; the filter drops the
// rows where a side's count is 0 (the -U of (3, 0) too), so the first copies arrive as +U,
// as in Flink (a retract sink takes +U without a -U as an insert).
TEST(SetOperationsAll, IntersectAllEmitsAsTheRightArrivesAfterTheLeft) {
  EXPECT_EQ(run("INTERSECT ALL", {"x", "x", "x", "null"}, {"x", "x", "null", "y"}),
            (Lines{"+U[x]",                    // right x #1: counts (3, 1), one copy
                   "-U[x]", "+U[x]", "+U[x]",  // right x #2: (3, 2), the old copy retracted, two copies
                   "+U[null]"}));              // NULL equals NULL; y is on the right only
}

TEST(SetOperationsAll, ExceptAllRetractsAsTheRightArrivesAfterTheLeft) {
  EXPECT_EQ(run("EXCEPT ALL", {"x", "x", "x", "null"}, {"x", "x", "null", "y"}),
            (Lines{"+I[x]",                                      // left x #1: sum 1
                   "-U[x]", "+U[x]", "+U[x]",                    // left x #2: 2
                   "-U[x]", "-U[x]", "+U[x]", "+U[x]", "+U[x]",  // left x #3: 3
                   "+I[null]",                                   // left NULL: 1
                   "-U[x]", "-U[x]", "-U[x]", "+U[x]", "+U[x]",  // right x #1: 3 - 1
                   "-U[x]", "-U[x]", "+U[x]",                    // right x #2: 3 - 2
                   "-U[null]"}));  // right NULL: 1 - 1 = 0, no copy left; y: -1, never shown
}

}  // namespace
}  // namespace clink::test
