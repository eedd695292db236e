// The process table functions clink ships as examples (docs/process-table-functions.md),
// ports of Flink's documentation examples, registered under class names so that
// `CREATE FUNCTION f AS 'clink.examples.ptf.GreetingWithMemory'` names them.
#include <cstring>
#include <optional>
#include <string>

#include "clink/sql/function/process_table_function.hpp"

namespace clink::sql {

namespace {

constexpr std::int64_t kMinuteMs = 60'000;

// Flink's Greeting: row semantics, no state: "Hello <name>!" per row.
class Greeting final : public ProcessTableFunction {
 public:
  void eval(PtfContext& ctx, const PtfRow& in, const PtfArgs&) override {
    ctx.out().add_row();
    ctx.out().set_string(0, "Hello " + in.text_at(in.index_of("name")) + "!");
  }
};

// Flink's TableFilter: row semantics and a scalar argument: the rows whose `score`
// exceeds the threshold, as (threshold, score).
class TableFilter final : public ProcessTableFunction {
 public:
  void eval(PtfContext& ctx, const PtfRow& in, const PtfArgs& args) override {
    const std::size_t c = in.index_of("score");
    if (in.is_null(c) || args.is_null(0)) return;
    const std::int64_t score = in.bigint_at(c);
    if (score <= args.bigint_at(0)) return;
    ctx.out().add_row();
    ctx.out().set_int(0, static_cast<std::int32_t>(args.bigint_at(0)));
    ctx.out().set_bigint(1, score);
  }
};

// Flink's GreetingWithMemory: set semantics, a counter per partition in value state.
class GreetingWithMemory final : public ProcessTableFunction {
 public:
  void eval(PtfContext& ctx, const PtfRow& in, const PtfArgs&) override {
    auto counter = ctx.value_state("counter");
    const std::int64_t n = counter.get_int64().value_or(0) + 1;
    counter.set_int64(n);
    ctx.out().add_row();
    ctx.out().set_string(0, "Hello " + in.text_at(in.index_of("name")) + ", your " + std::to_string(n) + " time?");
  }
};

// Flink's GreetingWithFollowUp: greets each row and follows up one minute (event time)
// later with an unnamed timer per row.
class GreetingWithFollowUp final : public ProcessTableFunction {
 public:
  void eval(PtfContext& ctx, const PtfRow& in, const PtfArgs&) override {
    const std::string name = in.text_at(in.index_of("name"));
    ctx.value_state("name").set(name);
    auto counter = ctx.value_state("counter");
    const std::int64_t n = counter.get_int64().value_or(0) + 1;
    counter.set_int64(n);
    ctx.out().add_row();
    ctx.out().set_string(0, "Hello " + name + ", your " + std::to_string(n) + " time?");
    if (auto t = ctx.time()) ctx.register_on_time(*t + kMinuteMs);
  }
  void on_timer(PtfContext& ctx, const PtfArgs&) override {
    ctx.out().add_row();
    ctx.out().set_string(0, "Hello " + ctx.value_state("name").get().value_or("") +
                                ", I hope you enjoyed your stay! Please let us know if there's anything we could "
                                "have done better.");
  }
};

// Flink's PingLaterFunction: "ping" one minute (event time) after a partition's last row:
// the named timer is replaced by every row, so only inactivity fires it.
class PingLater final : public ProcessTableFunction {
 public:
  void eval(PtfContext& ctx, const PtfRow&, const PtfArgs&) override {
    ctx.register_on_time("ping", *ctx.time() + kMinuteMs);
  }
  void on_timer(PtfContext& ctx, const PtfArgs&) override {
    ctx.out().add_row();
    ctx.out().set_string(0, "ping");
  }
};

// A session per partition: collects the values of column `col` until no row came for
// `gap` (a named event-time timer), then emits the session's row count, distinct values
// and values in arrival order, and clears everything. Uses all three kinds of state.
class SessionSummary final : public ProcessTableFunction {
 public:
  void eval(PtfContext& ctx, const PtfRow& in, const PtfArgs& args) override {
    const std::string v = in.text_at(in.index_of(args.string_at(0)));
    ctx.list_state("values").add(v);
    auto seen = ctx.map_state("distinct");
    if (!seen.get(v)) seen.put(v, "");
    auto start = ctx.value_state("start");
    if (!start.get_int64()) start.set_int64(*ctx.time());
    ctx.register_on_time("timeout", *ctx.time() + args.bigint_at(1));
  }
  void on_timer(PtfContext& ctx, const PtfArgs&) override {
    const auto values = ctx.list_state("values").get();
    std::int64_t distinct = 0;
    ctx.map_state("distinct").for_each([&](std::string_view, std::string_view) {
      ++distinct;
      return true;
    });
    std::string joined;
    for (const auto& v : values) joined += (joined.empty() ? "" : ",") + v;
    ctx.out().add_row();
    ctx.out().set_bigint(0, *ctx.value_state("start").get_int64());
    ctx.out().set_bigint(1, static_cast<std::int64_t>(values.size()));
    ctx.out().set_bigint(2, distinct);
    ctx.out().set_string(3, joined);
    ctx.clear_all();
  }
};

template <class F>
std::function<std::unique_ptr<ProcessTableFunction>()> factory() {
  return [] { return std::make_unique<F>(); };
}

// Row semantics with PASS_COLUMNS_THROUGH: the input row's columns, then its score's
// level ('high' above 100, 'low', NULL without a score).
class ScoreLevel final : public ProcessTableFunction {
 public:
  void eval(PtfContext& ctx, const PtfRow& in, const PtfArgs&) override {
    const std::size_t c = in.index_of("score");
    ctx.out().add_row();
    if (!in.is_null(c)) ctx.out().set_string(0, in.bigint_at(c) > 100 ? "high" : "low");
  }
};

// Set semantics with PASS_COLUMNS_THROUGH and value state: the input row's columns, then
// its position in its partition (1, 2, ...).
class Enumerate final : public ProcessTableFunction {
 public:
  void eval(PtfContext& ctx, const PtfRow&, const PtfArgs&) override {
    auto seen = ctx.value_state("seen");
    const std::int64_t n = seen.get_int64().value_or(0) + 1;
    seen.set_int64(n);
    ctx.out().add_row();
    ctx.out().set_bigint(0, n);
  }
};

// SUPPORT_UPDATES: an updating table as an append-only one, each change a row with its
// flag (as Flink's changelog example): the flag, then the row's values.
class Changes final : public ProcessTableFunction {
 public:
  void eval(PtfContext& ctx, const PtfRow& in, const PtfArgs&) override {
    std::string values;
    for (std::size_t i = 0; i < in.size(); ++i) values += (i ? " " : "") + in.text_at(i);
    ctx.out().add_row();
    ctx.out().set_string(0, row_kind_short_string(in.kind()));
    ctx.out().set_string(1, values);
  }
};

// Flink's GreetingWithLastPurchase (its multiple-tables example, a custom join): rows of
// `visit` and `purchase` share the key's last purchased item in value state. Which input
// a key's next row comes from is up to the runtime (Flink's race warning).
class GreetingWithLastPurchase final : public ProcessTableFunction {
 public:
  void eval(PtfContext& ctx, const PtfRow& in, const PtfArgs&) override {
    auto last = ctx.value_state("lastItem");
    if (in.table() == 1) {  // purchase
      last.set(in.text_at(in.index_of("item")));
      return;
    }
    const std::optional<std::string> item = last.get();
    const std::string name = in.text_at(in.index_of("name"));
    ctx.out().add_row();
    ctx.out().set_string(0, item ? "Hello " + name + ", here to buy " + *item + " again?"
                                 : "Hello " + name + ", let me know if I can help!");
  }
};

// A time-based join of two tables (Flink's advice for multiple tables: wait for the
// watermark, so the result does not depend on which input a row arrives on first): an
// order (`orders`: amount) is due `timeout` after its time; at that deadline the payments
// (`payments`: amount) of its key up to the deadline settle it as `paid` or `unpaid`.
// Payments may come before the order. State and the deadline timer are per key, shared
// by both tables.
class PaymentCheck final : public ProcessTableFunction {
 public:
  void eval(PtfContext& ctx, const PtfRow& in, const PtfArgs& args) override {
    const std::size_t amount = in.index_of("amount");
    if (in.is_null(amount) || !ctx.time()) return;
    if (in.table() == 0) {
      ctx.value_state("due").set_int64(in.bigint_at(amount));
      ctx.register_on_time("deadline", *ctx.time() + args.bigint_at(0));
      return;
    }
    std::string payment(16, '\0');  // time, amount: little-endian int64s
    const std::int64_t fields[2] = {*ctx.time(), in.bigint_at(amount)};
    std::memcpy(payment.data(), fields, 16);
    ctx.list_state("payments").add(payment);
  }
  void on_timer(PtfContext& ctx, const PtfArgs&) override {
    std::int64_t paid = 0;
    for (const std::string& p : ctx.list_state("payments").get()) {
      std::int64_t fields[2];
      std::memcpy(fields, p.data(), 16);
      if (fields[0] <= *ctx.time()) paid += fields[1];
    }
    const std::int64_t due = ctx.value_state("due").get_int64().value_or(0);
    ctx.out().add_row();
    ctx.out().set_string(0, paid >= due ? "paid" : "unpaid");
    ctx.out().set_bigint(1, due);
    ctx.out().set_bigint(2, paid);
    ctx.clear_all();
  }
};

}  // namespace

void register_example_ptfs(ProcessTableFunctionRegistry& r) {
  const LogicalType str = LogicalType::string();
  {
    PtfSignature s;
    s.semantics = PtfTableSemantics::kRow;
    s.output = {{"EXPR$0", str}};
    r.add("clink.examples.ptf.Greeting", s, factory<Greeting>());
  }
  {
    PtfSignature s;
    s.semantics = PtfTableSemantics::kRow;
    s.params = {{"threshold", LogicalType::int_type()}};
    s.output = {{"threshold", LogicalType::int_type()}, {"score", LogicalType::bigint()}};
    r.add("clink.examples.ptf.TableFilter", s, factory<TableFilter>());
  }
  {
    PtfSignature s;
    s.output = {{"EXPR$0", str}};
    s.state = {{"counter", PtfStateKind::kValue}};
    r.add("clink.examples.ptf.GreetingWithMemory", s, factory<GreetingWithMemory>());
  }
  {
    PtfSignature s;
    s.output = {{"EXPR$0", str}};
    s.state = {{"name", PtfStateKind::kValue}, {"counter", PtfStateKind::kValue}};
    r.add("clink.examples.ptf.GreetingWithFollowUp", s, factory<GreetingWithFollowUp>());
  }
  {
    PtfSignature s;
    s.require_on_time = true;
    s.output = {{"EXPR$0", str}};
    r.add("clink.examples.ptf.PingLater", s, factory<PingLater>());
  }
  {
    PtfSignature s;
    s.require_on_time = true;
    s.params = {{"col", str}, {"gap", LogicalType::interval_day_time()}};
    s.output = {{"session_start_ms", LogicalType::bigint()},
                {"events", LogicalType::bigint()},
                {"distinct_values", LogicalType::bigint()},
                {"vals", str}};
    s.state = {{"values", PtfStateKind::kList}, {"distinct", PtfStateKind::kMap}, {"start", PtfStateKind::kValue}};
    r.add("clink.examples.ptf.SessionSummary", s, factory<SessionSummary>());
  }
  {
    PtfSignature s;
    s.semantics = PtfTableSemantics::kRow;
    s.pass_columns_through = true;
    s.output = {{"level", str}};
    r.add("clink.examples.ptf.ScoreLevel", s, factory<ScoreLevel>());
  }
  {
    PtfSignature s;
    s.pass_columns_through = true;
    s.output = {{"n", LogicalType::bigint()}};
    s.state = {{"seen", PtfStateKind::kValue}};
    r.add("clink.examples.ptf.Enumerate", s, factory<Enumerate>());
  }
  {
    PtfSignature s;
    s.supports_updates = true;
    s.output = {{"flag", str}, {"vals", str}};
    r.add("clink.examples.ptf.Changes", s, factory<Changes>());
  }
  {
    PtfSignature s;
    s.table_arg = "visit";
    s.more_table_args = {"purchase"};
    s.output = {{"EXPR$0", str}};
    s.state = {{"lastItem", PtfStateKind::kValue}};
    r.add("clink.examples.ptf.GreetingWithLastPurchase", s, factory<GreetingWithLastPurchase>());
  }
  {
    PtfSignature s;
    s.table_arg = "orders";
    s.more_table_args = {"payments"};
    s.require_on_time = true;
    s.params = {{"timeout", LogicalType::interval_day_time()}};
    s.output = {{"status", str}, {"due", LogicalType::bigint()}, {"paid", LogicalType::bigint()}};
    s.state = {{"due", PtfStateKind::kValue}, {"payments", PtfStateKind::kList}};
    r.add("clink.examples.ptf.PaymentCheck", s, factory<PaymentCheck>());
  }
}

}  // namespace clink::sql
