#pragma once
// Internal to the AST builder (ast_builder.cpp, ast_builder_expr.cpp): the walker over
// libpg_query's JSON parse tree. nlohmann::json and the tree's node names stay in
// these files.
#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "ast_builder.hpp"

namespace clink::sql::detail::pg {

using J = nlohmann::json;
using namespace ast;


inline std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
inline std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}
inline bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

// True when `pg`, a name from PostgreSQL's tree, is the name written as `written`:
// PostgreSQL lower-cases unquoted names and truncates every name to 63 bytes
// (NAMEDATALEN - 1), so both are undone from the spelling the user wrote.
inline bool same_name(const std::string& written, const std::string& pg) {
  constexpr size_t kPostgresNameMax = 63;
  std::string w = lower(written), n = lower(pg);
  if (w == n) return true;
  return n.size() == kPostgresNameMax && w.size() > kPostgresNameMax && w.compare(0, kPostgresNameMax, n) == 0;
}

// The single-key object {"NodeName": {...fields}}.
struct Node {
  std::string type;
  const J* fields;
};
inline Node node_of(const J& j) {
  if (!j.is_object() || j.size() != 1) return {"", &j};
  auto it = j.begin();
  return {it.key(), &it.value()};
}

inline std::string str(const J& f, const char* key) {
  auto it = f.find(key);
  return it == f.end() ? std::string() : it->get<std::string>();
}
inline const J* child(const J& f, const char* key) {
  auto it = f.find(key);
  return it == f.end() || it->is_null() ? nullptr : &*it;
}
inline int location(const J& f) {
  auto it = f.find("location");
  return it == f.end() ? -1 : it->get<int>();
}
// The items of a {"List": {"items": [...]}} node (or a plain array).
inline const J& list_items(const J& j) {
  if (j.is_object() && j.contains("List")) return j.at("List").at("items");
  return j;
}

// The "sval" of a {"String": {...}} node.
inline std::string string_node(const J& j) {
  Node n = node_of(j);
  return n.type == "String" ? str(*n.fields, "sval") : std::string();
}

class Builder {
 public:
  explicit Builder(const PgContext& ctx) : ctx_(ctx) {}

  // ------------------------------------------------------------ positions & names

  uint32_t origin(int loc) const { return ctx_.rewritten.text.original_offset(static_cast<size_t>(loc)); }
  SourcePosition pos(int loc, SourcePosition fallback) const {
    return loc < 0 ? fallback : ctx_.map.position(origin(loc));
  }
  SourcePosition pos(const J& f) const { return pos(location(f), ctx_.fallback); }

  [[noreturn]] void unsupported(SourcePosition at, const std::string& what) const {
    throw TranslationError(at.known() ? at : ctx_.fallback, what);
  }

  // The smallest / largest location anywhere under `j` (a query has no location of its
  // own); -1 when none. Walked with a stack: a long UNION chain nests its left arms.
  int min_location(const J& j) const { return extreme_location(j, true); }
  int max_location(const J& j) const { return extreme_location(j, false); }
  int extreme_location(const J& root, bool smallest) const {
    int best = -1;
    std::vector<const J*> todo{&root};
    while (!todo.empty()) {
      const J& j = *todo.back();
      todo.pop_back();
      if (!j.is_structured()) continue;
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (j.is_object() && it.key() == "location" && it->is_number_integer()) {
          const int l = it->get<int>();
          if (l >= 0 && (best < 0 || (smallest ? l < best : l > best))) best = l;
        } else if (it->is_structured()) {
          todo.push_back(&*it);
        }
      }
    }
    return best;
  }

  // Names PostgreSQL returns for the identifiers written from offset `loc` on, in the
  // spelling the user wrote (PostgreSQL lower-cases unquoted keywords used as names).
  std::vector<std::string> spelled(int loc, const std::vector<std::string>& pg_names) const {
    std::vector<std::string> out = pg_names;
    if (loc < 0) return out;
    auto it = ctx_.rewritten.spellings.lower_bound(static_cast<uint32_t>(loc));
    for (auto& name : out) {
      if (it == ctx_.rewritten.spellings.end()) break;
      if (same_name(it->second, name)) name = it->second;
      ++it;
    }
    return out;
  }

  // ------------------------------------------------------------ expressions (ast_builder_expr.cpp)

  ExprPtr expr(const J& j, SourcePosition fallback);
  std::vector<ExprPtr> exprs(const J& list, SourcePosition fallback);
  static ExprPtr call(SourcePosition p, const std::string& name, std::vector<ExprPtr> args);
  ExprPtr column_ref(const J& f, SourcePosition p);
  std::string number_text(int loc) const;
  ExprPtr constant(const J& f, SourcePosition p);
  ExprPtr a_expr(const J& f, SourcePosition p);
  ExprPtr bool_expr(const J& f, SourcePosition p);
  ExprPtr sublink(const J& f, SourcePosition p);
  ExprPtr type_cast(const J& f, SourcePosition p);
  ExprPtr value_function(const J& f, SourcePosition p);
  // A WindowDef: an OVER clause (`definition` false: its `name` is OVER w's reference) or
  // an entry of the WINDOW clause (its `name` is the name defined).
  std::shared_ptr<const WindowSpec> window(const J& w, SourcePosition p, bool definition = false);
  ExprPtr func_call(const J& f, SourcePosition p);
  ExprPtr sql_syntax_function(const std::string& fn, std::vector<ExprPtr>& a, SourcePosition p);

  // ------------------------------------------------------------ queries (ast_builder.cpp)

  std::vector<OrderItem> order_items(const J& list, SourcePosition p);
  QueryPtr query(const J& j, SourcePosition fallback);
  SetOperation set_operation(const J& f, const std::string& op, SourcePosition p);
  Select select(const J& f, SourcePosition p);
  GroupingElement grouping(const J& j, SourcePosition p);
  // `pg` as the user spelled it: the last matching name written in [from, to) (to < 0: no end).
  std::string alias_spelling(int from, int to, const std::string& pg) const;
  // `names` in the spelling written: looked up in order among the names written after
  // offset `start` (skipping `skip` of them), the first within `first_window` names.
  std::vector<std::string> names_after(int start, size_t skip, std::vector<std::string> names,
                                       size_t first_window) const;
  void apply_alias(TableRef& ref, const J& f, int start, size_t skip, size_t window);
  std::shared_ptr<TableRef> with_match_recognize(std::shared_ptr<TableRef> ref);
  // Where the query whose first located node is at `first_node` starts (its SELECT).
  int query_start(int first_node) const;
  TableRefPtr table_ref(const J& j, SourcePosition p);
  TableRefPtr table_function(const J& f, SourcePosition p);

 private:
  const PgContext& ctx_;
};

}  // namespace clink::sql::detail::pg
