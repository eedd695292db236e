#pragma once
#include <filesystem>
#include <vector>

#include "clink/runtime/key_group.hpp"
#include "clink/runtime/timer_service.hpp"

namespace clink {

// Timers are part of a checkpoint. Keyed timers are restored by the subtask owning
// their key's group (so they follow rescaling); timers without a key stay with the
// subtask index that wrote them.
void write_timers(const TimerService& timers, const std::filesystem::path& file);
void restore_timers(TimerService& timers, const std::vector<std::pair<std::filesystem::path, int>>& files_and_subtasks,
                    KeyGroupRange key_groups, int max_parallelism, int subtask);

}  // namespace clink
