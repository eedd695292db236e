#include "clink/connectors/sql/source_watermarks.hpp"

#include <nlohmann/json.hpp>

#include "clink/connectors/sql/sql_connector_params.hpp"
#include "clink/core/error.hpp"
#include "clink/sql/common/time_zone.hpp"
#include "clink/sql/expression/expr_compiler.hpp"
#include "clink/sql/spec/expr_json.hpp"

namespace clink::sql {

namespace {
EventTime micros_to_millis(std::int64_t us) { return us >= 0 ? us / 1000 : -((-us + 999) / 1000); }
}  // namespace

SplitWatermarks::SplitWatermarks(std::shared_ptr<const SourceWatermarkSpec> spec)
    : spec_(std::move(spec)),
      watermark_(std::make_unique<CompiledExpr>(spec_->watermark, spec_->session)),
      rowtime_(spec_->rowtime ? std::make_unique<CompiledExpr>(spec_->rowtime, spec_->session) : nullptr),
      combiner_(spec_->idle_timeout_ms, spec_->interval_ms, 0) {}

SplitWatermarks::~SplitWatermarks() = default;

void SplitWatermarks::set_splits(const std::vector<std::uint64_t>& splits, std::int64_t now_ms) {
  combiner_.set_splits(splits, now_ms);
}

void SplitWatermarks::on_batch(ColumnBatch& batch, const std::vector<std::uint64_t>& row_splits, std::int64_t now_ms) {
  const std::size_t n = batch.size();
  if (n == 0) return;
  if (rowtime_) {
    const Column& rt = rowtime_->evaluate(batch);
    for (std::size_t r = 0; r < n; ++r) {
      if (rt.is_null(r)) throw ClinkError("the rowtime of a row is NULL (a rowtime attribute must not be NULL)");
      batch.event_times()[r] = micros_to_millis(rt.values<std::int64_t>()[r]);
    }
  }
  const Column& w = watermark_->evaluate(batch);
  for (std::size_t r = 0; r < n; ++r) {
    const std::uint64_t split = row_splits.empty() ? 0 : row_splits[r];
    combiner_.advance(split, w.is_valid(r) ? micros_to_millis(w.values<std::int64_t>()[r]) : kMinEventTime, now_ms);
  }
}

std::optional<Watermark> SplitWatermarks::poll(std::int64_t now_ms) { return combiner_.poll(now_ms); }

std::shared_ptr<const SourceWatermarkSpec> source_watermark_spec(const SqlConnectorParams& p, const Schema& output) {
  if (!p.has("watermark")) return nullptr;
  const auto& w = p.raw("watermark");
  auto spec = std::make_shared<SourceWatermarkSpec>();
  try {
    spec->watermark = expr_from_json(w.at("watermark"), output);
    spec->bounds_assigner = w.value("bounds_assigner", false);
    if (spec->bounds_assigner) {
      spec->interval_ms = 0;  // every advance: the assigner decides when to emit
    } else {
      spec->rowtime = expr_from_json(w.at("rowtime"), output);
      spec->interval_ms = w.value("interval_ms", std::int64_t{200});
      spec->idle_timeout_ms = w.value("idle_timeout_ms", std::int64_t{0});
    }
  } catch (const std::exception& e) {
    p.fail(std::string("param 'watermark': ") + e.what());
  }
  for (const ExprPtr* e : {&spec->watermark, &spec->rowtime})
    if (*e && !(*e)->type.is(TypeKind::kTimestamp) && !(*e)->type.is(TypeKind::kTimestampLtz))
      p.fail("param 'watermark': " + (*e)->type.to_string() + " is not a TIMESTAMP");
  spec->session.time_zone = TimeZone::of(p.local_time_zone());
  return spec;
}

}  // namespace clink::sql
