#include "clink/sql/spec/sql_window_spec.hpp"

#include <nlohmann/json.hpp>

#include "clink/sql/spec/sql_op_spec.hpp"

namespace clink::sql {

using nlohmann::json;

SqlWindowSpec SqlWindowSpec::parse(const json& w, const Schema& input, const SqlOpParams& p) {
  if (!w.is_object()) p.fail("param 'window' must be an object, got " + w.dump());
  auto field_int = [&](const char* name, std::int64_t min) -> std::int64_t {
    if (!w.contains(name)) p.fail("param 'window' needs '" + std::string(name) + "'");
    const json& v = w.at(name);
    if (!v.is_number_integer()) p.fail("param 'window'." + std::string(name) + " must be an integer, got " + v.dump());
    auto x = v.get<std::int64_t>();
    if (x < min) p.fail("param 'window'." + std::string(name) + " must be >= " + std::to_string(min) + ", got " + std::to_string(x));
    return x;
  };
  SqlWindowSpec s;
  std::string kind = w.value("kind", "");
  std::vector<std::string> known;
  if (kind == "tumble") {
    s.kind = Kind::kTumble;
    s.size_ms = field_int("size_ms", 1);
    known = {"size_ms", "offset_ms"};
  } else if (kind == "hop") {
    s.kind = Kind::kHop;
    s.size_ms = field_int("size_ms", 1);
    s.slide_ms = field_int("slide_ms", 1);
    known = {"size_ms", "slide_ms", "offset_ms"};
  } else if (kind == "cumulate") {
    s.kind = Kind::kCumulate;
    s.size_ms = field_int("size_ms", 1);
    s.step_ms = field_int("step_ms", 1);
    if (s.size_ms % s.step_ms != 0)
      p.fail("param 'window': a CUMULATE window's size_ms (" + std::to_string(s.size_ms) +
             ") must be a multiple of its step_ms (" + std::to_string(s.step_ms) + ")");
    known = {"size_ms", "step_ms", "offset_ms"};
  } else if (kind == "session") {
    s.kind = Kind::kSession;
    s.gap_ms = field_int("gap_ms", 1);
    known = {"gap_ms"};
  } else {
    p.fail("param 'window'.kind must be one of tumble, hop, cumulate, session, got " + w.value("kind", json()).dump());
  }
  known.push_back("kind");
  known.push_back("time_column");
  known.push_back("proctime");
  known.push_back("attached");
  for (const auto& [k, v] : w.items()) {
    bool ok = false;
    for (const auto& n : known) ok = ok || n == k;
    if (!ok) p.fail("param 'window': field '" + k + "' does not apply to a " + kind + " window");
  }
  if (w.contains("offset_ms")) s.offset_ms = field_int("offset_ms", INT64_MIN);
  if (!w.contains("time_column")) p.fail("param 'window' needs 'time_column'");
  s.time_column = p.column(w.at("time_column"), input, "param 'window'.time_column");
  const LogicalType& t = input.type(s.time_column);
  if (!t.is(TypeKind::kTimestamp) && !t.is(TypeKind::kTimestampLtz))
    p.fail("param 'window'.time_column: column " + std::to_string(s.time_column) + " ('" + input.name(s.time_column) +
           "') is " + t.to_string() + ", a window needs a TIMESTAMP or TIMESTAMP_LTZ time attribute");
  s.ltz = t.is(TypeKind::kTimestampLtz);
  if (w.contains("proctime")) {
    if (!w.at("proctime").is_boolean()) p.fail("param 'window'.proctime must be true or false, got " + w.at("proctime").dump());
    s.proctime = w.at("proctime").get<bool>();
    if (s.proctime && !s.ltz)
      p.fail("param 'window'.proctime: the time column '" + input.name(s.time_column) + "' is " + t.to_string() +
             ", a processing-time attribute is TIMESTAMP_LTZ(3)");
  }
  if (w.contains("attached")) {
    if (!w.at("attached").is_boolean()) p.fail("param 'window'.attached must be true or false, got " + w.at("attached").dump());
    s.attached = w.at("attached").get<bool>();
    if (s.attached && (s.kind == Kind::kSession || s.proctime || s.ltz))
      p.fail("param 'window'.attached: only event-time TUMBLE, HOP and CUMULATE windows over TIMESTAMP columns attach");
  }
  try {
    s.assigner();  // validates size / offset combinations
  } catch (const ClinkError& e) {
    p.fail(std::string("param 'window': ") + e.what());
  }
  return s;
}

namespace {

// A row that carries its window: its time is the window's end, the window is the one
// of the spec (TUMBLE / HOP / CUMULATE) ending there.
class AttachedEventTimeWindows final : public WindowAssigner {
 public:
  explicit AttachedEventTimeWindows(const SqlWindowSpec& s) : spec_(s), inner_(plain(s)) {}
  std::unique_ptr<WindowAssigner> clone() const override { return std::make_unique<AttachedEventTimeWindows>(spec_); }
  void assign(EventTime end, std::int64_t, std::vector<TimeWindow>& out) override {
    std::int64_t start = end - spec_.size_ms;
    if (spec_.kind == SqlWindowSpec::Kind::kCumulate) {
      const std::int64_t t = end - 1 - spec_.offset_ms;
      start = t - ((t % spec_.size_ms) + spec_.size_ms) % spec_.size_ms + spec_.offset_ms;
    }
    out.push_back(TimeWindow{start, end});
  }
  bool is_event_time() const override { return true; }
  TriggerPtr default_trigger() const override { return inner_->default_trigger(); }
  std::string describe() const override { return "Attached" + inner_->describe(); }

