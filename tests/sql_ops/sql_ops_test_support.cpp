#include "sql_ops_test_support.hpp"

#include <gtest/gtest.h>

#include "clink/api/two_phase_commit_sink.hpp"
#include "clink/registry/builtin_registry.hpp"
#include "clink/sql/common/time_zone.hpp"

namespace clink::test {

namespace {
std::mutex scripts_mu;
std::map<std::string, std::shared_ptr<Script>>& scripts() {
  static std::map<std::string, std::shared_ptr<Script>> m;
  return m;
}

// The scripted source playing the script's steps (copies of its batches), held by it.
std::unique_ptr<StreamOperator> test_source(const std::shared_ptr<Script>& s) {
  auto source = std::make_unique<ScriptedSource<ColumnBatch>>(std::shared_ptr<SourceControl>(s));
  for (const BatchStep& st : s->steps)
    source->then([st](Output& out) {
      if (st.batch) out.emit(std::make_unique<ColumnBatch>(*st.batch));
      if (st.watermark) out.emit_watermark(Watermark::at(*st.watermark));
    });
  return source;
}

class InjectorOperator final : public StreamOperator {
 public:
  explicit InjectorOperator(std::shared_ptr<Script> s) : s_(std::move(s)) {}
  void process_batch(int, BatchPtr b) override {
    s_->check();
    output().emit(std::move(b));
  }

 private:
  std::shared_ptr<Script> s_;
};

// Formats rows and hands them to an exactly-once collect sink.
class TestSink final : public StreamOperator {
 public:
  explicit TestSink(std::shared_ptr<Script> s) : inner_(std::make_unique<TwoPhaseCommitSinkOperator<std::string>>(s->sink)) {}
  int num_inputs() const override { return 1; }
  void open(RuntimeContext& ctx) override {
    StreamOperator::open(ctx);
    inner_->open(ctx);
  }
  void process_batch(int i, BatchPtr b) override {
    const auto& cb = sql::column_batch_cast(*b);
    auto lines = std::make_unique<Batch<std::string>>();
    for (std::size_t r = 0; r < cb.size(); ++r) lines->push(sql::format_row(cb, r, *sql::TimeZone::utc()), kNoEventTime);
    inner_->process_batch(i, std::move(lines));
  }
  void process_watermark(Watermark wm) override { inner_->process_watermark(wm); }
  void finish() override { inner_->finish(); }
  void snapshot_state(std::int64_t id) override { inner_->snapshot_state(id); }
  void notify_checkpoint_complete(std::int64_t id) override { inner_->notify_checkpoint_complete(id); }
  void close() override { inner_->close(); }

 private:
  std::unique_ptr<StreamOperator> inner_;
};

std::shared_ptr<Script> script_param(const OperatorSpecContext& ctx) { return script(ctx.params->at("script").get<std::string>()); }

}  // namespace

std::shared_ptr<Script> script(const std::string& name) {
  std::lock_guard lock(scripts_mu);
  return scripts().at(name);
}
void put_script(const std::string& name, std::shared_ptr<Script> s) {
  std::lock_guard lock(scripts_mu);
  scripts()[name] = std::move(s);
}

const OperatorRegistry& test_registry() {
  static const OperatorRegistry r = [] {
    OperatorRegistry reg = builtin_registry();
    reg.add(OperatorFactoryInfo{.name = "sql_test_source",
                                .description = "test: a script of ColumnBatches",
                                .num_inputs = 0,
                                .out_type = [](const OperatorSpecContext&) { return std::string(sql::kSqlRowType); },
                                .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
                                  auto s = script_param(ctx);
                                  return [s] { return test_source(s); };
                                }});
    reg.add(OperatorFactoryInfo{.name = "sql_test_injector",
                                .description = "test: fails once when armed",
                                .num_inputs = 1,
                                .out_type = [](const OperatorSpecContext&) { return std::string(sql::kSqlRowType); },
                                .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
                                  auto s = script_param(ctx);
                                  return [s] { return std::make_unique<InjectorOperator>(s); };
                                }});
    reg.add(OperatorFactoryInfo{.name = "sql_test_sink",
                                .description = "test: exactly-once collect of formatted rows",
                                .num_inputs = 1,
                                .out_type = [](const OperatorSpecContext&) { return std::string("none"); },
                                .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
                                  auto s = script_param(ctx);
                                  return [s] { return std::make_unique<TestSink>(s); };
                                }});
    return reg;
  }();
  return r;
}

}  // namespace clink::test
