#include "clink/checkpoint/operator_state.hpp"

#include <fstream>
#include <sstream>

#include "clink/core/error.hpp"
#include "clink/state/state_codec.hpp"

namespace clink {

std::vector<std::string>& OperatorStateStore::list(const std::string& name, Redistribution mode) {
  auto [it, inserted] = lists_.try_emplace(name);
  if (inserted) it->second.mode = mode;
  return it->second.items;
}

void OperatorStateStore::write(const std::filesystem::path& file) const {
  std::string out;
  put_varint(lists_.size(), out);
  for (const auto& [name, l] : lists_) {
    StateCodec<std::string>::encode(name, out);
    out.push_back(l.mode == Redistribution::kUnion ? 'U' : 'E');
    StateCodec<std::vector<std::string>>::encode(l.items, out);
  }
  std::ofstream f(file, std::ios::binary | std::ios::trunc);
  f.write(out.data(), static_cast<std::streamsize>(out.size()));
  if (!f) throw ClinkError("cannot write operator state " + file.string());
}

OperatorStateStore OperatorStateStore::read(const std::filesystem::path& file) {
  std::ifstream f(file, std::ios::binary);
  if (!f) throw ClinkError("cannot read operator state " + file.string());
  std::stringstream ss;
  ss << f.rdbuf();
  return parse(ss.str(), file.string());
}

OperatorStateStore OperatorStateStore::parse(std::string_view data, const std::string& where) {
  std::string_view in(data);
  OperatorStateStore store;
  auto n = get_varint(in);
  for (std::uint64_t i = 0; i < n; ++i) {
    std::string name = StateCodec<std::string>::decode(in);
    if (in.empty()) throw ClinkError("operator state " + where + " is truncated");
    Redistribution mode = in.front() == 'U' ? Redistribution::kUnion : Redistribution::kEvenSplit;
    in.remove_prefix(1);
    store.lists_[name] = List{mode, StateCodec<std::vector<std::string>>::decode(in)};
  }
  return store;
}

OperatorStateStore OperatorStateStore::redistribute(const std::vector<OperatorStateStore>& old, int subtask,
                                                    int parallelism) {
  OperatorStateStore out;
  // At unchanged parallelism every subtask gets back exactly what it wrote (plus the
  // union lists); otherwise even-split lists are dealt round-robin in old-subtask order.
  const bool same = static_cast<int>(old.size()) == parallelism;
  std::map<std::string, std::pair<Redistribution, std::vector<const std::string*>>> all;
  for (const auto& store : old)
    for (const auto& [name, l] : store.lists_) {
      auto& slot = all[name];
      slot.first = l.mode;
      for (const auto& item : l.items) slot.second.push_back(&item);
    }
  for (const auto& [name, entry] : all) {
    auto& items = out.list(name, entry.first);
    if (entry.first == Redistribution::kEvenSplit && same) continue;  // filled below
    for (std::size_t i = 0; i < entry.second.size(); ++i)
      if (entry.first == Redistribution::kUnion || static_cast<int>(i % static_cast<std::size_t>(parallelism)) == subtask)
        items.push_back(*entry.second[i]);
  }
  if (same)
    for (const auto& [name, l] : old[static_cast<std::size_t>(subtask)].lists_)
      if (l.mode == Redistribution::kEvenSplit) out.list(name, l.mode) = l.items;
  return out;
}

}  // namespace clink
