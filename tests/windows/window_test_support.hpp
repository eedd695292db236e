#pragma once
// Window test helpers: Flink's test records (key, value) with a sum reducer and a sum
// aggregate, a scripted source, and a probe logging emissions and watermarks in order.
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../time/time_test_support.hpp"
#include "clink/api/windowed_stream.hpp"
#include "clink/connectors/collect_sink.hpp"

namespace clink::test {

using KV = std::pair<std::string, std::int64_t>;

struct KeyOf {
  std::string operator()(const KV& v) const { return v.first; }
};
struct SumReducer {
  KV operator()(const KV& a, const KV& b) const { return KV{a.first, a.second + b.second}; }
};
// Sums the values (AggregateFunction with merge, so it can slice and merge sessions).
struct SumAgg final : AggregateFunction<KV, std::int64_t, std::int64_t> {
  std::int64_t create_accumulator() const override { return 0; }
  void add(const KV& v, std::int64_t& acc) const override { acc += v.second; }
  std::int64_t get_result(const std::int64_t& acc) const override { return acc; }
  void merge(std::int64_t& acc, const std::int64_t& o) const override { acc += o; }
  void retract(std::int64_t& acc, const std::int64_t& o) const { acc -= o; }  // invertible
};
struct CountAgg final : AggregateFunction<KV, std::int64_t, std::int64_t> {
  std::int64_t create_accumulator() const override { return 0; }
  void add(const KV&, std::int64_t& acc) const override { ++acc; }
  std::int64_t get_result(const std::int64_t& acc) const override { return acc; }
  void merge(std::int64_t& acc, const std::int64_t& o) const override { acc += o; }
  void retract(std::int64_t& acc, const std::int64_t& o) const { acc -= o; }  // invertible
};

// Flink's SessionWindowFunction: ("key-sum", start, end) over all elements.
struct SessionFn final : ProcessWindowFunction<KV, std::tuple<std::string, std::int64_t, std::int64_t>, std::string> {
  void process(const std::string& key, Context& ctx, const WindowElements<KV>& elements,
               Collector<std::tuple<std::string, std::int64_t, std::int64_t>>& out) override {
    std::int64_t sum = 0;
    for (const auto& e : elements) sum += e.second;
    out.collect({key + "-" + std::to_string(sum), ctx.window().start, ctx.window().end});
  }
};
// The reduced value with its window: Flink's ReducedSessionWindowFunction.
struct ReducedSessionFn final
    : ProcessWindowFunction<KV, std::tuple<std::string, std::int64_t, std::int64_t>, std::string> {
  void process(const std::string& key, Context& ctx, const WindowElements<KV>& elements,
               Collector<std::tuple<std::string, std::int64_t, std::int64_t>>& out) override {
    out.collect({key + "-" + std::to_string(elements[0].second), ctx.window().start, ctx.window().end});
  }
};
// Lists the elements (values in order) with the pane: "key [s,e) v1,v2 PANE".
struct ListFn final : ProcessWindowFunction<KV, std::string, std::string> {
  void process(const std::string& key, Context& ctx, const WindowElements<KV>& elements,
               Collector<std::string>& out) override {
    std::string s = key + " ";
    to_string_into(ctx.window(), s);
    s += " ";
    for (std::size_t i = 0; i < elements.size(); ++i) s += (i ? "," : "") + std::to_string(elements[i].second);
    s += " ";
    to_string_into(ctx.pane(), s);
    out.collect(s);
  }
};

inline KeyedStream<KV, std::string, KeyOf> keyed(DataStream<KV> s) { return s.key_by(KeyOf{}); }

// A source that plays `script` (records with timestamps, watermarks) then ends.
inline DataStream<KV> source(StreamExecutionEnvironment& env, std::function<void(ScriptedSource<KV>&)> script) {
  return scripted<KV>(env, std::move(script));
}

}  // namespace clink::test
