#include "clink/connectors/sql/bounded_sql_source.hpp"

#include <map>
#include <mutex>

namespace clink::sql {
namespace {

struct Makers {
  std::mutex mu;
  std::map<std::string, SqlSourceMaker> by_name;
};

Makers& makers() {
  static Makers m;
  return m;
}

}  // namespace

void register_sql_source_maker(const std::string& source_factory, SqlSourceMaker maker) {
  auto& m = makers();
  std::lock_guard lock(m.mu);
  m.by_name[source_factory] = std::move(maker);
}

const SqlSourceMaker* find_sql_source_maker(const std::string& source_factory) {
  auto& m = makers();
  std::lock_guard lock(m.mu);
  auto it = m.by_name.find(source_factory);
  // std::map nodes are stable: the pointer stays valid while the entry is not replaced.
  return it == m.by_name.end() ? nullptr : &it->second;
}

}  // namespace clink::sql
