#include "clink/checkpoint/timer_snapshot.hpp"

#include <fstream>
#include <sstream>

#include "clink/core/error.hpp"
#include "clink/state/state_codec.hpp"

namespace clink {

void write_timers(const TimerService& timers, const std::filesystem::path& file) {
  std::string out;
  auto add = [&](char domain, const std::set<Timer>& set) {
    for (const Timer& t : set) {
      out.push_back(domain);
      StateCodec<std::int64_t>::encode(t.time, out);
      StateCodec<std::string>::encode(t.key, out);
      StateCodec<std::string>::encode(t.ns, out);
    }
  };
  add('E', timers.event_time_timers());
  add('P', timers.processing_time_timers());
  std::ofstream f(file, std::ios::binary | std::ios::trunc);
  f.write(out.data(), static_cast<std::streamsize>(out.size()));
  if (!f) throw ClinkError("cannot write timers " + file.string());
}

void restore_timers(TimerService& timers, const std::vector<std::pair<std::filesystem::path, int>>& files_and_subtasks,
                    KeyGroupRange key_groups, int max_parallelism, int subtask) {
  for (const auto& [file, old_subtask] : files_and_subtasks) {
    std::ifstream f(file, std::ios::binary);
    if (!f) throw ClinkError("cannot read timers " + file.string());
    std::stringstream ss;
    ss << f.rdbuf();
    std::string data = ss.str();
    std::string_view in(data);
    while (!in.empty()) {
      const char domain = in.front();
      in.remove_prefix(1);
      if (domain != 'E' && domain != 'P')
        throw ClinkError("timers " + file.string() + ": a timer of unknown kind '" + std::string(1, domain) + "'");
      auto time = StateCodec<std::int64_t>::decode(in);
      auto key = StateCodec<std::string>::decode(in);
      auto ns = StateCodec<std::string>::decode(in);
      bool mine = key.empty() ? old_subtask == subtask
                              : key_groups.contains(key_group_for_hash(key_hash(key), max_parallelism));
      if (!mine) continue;
      if (domain == 'E') timers.register_event_time_timer(time, key, ns);
      else timers.register_processing_time_timer(time, key, ns);
    }
  }
}

}  // namespace clink
