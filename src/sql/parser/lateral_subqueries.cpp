#include "lateral_subqueries.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

namespace clink::sql {

namespace {

std::mutex& marks_mutex() {
  static std::mutex m;
  return m;
}
std::vector<std::weak_ptr<const ast::Query>>& marks() {
  static std::vector<std::weak_ptr<const ast::Query>> v;
  return v;
}

}  // namespace

void mark_lateral_subquery(const ast::QueryPtr& q) {
  std::lock_guard lock(marks_mutex());
  auto& v = marks();
  std::erase_if(v, [](const auto& w) { return w.expired(); });
  v.push_back(q);
}

bool is_lateral_subquery(const ast::QueryPtr& q) {
  std::lock_guard lock(marks_mutex());
  return std::any_of(marks().begin(), marks().end(), [&](const auto& w) {
    auto p = w.lock();
    return p && p == q;
  });
}

}  // namespace clink::sql
