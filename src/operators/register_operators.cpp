// The built-in spec operators and key selectors, by name. Each builds the same typed
// operator the DataStream API uses (include/clink/operators/), so a JobGraphSpec and a
// C++ job run one implementation.
#include <memory>
#include <string>

#include "clink/operators/register_operators.hpp"

#include "clink/api/spec_types.hpp"
#include "clink/core/error.hpp"
#include "clink/operators/count_operator.hpp"
#include "clink/operators/event_time_count.hpp"
#include "clink/operators/key_selectors.hpp"
#include "clink/operators/tokenize.hpp"
#include "clink/operators/watermark_assigner_operator.hpp"
#include "clink/runtime/op_params.hpp"
#include "clink/runtime/operator_registry.hpp"
#include "clink/runtime/partitioner.hpp"

namespace clink {
namespace {

std::string fixed_type(const char* t) { return t; }

void add_tokenize(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "tokenize",
      .description =
          "string -> string: lower-cases each line and splits it on non-alphanumeric characters, "
      "dropping empty tokens",
      .num_inputs = 1,
      .out_type = [](const OperatorSpecContext&) { return fixed_type("string"); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        OpParams p(ctx, "tokenize", {});
        p.input_type(0, {"string"});
        return [] { return std::make_unique<TokenizeOperator>(Tokenizer{}); };
      }});
}

void add_count(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "count",
      .description =
          "string or event -> word_count: count per key (the string / event.key); "
      "emit: final (default, once per key at end of input) or every (running count per record)",
      .num_inputs = 1,
      .out_type = [](const OperatorSpecContext&) { return fixed_type("word_count"); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        OpParams p(ctx, "count", {"emit"});
        const std::string& in = p.input_type(0, {"string", "event"});
        CountEmit emit = p.get_choice("emit", "final", {"final", "every"}) == "every" ? CountEmit::kEvery
                                                                                     : CountEmit::kFinal;
        if (in == "string") return [emit] { return std::make_unique<CountOperator<std::string>>(emit); };
        return [emit] { return std::make_unique<CountOperator<Event>>(emit); };
      }});
}

void add_watermark_assigner(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "watermark_assigner",
      .description =
          "pass-through generating watermarks after each batch: strategy bounded (default, "
      "maxSeenTimestamp - out_of_orderness_ms - 1), monotonic (maxSeenTimestamp - 1) or partition_aware "
      "(bounded, min over source partitions); idleness_ms > 0 marks the stream idle after that long "
      "without records; alignment_group (with max_drift_ms, max_wait_ms) holds this source back while its "
      "watermark runs more than max_drift_ms ahead of the group's slowest member",
      .num_inputs = 1,
      .out_type = [](const OperatorSpecContext& ctx) { return ctx.input_types.empty() ? std::string() : ctx.input_types[0]; },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        OpParams p(ctx, "watermark_assigner",
                     {"strategy", "out_of_orderness_ms", "idleness_ms", "alignment_group", "max_drift_ms", "max_wait_ms"});
        const std::string& in = p.input_type(0, {"event", "int64", "string", "word_count", "window_count"});
        std::string kind = p.get_choice("strategy", "bounded", {"bounded", "monotonic", "partition_aware"});
        std::int64_t bound = p.get_int("out_of_orderness_ms", 0, 0);
        if (kind == "monotonic" && p.has("out_of_orderness_ms"))
          p.fail("param 'out_of_orderness_ms' does not apply to strategy 'monotonic'");
        std::int64_t idleness = p.get_int("idleness_ms", 0, 0);
        WatermarkAlignment align{p.get_choice("alignment_group", "", {}), p.get_int("max_drift_ms", 0, 0),
                                 p.get_int("max_wait_ms", 1000, 1)};
        if (!align.enabled() && (p.has("max_drift_ms") || p.has("max_wait_ms")))
          p.fail("params 'max_drift_ms' and 'max_wait_ms' need 'alignment_group'");
        return dispatch_spec_type(in, [kind, bound, idleness, align]<class T>() -> OperatorBuilder {
          return [kind, bound, idleness, align] {
            std::unique_ptr<WatermarkStrategy<T>> s;
            if (kind == "monotonic") s = std::make_unique<MonotonicWatermarkStrategy<T>>();
            else if (kind == "partition_aware") s = std::make_unique<PartitionAwareBoundedOutOfOrdernessStrategy<T>>(bound);
            else s = std::make_unique<BoundedOutOfOrdernessStrategy<T>>(bound);
            if (idleness > 0) s->with_idleness(idleness);
            if (align.enabled()) s->with_watermark_alignment(align.group, align.max_drift_ms, align.max_wait_ms);
            return std::make_unique<WatermarkAssignerOperator<T>>(*s);
          };
        });
      }});
}

void add_event_time_count(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "event_time_count",
      .description =
          "event -> window_count: events per key per epoch-aligned bucket of size_ms, emitted as "
      "(key, bucket start, count) when the watermark passes the bucket end - 1",
      .num_inputs = 1,
      .out_type = [](const OperatorSpecContext&) { return fixed_type("window_count"); },
      .make = [](const OperatorSpecContext& ctx) -> OperatorBuilder {
        OpParams p(ctx, "event_time_count", {"size_ms"});
        p.input_type(0, {"event"});
        std::int64_t size = p.require_int("size_ms", 1);
        return [size] { return make_event_time_count_operator(size); };
      }});
}

template <class T, class KeyFn>
void add_key(OperatorRegistry& r, const char* record_type) {
  r.add_key_selector(KeySelectorInfo{KeyFn::kName, record_type, hash_partitioner_factory<T>(KeyFn{})});
}

}  // namespace

void register_builtin_operators(OperatorRegistry& registry) {
  add_tokenize(registry);
  add_count(registry);
  add_watermark_assigner(registry);
  add_event_time_count(registry);
  add_key<std::string, StringSelfKey>(registry, "string");
  add_key<Event, EventKey>(registry, "event");
  add_key<WordCount, WordCountWord>(registry, "word_count");
}

}  // namespace clink
