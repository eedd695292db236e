#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace clink {

// How a list of operator state is split when a job restores at another parallelism:
// even-split hands each subtask a share of the items; union hands every subtask all.
enum class Redistribution { kEvenSplit, kUnion };

// Non-keyed state of one operator subtask: named lists of opaque items (source
// positions, pending sink commits). Small by nature; written as one file.
class OperatorStateStore {
 public:
  struct List {
    Redistribution mode = Redistribution::kEvenSplit;
    std::vector<std::string> items;
  };

  // The list `name`; on a restored run it holds this subtask's share of the old items.
  std::vector<std::string>& list(const std::string& name, Redistribution mode = Redistribution::kEvenSplit);
  const std::map<std::string, List>& lists() const { return lists_; }
  bool empty() const { return lists_.empty(); }

  void write(const std::filesystem::path& file) const;
  static OperatorStateStore read(const std::filesystem::path& file);
  // The store `write` wrote as `data`; throws ClinkError naming `where` when malformed.
  static OperatorStateStore parse(std::string_view data, const std::string& where);
  // The share of subtask `subtask` of `parallelism` of the old subtasks' stores.
  static OperatorStateStore redistribute(const std::vector<OperatorStateStore>& old, int subtask, int parallelism);

 private:
  std::map<std::string, List> lists_;
};

}  // namespace clink
