#include "clink/checkpoint/operator_state.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace clink::test {
namespace {

using Items = std::vector<std::string>;

std::vector<OperatorStateStore> two_old_subtasks() {
  std::vector<OperatorStateStore> old(2);
  old[0].list("offsets") = {"a0", "a1", "a2"};
  old[1].list("offsets") = {"b0"};
  old[0].list("seen", Redistribution::kUnion) = {"x"};
  old[1].list("seen", Redistribution::kUnion) = {"y"};
  return old;
}

TEST(OperatorState, SameParallelismGivesEachSubtaskBackWhatItWrote) {
  auto old = two_old_subtasks();
  auto s0 = OperatorStateStore::redistribute(old, 0, 2);
  auto s1 = OperatorStateStore::redistribute(old, 1, 2);
  EXPECT_EQ(s0.list("offsets"), (Items{"a0", "a1", "a2"}));
  EXPECT_EQ(s1.list("offsets"), (Items{"b0"}));
  EXPECT_EQ(s0.list("seen"), (Items{"x", "y"}));  // union: everyone gets all
  EXPECT_EQ(s1.list("seen"), (Items{"x", "y"}));
}

TEST(OperatorState, RescalingDealsEvenSplitItemsRoundRobin) {
  auto old = two_old_subtasks();
  EXPECT_EQ(OperatorStateStore::redistribute(old, 0, 3).list("offsets"), (Items{"a0", "b0"}));
  EXPECT_EQ(OperatorStateStore::redistribute(old, 1, 3).list("offsets"), (Items{"a1"}));
  EXPECT_EQ(OperatorStateStore::redistribute(old, 2, 3).list("offsets"), (Items{"a2"}));
  EXPECT_EQ(OperatorStateStore::redistribute(old, 0, 1).list("offsets"), (Items{"a0", "a1", "a2", "b0"}));
  EXPECT_EQ(OperatorStateStore::redistribute(old, 2, 3).list("seen"), (Items{"x", "y"}));
}

TEST(OperatorState, WritesAndReadsBinaryItems) {
  OperatorStateStore s;
  s.list("bin") = {std::string("\0\x01\xff", 3), ""};
  s.list("u", Redistribution::kUnion) = {"q"};
  auto file = std::filesystem::temp_directory_path() / ("clink-opstate-" + std::to_string(::getpid()));
  s.write(file);
  auto back = OperatorStateStore::read(file);
  std::filesystem::remove(file);
  EXPECT_EQ(back.list("bin"), (Items{std::string("\0\x01\xff", 3), ""}));
  EXPECT_EQ(back.lists().at("u").mode, Redistribution::kUnion);
  EXPECT_EQ(back.list("u"), (Items{"q"}));
}

}  // namespace
}  // namespace clink::test
