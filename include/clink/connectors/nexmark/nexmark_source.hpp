#pragma once
// The Nexmark generator as a DataStream source of NexmarkEvent: Nexmark's one mixed
// stream of people, auctions and bids, with event time = each event's dateTime.
//
// The stream is Nexmark's single timeline (its generator at parallelism 1): event n
// depends only on n and the options, so the union over subtasks is the same at any
// parallelism. Subtask i of p reads positions i, i+p, i+2p, ... (its split: next
// position, step, last position, and the base time the timestamps count from); each
// reader's events are in increasing dateTime up to the out-of-order groups. Nexmark's
// own Flink source instead gives each subtask a separate id range on its own timeline,
// so its events change with the parallelism; clink's do not.
//
// Bounded by events.num (0: Nexmark's practically unbounded maximum). Paced at
// first-event.rate over all subtasks, as Nexmark's source waits for each event's
// wall-clock time, unless max-emit-speed. Checkpoints store the splits; a restore, at
// any parallelism, continues each split exactly where it was, with its base time.
#include <map>
#include <memory>
#include <string>

#include "clink/api/source.hpp"
#include "clink/connectors/nexmark/nexmark_event.hpp"
#include "clink/connectors/nexmark/nexmark_options.hpp"

namespace clink {

class NexmarkSource final : public Source<NexmarkEvent> {
 public:
  // Fixes the base time to now (ms since epoch) unless the options set it.
  explicit NexmarkSource(nexmark::NexmarkSourceOptions options);
  // From Nexmark's option names and text values (see nexmark_options.hpp).
  static std::shared_ptr<NexmarkSource> from_options(const std::map<std::string, std::string>& options);

  std::unique_ptr<SourceReader<NexmarkEvent>> create_reader(int subtask, int parallelism) const override;
  std::string factory_name() const override { return "nexmark"; }
  const nexmark::NexmarkSourceOptions& options() const { return options_; }

 private:
  nexmark::NexmarkSourceOptions options_;
};

}  // namespace clink
