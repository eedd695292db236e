#include "clink/connectors/nexmark/nexmark_spec.hpp"

#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "clink/api/source.hpp"
#include "clink/connectors/nexmark/nexmark_source.hpp"
#include "clink/core/error.hpp"

namespace clink {
namespace {

[[noreturn]] void fail(const OperatorSpecContext& ctx, const std::string& message) {
  throw ClinkError("op '" + ctx.id + "' (nexmark): " + message);
}

// The params as Nexmark's text options: JSON strings as they are, integers and
// booleans in their text form.
std::map<std::string, std::string> option_texts(const OperatorSpecContext& ctx) {
  std::map<std::string, std::string> out;
  if (ctx.params->is_null()) return out;
  if (!ctx.params->is_object()) fail(ctx, "params must be a JSON object");
  for (const auto& [name, value] : ctx.params->items()) {
    if (value.is_string())
      out[name] = value.get<std::string>();
    else if (value.is_number_integer() || value.is_boolean())
      out[name] = value.dump();
    else
      fail(ctx, "param '" + name + "' must be a string, an integer or a boolean, got " + value.dump());
  }
  return out;
}

OperatorBuilder make_nexmark(const OperatorSpecContext& ctx) {
  std::map<std::string, std::string> options = option_texts(ctx);
  std::shared_ptr<const Source<NexmarkEvent>> source;
  try {
    source = NexmarkSource::from_options(options);
  } catch (const ClinkError& e) {
    std::string message = e.what();
    const std::string prefix = "nexmark: ";
    if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
    fail(ctx, message);
  }
  return [source] { return std::make_unique<ReaderSourceOperator<NexmarkEvent>>(source); };
}

}  // namespace

void register_nexmark_connector(OperatorRegistry& r) {
  r.add(OperatorFactoryInfo{
      .name = "nexmark",
      .description =
          "source of the Nexmark benchmark's events (nexmark_event: person, auction or bid), event time = dateTime; "
          "params by Nexmark's option names: events.num (0: unbounded), tps or first-event.rate (events/s, pacing "
          "and timestamps), max-emit-speed, person/auction/bid.proportion, person/auction/bid.avg-size, "
          "bid.hot-ratio.auctions, bid.hot-ratio.bidders, auction.hot-ratio.sellers, events.base-time, "
          "events.out-of-order.group-size, auction.in-flight.num, person.active.num, and next-event.rate, "
          "rate.shape, rate.period, rate.limited (accepted, no effect, as in Nexmark's Flink generator)",
      .num_inputs = 0,
      .out_type = [](const OperatorSpecContext&) { return std::string("nexmark_event"); },
      .make = make_nexmark});
}

}  // namespace clink