 private:
  static std::unique_ptr<WindowAssigner> plain(SqlWindowSpec s) {
    s.attached = false;
    return s.assigner();
  }
  SqlWindowSpec spec_;
  std::unique_ptr<WindowAssigner> inner_;
};

}  // namespace

std::unique_ptr<WindowAssigner> SqlWindowSpec::assigner() const {
  if (attached) return std::make_unique<AttachedEventTimeWindows>(*this);
  if (proctime) {
    switch (kind) {
      case Kind::kTumble: return TumblingProcessingTimeWindows::of(size_ms, offset_ms).clone();
      case Kind::kHop: return SlidingProcessingTimeWindows::of(size_ms, slide_ms, offset_ms).clone();
      case Kind::kCumulate: return CumulativeProcessingTimeWindows::of(step_ms, size_ms, offset_ms).clone();
      case Kind::kSession: return ProcessingTimeSessionWindows::with_gap(gap_ms).clone();
    }
  }
  switch (kind) {
    case Kind::kTumble: return TumblingEventTimeWindows::of(size_ms, offset_ms).clone();
    case Kind::kHop: return SlidingEventTimeWindows::of(size_ms, slide_ms, offset_ms).clone();
    case Kind::kCumulate: return CumulativeEventTimeWindows::of(step_ms, size_ms, offset_ms).clone();
    case Kind::kSession: return EventTimeSessionWindows::with_gap(gap_ms).clone();
  }
  return nullptr;
}

std::string SqlWindowSpec::describe() const {
  switch (kind) {
    case Kind::kTumble: return "TUMBLE(size=" + std::to_string(size_ms) + "ms, offset=" + std::to_string(offset_ms) + "ms)";
    case Kind::kHop:
      return "HOP(slide=" + std::to_string(slide_ms) + "ms, size=" + std::to_string(size_ms) + "ms, offset=" +
             std::to_string(offset_ms) + "ms)";
    case Kind::kCumulate:
      return "CUMULATE(step=" + std::to_string(step_ms) + "ms, size=" + std::to_string(size_ms) + "ms, offset=" +
             std::to_string(offset_ms) + "ms)";
    case Kind::kSession: return "SESSION(gap=" + std::to_string(gap_ms) + "ms)";
  }
  return "";
}

std::int64_t SqlWindowSpec::assign_time(std::int64_t micros) const {
  return micros_to_millis(ltz ? zone->utc_micros_to_local(micros) : micros);
}

EventTime SqlWindowSpec::shift_watermark(EventTime wm) const {
  if (!ltz || wm == kMinEventTime || wm == kMaxEventTime) return wm;
  if (wm > INT64_MAX / 1000 - 86400000 || wm < INT64_MIN / 1000 + 86400000) return wm;
  return micros_to_millis(zone->utc_micros_to_local(wm * 1000));
}

EventTime SqlWindowSpec::window_time_ms(const TimeWindow& w) const {
  const EventTime t = w.max_timestamp();
  if (!ltz || t > INT64_MAX / 1000 - 86400000 || t < INT64_MIN / 1000 + 86400000) return t;
  return micros_to_millis(zone->local_micros_to_utc(t * 1000));
}

void SqlWindowSpec::append_window(ColumnBatch& out, std::size_t c, const TimeWindow& w) const {
  out.column(c).append<std::int64_t>(w.start * 1000);
  out.column(c + 1).append<std::int64_t>(w.end * 1000);
  out.column(c + 2).append<std::int64_t>(window_time_ms(w) * 1000);
}

void append_window_fields(std::vector<RowField>& fields, bool ltz) {
  fields.push_back({"window_start", LogicalType::timestamp(3).not_null()});
  fields.push_back({"window_end", LogicalType::timestamp(3).not_null()});
  fields.push_back({"window_time", (ltz ? LogicalType::timestamp_ltz(3) : LogicalType::timestamp(3)).not_null()});
}

}  // namespace clink::sql
