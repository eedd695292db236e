// PlanProperties: each node's changelog mode and each join's / rank's analysis, derived
// once per plan and kept; the same values the one-off derivations give.
#include "clink/sql/planner/plan_properties.hpp"

#include <functional>

#include "plan_test_util.hpp"

namespace clink::test {

using namespace clink::sql;

namespace {

struct Plans : PlanFixture {
  Plans() {
    ddl(R"(CREATE TABLE a (k STRING NOT NULL, v INT) WITH ('connector' = 'datagen');
      CREATE TABLE b (k STRING NOT NULL, w INT) WITH ('connector' = 'datagen');
      CREATE TABLE out_p (k STRING, n BIGINT, rn BIGINT) WITH ('connector' = 'print'))");
  }
  LogicalPtr plan(const std::string& sql) {
    const auto& st = keep(sql);
    Binder binder(catalog, FunctionRegistry::builtins(), runner.session());
    return optimize(binder.bind_insert(*st.as<ast::Insert>()));
  }
};

void for_each_node(const LogicalNode& n, const std::function<void(const LogicalNode&)>& f) {
  f(n);
  for (const auto& i : n.inputs) for_each_node(*i, f);
}

TEST(PlanProperties, KeepsWhatTheOneOffDerivationsGive) {
  Plans f;
  LogicalPtr p = f.plan(
      "INSERT INTO out_p SELECT k, n, rn FROM (SELECT k, n, ROW_NUMBER() OVER (PARTITION BY k ORDER BY n DESC) AS rn "
      "FROM (SELECT a.k, COUNT(*) AS n FROM a JOIN b ON a.k = b.k GROUP BY a.k)) WHERE rn <= 3");
  PlanProperties props;
  int joins = 0, ranks = 0, nodes = 0;
  for_each_node(*p, [&](const LogicalNode& n) {
    ++nodes;
    const ChangelogMode& kept = props.changelog(n);
    EXPECT_EQ(&kept, &props.changelog(n)) << node_description(n);  // the same entry, not derived again
    EXPECT_EQ(kept.to_string(), changelog_mode(n).to_string()) << node_description(n);
    EXPECT_EQ(node_description(n, props), node_description(n));
    if (n.kind == LogicalKind::kJoin) {
      const auto& j = static_cast<const LogicalJoin&>(n);
      EXPECT_EQ(&props.join(j), &props.join(j));
      EXPECT_EQ(props.join(j).left_keys, analyze_join(j).left_keys);
      ++joins;
    }
    if (n.kind == LogicalKind::kRank) {
      const auto& r = static_cast<const LogicalRank&>(n);
      EXPECT_EQ(&props.rank(r), &props.rank(r));
      EXPECT_TRUE(props.rank(r).retract);  // a Top-N over the updating GROUP BY
      EXPECT_EQ(props.rank(r).retract, analyze_rank(r).retract);
      ++ranks;
    }
  });
  EXPECT_EQ(joins, 1);
  EXPECT_EQ(ranks, 1);
  EXPECT_GT(nodes, 5);
  EXPECT_EQ(props.changelog(*p).to_string(), "retract");
}

// A node that cannot take its input's updates raises its error each time it is asked.
TEST(PlanProperties, AnErrorIsRaisedEachTime) {
  Plans f;
  f.ddl("CREATE TABLE files (k STRING, n BIGINT) WITH ('connector' = 'filesystem', 'path' = '/o', 'format' = 'csv')");
  LogicalPtr p = f.plan("INSERT INTO files SELECT k, n FROM (SELECT k, COUNT(*) AS n FROM a GROUP BY k) ORDER BY n");
  PlanProperties props;
  const LogicalNode* sort = nullptr;
  for_each_node(*p, [&](const LogicalNode& n) {
    if (n.kind == LogicalKind::kSort) sort = &n;
  });
  ASSERT_NE(sort, nullptr);
  for (int i = 0; i < 2; ++i) {
    try {
      props.changelog(*sort);
      ADD_FAILURE() << "no error";
    } catch (const TranslationError& e) {
      EXPECT_STREQ(e.what(), "line 1, column 89: ORDER BY cannot consume updates, but its input produces them (GROUP BY "
                             "at line 1, column 77)");
    }
  }
  EXPECT_EQ(props.changelog(sort->input()).to_string(), "retract");
}

}  // namespace
}  // namespace clink::test
