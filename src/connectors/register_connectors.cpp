// The built-in connectors as spec factories: datagen, file_source, file_sink, print,
// blackhole. Each builds the same Source/Sink the DataStream API uses. Sinks are
// generic: they are instantiated for their input's record type.
#include <limits>
#include <memory>
#include <string>

#include "clink/connectors/register_connectors.hpp"

#include "clink/api/sink.hpp"
#include "clink/api/source.hpp"
#include "clink/api/spec_types.hpp"
#include "clink/api/two_phase_commit_sink.hpp"
#include "clink/connectors/blackhole_sink.hpp"
#include "clink/connectors/datagen.hpp"
#include "clink/connectors/file_sink.hpp"
#include "clink/connectors/file_source.hpp"
#include "clink/connectors/print_sink.hpp"
#include "clink/runtime/op_params.hpp"
#include "clink/runtime/operator_registry.hpp"

namespace clink {
namespace {

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

template <class T>
OperatorBuilder source_builder(std::shared_ptr<const Source<T>> source) {
  return [source] { return std::make_unique<ReaderSourceOperator<T>>(source); };
}
template <class T>
OperatorBuilder sink_builder(std::shared_ptr<const Sink<T>> sink) {
  return [sink] { return std::make_unique<SinkOperator<T>>(sink); };
}
template <class T>
OperatorBuilder sink_builder(std::shared_ptr<const TransactionalSink<T>> sink) {
  return [sink] { return std::make_unique<TwoPhaseCommitSinkOperator<T>>(sink); };
}

// A string param that must be present.
std::string require_string(const OpParams& p, const std::string& name) {
  if (!p.has(name)) p.fail("missing required param '" + name + "'");
  return p.get_choice(name, "", {});
}

std::string input_or_empty(const OperatorSpecContext& ctx) {
  return ctx.input_types.empty() ? std::string() : ctx.input_types[0];
}

// ---- datagen ----------------------------------------------------------------------

OpParams datagen_params(const OperatorSpecContext& ctx) {
  return OpParams(ctx, "datagen",
                    {"kind", "type", "start", "end", "number_of_rows", "key_count", "rows_per_second",
                     "event_time_start_ms", "event_time_step_ms", "seed"});
}

OperatorBuilder make_datagen(const OperatorSpecContext& ctx) {
  OpParams p = datagen_params(ctx);
  DatagenConfig c;
  c.kind = p.get_choice("kind", "sequence", {"sequence", "random"}) == "random" ? DatagenKind::kRandom
                                                                                : DatagenKind::kSequence;
  std::string type = p.get_choice("type", "int64", {"int64", "event"});
  c.start = p.get_int("start", 0);
  if (c.kind == DatagenKind::kSequence) {
    c.end = p.require_int("end", c.start);
    if (p.has("number_of_rows") || p.has("seed")) p.fail("params 'number_of_rows' and 'seed' apply to kind random only");
  } else {
    c.end = p.get_int("end", kInt64Max, c.start);
    c.number_of_rows = p.get_int("number_of_rows", -1, -1);
    c.seed = static_cast<std::uint64_t>(p.get_int("seed", 0));
  }
  c.options.rows_per_second = static_cast<double>(p.get_int("rows_per_second", 0, 0));
  if (p.has("event_time_start_ms")) c.options.event_time_start_ms = p.get_int("event_time_start_ms", 0, kNoEventTime + 1);
  c.options.event_time_step_ms = p.get_int("event_time_step_ms", 1, 0);
  std::int64_t key_count = p.get_int("key_count", 10, 1);
  if (type == "event") return source_builder<Event>(std::make_shared<DatagenSource<Event>>(c, EventGenerator{key_count}));
  if (p.has("key_count")) p.fail("param 'key_count' applies to type event only");
  return source_builder<std::int64_t>(std::make_shared<DatagenSource<std::int64_t>>(c, DefaultGenerator<std::int64_t>{}));
}

// ---- file_source ------------------------------------------------------------------

OpParams file_source_params(const OperatorSpecContext& ctx) {
  return OpParams(ctx, "file_source", {"path", "format", "type", "on_error"});
}

const std::vector<std::string> kJsonSourceTypes = {"int64", "string", "event", "word_count", "window_count",
                                                   "dead_letter"};

// text reads strings; json reads the named type (required: the lines do not say).
std::string file_source_type(const OpParams& p) {
  if (p.get_choice("format", "text", {"text", "json"}) == "text") return p.get_choice("type", "string", {"string"});
  if (!p.has("type")) p.fail("missing required param 'type' for format json");
  return p.get_choice("type", "", kJsonSourceTypes);
}

OperatorBuilder make_file_source(const OperatorSpecContext& ctx) {
  OpParams p = file_source_params(ctx);
  std::string path = require_string(p, "path");
  LineFormat format = parse_line_format(p.get_choice("format", "text", {"text", "json"}));
  FileSourceOptions options;
  options.on_error = parse_on_error(p.get_choice("on_error", "fail", {"fail", "dead_letter"}));
  return dispatch_spec_type(file_source_type(p), [&]<class T>() -> OperatorBuilder {
    if constexpr (JsonDecodable<T>) {
      return source_builder<T>(FileSource<T>::of(path, format, options));
    } else {
      p.fail("cannot read " + type_name<T>() + " records");
    }
  });
}

// ---- sinks ------------------------------------------------------------------------

OperatorBuilder make_file_sink(const OperatorSpecContext& ctx) {
  OpParams p(ctx, "file_sink", {"path", "format"});
  std::string path = require_string(p, "path");
  LineFormat format = parse_line_format(p.get_choice("format", "text", {"text", "json"}));
  return dispatch_spec_type(p.input_type(0, {"string", "int64", "event", "word_count", "window_count", "dead_letter"}),
                            [&]<class T>() {
                              return sink_builder<T>(std::shared_ptr<const TransactionalSink<T>>(
                                  std::make_shared<FileSink<T>>(path, format)));
                            });
}

OperatorBuilder make_print(const OperatorSpecContext& ctx) {
  OpParams p(ctx, "print", {"target", "prefix"});
  PrintTarget target = p.get_choice("target", "stdout", {"stdout", "stderr"}) == "stderr" ? PrintTarget::kStderr
                                                                                       : PrintTarget::kStdout;
  std::string prefix = p.get_choice("prefix", "", {});
  return dispatch_spec_type(p.input_type(0, {"string", "int64", "event", "word_count", "window_count", "dead_letter"}),
                            [&]<class T>() { return sink_builder<T>(std::make_shared<PrintSink<T>>(target, prefix)); });
}

OperatorBuilder make_blackhole(const OperatorSpecContext& ctx) {
  OpParams p(ctx, "blackhole", {});
  return dispatch_spec_type(p.input_type(0, {"string", "int64", "event", "word_count", "window_count", "dead_letter"}),
                            [&]<class T>() { return sink_builder<T>(std::make_shared<BlackholeSink<T>>()); });
}

}  // namespace

void register_builtin_connectors(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "datagen",
      .description =
          "source of int64 or event: kind sequence (start..end, split across subtasks) or random (seeded, "
          "number_of_rows or unbounded, values in start..end); rows_per_second limits the whole source; "
          "event_time_start_ms/event_time_step_ms stamp row k with start + k * step; event key = \"k\" + n % key_count",
      .num_inputs = 0,
      .out_type = [](const OperatorSpecContext& ctx) { return datagen_params(ctx).get_choice("type", "int64", {"int64", "event"}); },
      .make = make_datagen});
  r.add(OperatorFactoryInfo{
      .name = "file_source",
      .description =
          "source reading a file or a directory (sorted, skipping names starting with '.' or '_') line by line; "
          "format text (string) or json (type int64|string|event|word_count|...); on_error fail (default) or "
          "dead_letter (malformed lines go to side output 'dead-letter')",
      .num_inputs = 0,
      .out_type = [](const OperatorSpecContext& ctx) { return file_source_type(file_source_params(ctx)); },
      .make = make_file_source,
      .side_outputs = {{kDeadLetterTag, "dead_letter"}}});
  r.add(OperatorFactoryInfo{
      .name = "file_sink",
      .description =
          "exactly-once sink writing one line per record, format text or json; path is a directory of "
          "part-<subtask>-<n>.<ext> files, one per checkpoint interval that received records, each appearing "
          "atomically when its checkpoint completes (or at end of input); without checkpoints, at parallelism 1 "
          "a path not ending in '/' is the single file written",
      .num_inputs = 1,
      .out_type = input_or_empty,
      .make = make_file_sink});
  r.add(OperatorFactoryInfo{
      .name = "print",
      .description = "sink printing each record's text form to stdout or stderr (target); \"<subtask>> \" prefix "
                     "at parallelism > 1",
      .num_inputs = 1,
      .out_type = input_or_empty,
      .make = make_print});
  r.add(OperatorFactoryInfo{
      .name = "blackhole",
      .description = "sink discarding its input",
      .num_inputs = 1,
      .out_type = input_or_empty,
      .make = make_blackhole});
}

}  // namespace clink
