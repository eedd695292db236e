#pragma once
// Flink's AfterMatchSkipStrategy: which other partial (and completed, not yet emitted)
// matches a found match discards.
//  - no_skip: none; every match is emitted.
//  - skip_to_next: those that started at or before the match's first event.
//  - skip_past_last_event: those that started at or before the match's last event.
//  - skip_to_first(name) / skip_to_last(name): those that started before the first /
//    last event taken for `name` (nothing is discarded when the match has none).
// With any strategy but no_skip a completed match is held back while a partial match
// that started earlier is still alive (it might discard this one), as Flink does.
#include <string>
#include <utility>

namespace clink::cep {

struct AfterMatchSkipStrategy {
  enum class Kind { kNoSkip, kSkipToNext, kSkipPastLastEvent, kSkipToFirst, kSkipToLast };
  Kind kind = Kind::kNoSkip;
  std::string pattern_name;  // skip_to_first / skip_to_last

  static AfterMatchSkipStrategy no_skip() { return {}; }
  static AfterMatchSkipStrategy skip_to_next() { return {Kind::kSkipToNext, {}}; }
  static AfterMatchSkipStrategy skip_past_last_event() { return {Kind::kSkipPastLastEvent, {}}; }
  static AfterMatchSkipStrategy skip_to_first(std::string name) { return {Kind::kSkipToFirst, std::move(name)}; }
  static AfterMatchSkipStrategy skip_to_last(std::string name) { return {Kind::kSkipToLast, std::move(name)}; }

  bool is_skip() const { return kind != Kind::kNoSkip; }
  bool names_pattern() const { return kind == Kind::kSkipToFirst || kind == Kind::kSkipToLast; }
  std::string describe() const {
    switch (kind) {
      case Kind::kNoSkip: return "NO_SKIP";
      case Kind::kSkipToNext: return "SKIP_TO_NEXT";
      case Kind::kSkipPastLastEvent: return "SKIP_PAST_LAST_EVENT";
      case Kind::kSkipToFirst: return "SKIP_TO_FIRST(" + pattern_name + ")";
      case Kind::kSkipToLast: return "SKIP_TO_LAST(" + pattern_name + ")";
    }
    return "?";
  }
  friend bool operator==(const AfterMatchSkipStrategy&, const AfterMatchSkipStrategy&) = default;
};

}  // namespace clink::cep
