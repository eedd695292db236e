// Match<T>: the view select / flat_select / process functions receive (events per
// pattern name, names in name order, only names that took events, map-like look-ups).
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>

#include "cep_test_support.hpp"
#include "clink/cep/match.hpp"

namespace clink::test {

using namespace clink::cep;

namespace {

class MatchTest : public ::testing::Test {
 protected:
  // Events 1..5 in the buffer; the match takes them under the given page ids.
  MatchView<Event> view(const std::vector<std::pair<std::int32_t, int>>& taken) {
    path_.clear();
    for (const auto& [page, id] : taken) {
      const std::int32_t slot = buffer_.import_event(ev(id, "e"), EventId{id, 0}, 1);
      path_.push_back(MatchEntry{page, slot});
    }
    return MatchView<Event>(&pages_, &buffer_, &path_);
  }
  static std::string ids(const MatchEvents<Event>& evs) {
    std::string s;
    for (const Event& e : evs) s += (s.empty() ? "" : ",") + std::to_string(e.id);
    return s;
  }

  std::vector<std::string> pages_{"start", "middle", "end", "unused"};  // page ids 0..3
  SharedBuffer<Event> buffer_;
  std::vector<MatchEntry> path_;
};

TEST_F(MatchTest, GroupsEventsByNameInEventOrderAndIteratesNamesInOrder) {
  Match<Event> m;
  m.assign(view({{0, 1}, {1, 2}, {1, 3}, {2, 4}, {1, 5}}));
  EXPECT_EQ(m.size(), 3u);  // "unused" took nothing: absent
  std::vector<std::string> seen;
  for (const auto& [name, events] : m) seen.push_back(name + ":" + ids(events));
  EXPECT_EQ(seen, (std::vector<std::string>{"end:4", "middle:2,3,5", "start:1"}));
  EXPECT_EQ(m.at("middle").size(), 3u);
  EXPECT_EQ(m.at("middle")[1].id, 3);
  EXPECT_EQ(m.at("middle").front().id, 2);
  EXPECT_EQ(m.at("middle").back().id, 5);
  EXPECT_EQ(m.at(std::string("start"))[0].id, 1);
  EXPECT_EQ(m.find("end")->first, "end");
  EXPECT_EQ(m.find("end")->second.front().id, 4);
  EXPECT_EQ(m.count("start"), 1u);
  EXPECT_EQ(m.count("unused"), 0u);
  EXPECT_FALSE(m.contains("nope"));
  EXPECT_TRUE(m.find("unused") == m.end());
  EXPECT_TRUE(m.events("unused").empty());
  EXPECT_TRUE(m.events("nope").empty());
  EXPECT_THROW(m.at("unused"), std::out_of_range);
  EXPECT_THROW(m.at("nope"), std::out_of_range);
  EXPECT_THROW(m.at("middle").at(3), std::out_of_range);
  const std::map<std::string, std::vector<Event>> owned = m.to_map();
  EXPECT_EQ(owned.size(), 3u);
  EXPECT_EQ(owned.at("middle"), m.at("middle").to_vector());
  EXPECT_EQ(owned, m.to_map());
}

TEST_F(MatchTest, ReassigningReusesTheObjectAndForgetsNamesNoLongerPresent) {
  Match<Event> m;
  m.assign(view({{0, 1}, {1, 2}, {2, 3}}));
  EXPECT_EQ(m.size(), 3u);
  m.assign(view({{3, 7}, {3, 8}}));
  EXPECT_EQ(m.size(), 1u);
  EXPECT_EQ(m.begin()->first, "unused");
  EXPECT_EQ(ids(m.at("unused")), "7,8");
  EXPECT_EQ(m.count("start"), 0u);
  m.assign(view({}));
  EXPECT_TRUE(m.empty());
  EXPECT_TRUE(m.begin() == m.end());
}

}  // namespace
}  // namespace clink::test
