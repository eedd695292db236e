#include "clink/runtime/failure_injector.hpp"

#include <cmath>
#include <limits>

#include "clink/core/error.hpp"
#include "clink/core/log.hpp"

namespace clink {

namespace {

// The spec's keys, for the message of an unknown one.
constexpr const char* kKeys =
    "operator, subtask, after-records, after-checkpoint, during-checkpoint, probability, per, seed, times";

[[noreturn]] void bad(const std::string& spec, const std::string& what, std::size_t pos) {
  throw ClinkError("failure spec '" + spec + "': " + what + " at character " + std::to_string(pos + 1));
}

std::uint64_t parse_count(const std::string& spec, const std::string& key, const std::string& v, std::size_t pos,
                          std::uint64_t min) {
  std::size_t used = 0;
  unsigned long long n = 0;
  try {
    if (!v.empty() && v[0] != '-' && v[0] != '+') n = std::stoull(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != v.size() || n < min)
    bad(spec, key + " must be an integer >= " + std::to_string(min) + ", not '" + v + "'", pos);
  return n;
}

// Shell-style: '*' any run of characters, '?' one character.
bool glob_match(const std::string& pattern, const std::string& text) {
  std::size_t p = 0, t = 0, star = std::string::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p, ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (star != std::string::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

const char* trigger_key(FailureRule::Trigger t) {
  switch (t) {
    case FailureRule::Trigger::kAfterRecords: return "after-records";
    case FailureRule::Trigger::kAfterCheckpoint: return "after-checkpoint";
    case FailureRule::Trigger::kDuringCheckpoint: return "during-checkpoint";
    case FailureRule::Trigger::kProbability: return "probability";
  }
  return "";
}

}  // namespace

FailureRule FailureRule::parse(const std::string& spec) {
  FailureRule r;
  r.text = spec;
  bool has_trigger = false, has_times = false, has_seed = false, has_per = false;
  std::size_t start = 0;
  if (spec.empty()) bad(spec, "empty (give a trigger: after-records, after-checkpoint, during-checkpoint or probability)", 0);
  while (start <= spec.size()) {
    std::size_t end = spec.find(',', start);
    if (end == std::string::npos) end = spec.size();
    const std::string item = spec.substr(start, end - start);
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) bad(spec, "expected key=value, got '" + item + "'", start);
    const std::string key = item.substr(0, eq), v = item.substr(eq + 1);
    const std::size_t vpos = start + eq + 1;
    auto set_trigger = [&](Trigger t) {
      if (has_trigger) bad(spec, "a second trigger '" + key + "' (one of after-records, after-checkpoint, "
                                 "during-checkpoint, probability per spec)", start);
      has_trigger = true;
      r.trigger = t;
    };
    if (key == "operator") {
      if (v.empty()) bad(spec, "operator needs a name or pattern", vpos);
      r.operator_glob = v;
    } else if (key == "subtask") {
      r.subtask = static_cast<int>(parse_count(spec, key, v, vpos, 0));
    } else if (key == "after-records") {
      set_trigger(Trigger::kAfterRecords);
      r.threshold = parse_count(spec, key, v, vpos, 1);
    } else if (key == "after-checkpoint") {
      set_trigger(Trigger::kAfterCheckpoint);
      r.threshold = parse_count(spec, key, v, vpos, 1);
    } else if (key == "during-checkpoint") {
      set_trigger(Trigger::kDuringCheckpoint);
      r.threshold = parse_count(spec, key, v, vpos, 1);
    } else if (key == "probability") {
      set_trigger(Trigger::kProbability);
      std::size_t used = 0;
      try {
        r.probability = std::stod(v, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != v.size() || !(r.probability > 0 && r.probability <= 1))
        bad(spec, "probability must be a number in (0, 1], not '" + v + "'", vpos);
    } else if (key == "per") {
      if (v != "record" && v != "batch") bad(spec, "per must be record or batch, not '" + v + "'", vpos);
      r.per_batch = v == "batch";
      has_per = true;
    } else if (key == "seed") {
      r.seed = parse_count(spec, key, v, vpos, 0);
      has_seed = true;
    } else if (key == "times") {
      r.times = v == "unlimited" ? -1 : static_cast<std::int64_t>(parse_count(spec, key, v, vpos, 1));
      has_times = true;
    } else {
      bad(spec, "unknown key '" + key + "' (keys: " + kKeys + ")", start);
    }
    start = end + 1;
  }
  if (!has_trigger)
    bad(spec, "no trigger (give after-records, after-checkpoint, during-checkpoint or probability)", 0);
  if (r.trigger != Trigger::kProbability && (has_seed || has_per))
    bad(spec, std::string(has_seed ? "seed" : "per") + " applies to probability only, not " + trigger_key(r.trigger),
        0);
  if (r.trigger == Trigger::kProbability && !has_times) r.times = -1;
  return r;
}

bool FailureRule::selects(const std::string& uid, const std::string& name, int s) const {
  if (subtask >= 0 && s != subtask) return false;
  return operator_glob.empty() || glob_match(operator_glob, uid) || glob_match(operator_glob, name);
}

FailureInjector::FailureInjector(std::vector<FailureRule> rules)
    : rules_(std::move(rules)), remaining_(new std::atomic<std::int64_t>[rules_.size()]) {
  for (std::size_t i = 0; i < rules_.size(); ++i) remaining_[i].store(rules_[i].times);
}

std::shared_ptr<FailureInjector> FailureInjector::parse(const std::vector<std::string>& specs) {
  if (specs.empty()) return nullptr;
  std::vector<FailureRule> rules;
  for (const auto& s : specs) rules.push_back(FailureRule::parse(s));
  return std::make_shared<FailureInjector>(std::move(rules));
}

std::unique_ptr<FailureProbe> FailureInjector::probe(const std::string& uid, const std::string& name, int subtask) {
  std::unique_ptr<FailureProbe> p;
  for (std::size_t i = 0; i < rules_.size(); ++i) {
    const FailureRule& r = rules_[i];
    if (!r.selects(uid, name, subtask) || remaining_[i].load() == 0) continue;
    if (!p) {
      p = std::make_unique<FailureProbe>();
      p->injector_ = this;
      p->target_ = uid + "#" + std::to_string(subtask);
    }
    FailureProbe::Armed a{i, r.threshold};
    if (r.trigger == FailureRule::Trigger::kProbability) a.at = draw_gap(i, p->target_);
    p->armed_.push_back(a);
  }
  if (p) p->rearm();
  return p;
}

bool FailureInjector::claim(std::size_t rule) {
  auto& left = remaining_[rule];
  std::int64_t n = left.load();
  while (n != 0) {
    if (n < 0) return true;  // unlimited
    if (left.compare_exchange_weak(n, n - 1)) return true;
  }
  return false;
}

std::uint64_t FailureInjector::draw_gap(std::size_t rule, const std::string& target) {
  const FailureRule& r = rules_[rule];
  std::uint64_t index;
  {
    std::lock_guard lock(mu_);
    index = draws_[{rule, target}]++;
  }
  if (r.probability >= 1) return 1;
  // The gap to the next failure of independent trials with probability p is geometric:
  // drawn once per failure, not once per record.
  // Mixed in turn, so that streams of targets whose names differ in one character (the
  // subtasks of an operator) are unrelated.
  const std::uint64_t stream = splitmix64(splitmix64(r.seed) ^ splitmix64(fnv1a(target)));
  const std::uint64_t bits = splitmix64(stream + splitmix64(index));
  const double u = static_cast<double>(bits >> 11) * 0x1.0p-53;  // [0, 1)
  const double gap = std::floor(std::log1p(-u) / std::log1p(-r.probability)) + 1;
  return gap >= 9e18 ? std::numeric_limits<std::uint64_t>::max() / 2 : static_cast<std::uint64_t>(gap);
}

void FailureInjector::fail(std::size_t rule, const std::string& what) {
  ++injected_;
  const std::string message = "injected failure [" + rules_[rule].text + "]: " + what;
  log::debug("{}", message);
  throw ClinkError(message);
}

void FailureProbe::rearm() {
  next_record_ = next_batch_ = UINT64_MAX;
  for (const Armed& a : armed_) {
    const FailureRule& r = injector_->rules_[a.rule];
    if (r.trigger == FailureRule::Trigger::kAfterRecords || (r.trigger == FailureRule::Trigger::kProbability && !r.per_batch))
      next_record_ = std::min(next_record_, a.at);
    else if (r.trigger == FailureRule::Trigger::kProbability)
      next_batch_ = std::min(next_batch_, a.at);
  }
}

void FailureProbe::fire_due() {
  for (std::size_t i = 0; i < armed_.size();) {
    const Armed a = armed_[i];
    const FailureRule& r = injector_->rules_[a.rule];
    const bool by_batch = r.trigger == FailureRule::Trigger::kProbability && r.per_batch;
    const bool by_record = r.trigger == FailureRule::Trigger::kAfterRecords ||
                           (r.trigger == FailureRule::Trigger::kProbability && !r.per_batch);
    if (!(by_record && records_ >= a.at) && !(by_batch && batches_ >= a.at)) {
      ++i;
      continue;
    }
    if (injector_->claim(a.rule)) {
      // Drawn before the throw: a failure that leaves this subtask running (none does
      // today) would not fire at once again, and the stream moves on either way.
      if (r.trigger == FailureRule::Trigger::kProbability)
        armed_[i].at = (by_batch ? batches_ : records_) + injector_->draw_gap(a.rule, target_);
      else
        armed_.erase(armed_.begin() + static_cast<std::ptrdiff_t>(i));
      rearm();
      injector_->fail(a.rule, by_batch ? "batch " + std::to_string(batches_) + " of " + target_
                                       : std::to_string(records_) + " records into " + target_);
    }
    armed_.erase(armed_.begin() + static_cast<std::ptrdiff_t>(i));  // the rule has no failures left
  }
  rearm();
}

void FailureProbe::on_checkpoint(std::int64_t id, FailureRule::Trigger when) {
  for (std::size_t i = 0; i < armed_.size(); ++i) {
    const FailureRule& r = injector_->rules_[armed_[i].rule];
    if (r.trigger != when || id < static_cast<std::int64_t>(r.threshold)) continue;
    if (injector_->claim(armed_[i].rule))
      injector_->fail(armed_[i].rule, std::string(when == FailureRule::Trigger::kAfterCheckpoint
                                                      ? "checkpoint " + std::to_string(id) + " completed at "
                                                      : "while snapshotting checkpoint " + std::to_string(id) + " at ") +
                                          target_);
  }
}

}  // namespace clink
