// Scan reuse (Flink's ScanReuser): scans of one table in a statement (or statement set)
// that differ only in their projection read the union of the columns, so the physical
// planner, which merges equal scans (physical_sources_sinks.cpp, `reused_scans`), runs
// one source for them. Nexmark's q7 scans `bid` for the join (bid ROW<auction, bidder,
// price, dateTime, extra>) and for the window (bid ROW<price, dateTime>): without this,
// every event was generated twice.
//
// A pass after projection push-down, over all the statement's plans at once: the push-down
// works on one tree and gives each scan what its consumers read, which is what the union
// is made of (top-level columns: the union of `projected`; a narrowed ROW: the union of
// its fields, whole if any scan reads it whole). Each scan is replaced by the union, and
// the nodes that pass columns through (Filter, WatermarkAssigner) and a Project above it
// take the new column positions and types (a narrowed ROW is only read through FIELD
// there, which finds its field by name), so the subtrees above equal scans are equal too
// and the physical planner shares them. The Projects right above the union scan (a table's
// computed columns, with the ROWs each consumer reads passed through: q3's `auction` on one
// side, `person` on the other) become one Project of all their distinct columns, so the
// WATERMARK above it is one too. Any other node gets its input's columns as before (a
// projection of the union where they differ).
//
// What else distinguishes scans keeps them apart: the table's options (hints included),
// metadata columns (not merged here), and a filter right above the scan that the connector
// takes, or prunes partitions by (the scan's params would differ: the merged scan would
// only read more).
// Watermark push-down goes by the table's WATERMARK, the same for every scan of it.
#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "../planner/plan_rewrite.hpp"
#include "clink/sql/optimizer/optimizer.hpp"
#include "clink/sql/spec/connector_table.hpp"
#include "clink/sql/spec/expr_json.hpp"
#include "nested_projection.hpp"

namespace clink::sql {

namespace {

using Mapping = std::vector<std::size_t>;  // old output column -> new output column

struct GiveUp {};  // a consumer would see other types: the plans stay as they were

std::string table_key(const LogicalScan& s) {
  std::string k = s.table.name;
  for (const auto& [key, value] : s.table.options) k += "\x1f" + key + "\x1e" + value;
  return k;
}

bool may_share(const LogicalScan& s, bool under_filter) {
  const ConnectorDescriptor* d = find_sql_connector(s.table.connector());
  // Without projection push-down every scan reads all columns (equal scans merge anyway).
  if (!d || !d->projection_pushdown || s.schema.size() != s.projected.size()) return false;
  const bool partitioned = !s.table.partitioned_by.empty() || s.table.option("partition_by").has_value();
  return !(under_filter && (d->filter_pushdown || (d->partition_pushdown && partitioned)));
}

void collect(const LogicalPtr& n, bool under_filter, std::map<std::string, std::vector<const LogicalScan*>>& scans) {
  if (n->kind == LogicalKind::kScan) {
    const auto& s = static_cast<const LogicalScan&>(*n);
    if (may_share(s, under_filter)) scans[table_key(s)].push_back(&s);
    return;
  }
  for (const auto& i : n->inputs) collect(i, n->kind == LogicalKind::kFilter, scans);
}

// The scan reading what each of `scans` reads; null when they all read the same.
std::shared_ptr<LogicalScan> union_scan(const std::vector<const LogicalScan*>& scans) {
  const LogicalScan& first = *scans.front();
  bool all_equal = true;
  for (const auto* s : scans) all_equal = all_equal && s->projected == first.projected && s->schema == first.schema;
  if (all_equal) return nullptr;
  const Schema physical = first.table.physical_schema();
  std::map<std::size_t, std::optional<std::set<std::string>>> read;  // column -> ROW fields (nullopt: whole)
  for (const auto* s : scans)
    for (std::size_t r = 0; r < s->projected.size(); ++r) {
      const std::size_t col = s->projected[r];
      const LogicalType& t = s->schema.field(r).type;
      auto [it, fresh] = read.try_emplace(col, std::set<std::string>{});
      if (t == physical.field(col).type) {
        it->second.reset();
      } else if (!t.is(TypeKind::kRow) || !physical.field(col).type.is(TypeKind::kRow)) {
        return nullptr;  // a type the scan does not read the column as: not ours to merge
      } else if (it->second) {
        for (const auto& f : t.fields()) it->second->insert(f.name);
      }
    }
  auto u = std::make_shared<LogicalScan>(first);
  u->projected.clear();
  std::vector<RowField> fields;
  for (const auto& [col, names] : read) {
    RowField f = physical.field(col);
    if (names) {  // the declared fields some scan reads, in declared order
      std::vector<RowField> kept;
      for (const auto& x : f.type.fields())
        if (names->count(x.name)) kept.push_back(x);
      if (kept.size() < f.type.fields().size())
        f.type = LogicalType::row(std::move(kept)).with_nullable(f.type.nullable());
    }
    u->projected.push_back(col);
    fields.push_back(std::move(f));
  }
  u->schema = Schema(std::move(fields));
  return u;
}

struct Rewritten {
  LogicalPtr plan;
  Mapping map;
};

Mapping identity(std::size_t n) {
  Mapping m(n);
  for (std::size_t i = 0; i < n; ++i) m[i] = i;
  return m;
}

// Where `s`'s columns are in the union scan `u`.
Mapping scan_map(const LogicalScan& s, const LogicalScan& u) {
  Mapping m;
  for (auto col : s.projected)
    m.push_back(static_cast<std::size_t>(std::find(u.projected.begin(), u.projected.end(), col) - u.projected.begin()));
  return m;
}

class ScanReuser {
 public:
  std::map<const LogicalScan*, LogicalPtr> shared;  // a scan -> the union scan replacing it
  std::map<const LogicalNode*, Rewritten> shared_projects;  // a Project over a shared scan -> the union's

  // The deterministic Projects right over shared scans, by union scan: each group becomes
  // one Project of the distinct (name, expression) columns over the union scan.
  void share_projects(const std::vector<LogicalPtr>& plans) {
    std::map<const LogicalNode*, std::vector<const LogicalProject*>> groups;
    std::set<const LogicalNode*> seen;
    std::function<void(const LogicalPtr&)> walk = [&](const LogicalPtr& n) {
      if (!seen.insert(n.get()).second) return;
      if (n->kind == LogicalKind::kProject && n->input().kind == LogicalKind::kScan) {
        const auto& p = static_cast<const LogicalProject&>(*n);
        auto it = shared.find(static_cast<const LogicalScan*>(&n->input()));
        if (it != shared.end() && std::all_of(p.exprs.begin(), p.exprs.end(), rewrite::is_deterministic))
          groups[it->second.get()].push_back(&p);
      }
      for (const auto& i : n->inputs) walk(i);
    };
    for (const auto& p : plans) walk(p);
    for (const auto& [union_node, projects] : groups) {
      if (projects.size() < 2) continue;
      const LogicalPtr& u = shared.at(static_cast<const LogicalScan*>(&projects.front()->input()));
      std::vector<ExprPtr> exprs;
      std::vector<std::string> names;
      std::map<std::string, std::size_t> column;  // name + expression -> union column
      std::map<std::string, std::string> by_name;  // name -> its expression (one per name)
      std::vector<Mapping> maps;
      bool clash = false;
      for (const auto* p : projects) {
        const auto& scan = static_cast<const LogicalScan&>(p->input());
        const Rewritten in{u, scan_map(scan, static_cast<const LogicalScan&>(*u))};
        Mapping m;
        for (std::size_t i = 0; i < p->exprs.size(); ++i) {
          ExprPtr e = over(p->exprs[i], in);
          const std::string& name = p->schema.name(i);
          std::string text = expr_to_json(*e).dump();
          auto [named, fresh_name] = by_name.try_emplace(name, text);
          clash = clash || named->second != text;
          auto [it, fresh] = column.try_emplace(name + "\x1f" + text, exprs.size());
          if (fresh) {
            exprs.push_back(e);
            names.push_back(name);
          }
          m.push_back(it->second);
        }
        maps.push_back(std::move(m));
      }
      if (clash) continue;  // one name for two columns: the consumers keep their Projects
      LogicalPtr up = make_project(u, std::move(exprs), std::move(names), projects.front()->pos);
      for (std::size_t k = 0; k < projects.size(); ++k) shared_projects.emplace(projects[k], Rewritten{up, maps[k]});
    }
  }

  Rewritten rewrite(const LogicalPtr& n) {
    if (auto it = done.find(n.get()); it != done.end()) return it->second;
    Rewritten r = rewrite_node(n);
    done.emplace(n.get(), r);
    return r;
  }

 private:
  std::map<const LogicalNode*, Rewritten> done;  // a node reached twice is rewritten once

  static ExprPtr over(const ExprPtr& e, const Rewritten& in) {
    if (!e) return e;
    return retype(rewrite::remap_columns(e, [&](std::size_t i) { return in.map.at(i); }), in.plan->schema);
  }

  // `in` as the columns `old` had (positions and types), for a node that reads them so.
  static LogicalPtr restore(const Rewritten& in, const LogicalPtr& old) {
    if (in.plan == old) return old;
    LogicalPtr out = in.map == identity(old->schema.size()) && in.plan->schema.size() == old->schema.size()
                         ? in.plan
                         : make_column_project(in.plan, in.map, old->pos);
    if (!(out->schema == old->schema)) throw GiveUp{};
    return out;
  }

  Rewritten rewrite_node(const LogicalPtr& n) {
    const std::size_t n_out = n->schema.size();
    switch (n->kind) {
      case LogicalKind::kScan: {
        const auto& s = static_cast<const LogicalScan&>(*n);
        auto it = shared.find(&s);
        if (it == shared.end()) return {n, identity(n_out)};
        return {it->second, scan_map(s, static_cast<const LogicalScan&>(*it->second))};
      }
      case LogicalKind::kFilter: {
        Rewritten in = rewrite(n->inputs[0]);
        if (in.plan == n->inputs[0]) return {n, identity(n_out)};
        auto f = std::static_pointer_cast<LogicalFilter>(
            std::const_pointer_cast<LogicalNode>(with_inputs(*n, {in.plan})));
        f->schema = in.plan->schema;
        f->condition = over(f->condition, in);
        return {f, in.map};
      }
      case LogicalKind::kWatermarkAssigner: {
        Rewritten in = rewrite(n->inputs[0]);
        if (in.plan == n->inputs[0]) return {n, identity(n_out)};
        auto w = std::static_pointer_cast<LogicalWatermarkAssigner>(
            std::const_pointer_cast<LogicalNode>(with_inputs(*n, {in.plan})));
        w->schema = in.plan->schema;
        w->rowtime = in.map.at(w->rowtime);
        w->watermark = over(w->watermark, in);
        return {w, in.map};
      }
      case LogicalKind::kProject: {
        if (auto it = shared_projects.find(n.get()); it != shared_projects.end()) return it->second;
        const auto& p = static_cast<const LogicalProject&>(*n);
        Rewritten in = rewrite(p.inputs[0]);
        if (in.plan == p.inputs[0]) return {n, identity(n_out)};
        std::vector<ExprPtr> exprs;
        std::vector<std::string> names;
        for (std::size_t i = 0; i < n_out; ++i) {
          exprs.push_back(over(p.exprs[i], in));
          names.push_back(p.schema.name(i));
        }
        return {make_project(in.plan, std::move(exprs), std::move(names), p.pos), identity(n_out)};
      }
      default: {
        std::vector<LogicalPtr> inputs;
        bool changed = false;
        for (const auto& i : n->inputs) {
          inputs.push_back(restore(rewrite(i), i));
          changed = changed || inputs.back() != i;
        }
        return {changed ? with_inputs(*n, std::move(inputs)) : n, identity(n_out)};
      }
    }
  }
};

}  // namespace

std::vector<LogicalPtr> reuse_scans(const std::vector<LogicalPtr>& plans) {
  std::map<std::string, std::vector<const LogicalScan*>> scans;
  for (const auto& p : plans) collect(p, false, scans);
  ScanReuser reuser;
  for (const auto& [key, group] : scans) {
    if (group.size() < 2) continue;
    if (auto u = union_scan(group))
      for (const auto* s : group) reuser.shared.emplace(s, u);
  }
  if (reuser.shared.empty()) return plans;
  try {
    reuser.share_projects(plans);
    std::vector<LogicalPtr> out;
    for (const auto& p : plans) out.push_back(reuser.rewrite(p).plan);
    return out;
  } catch (const GiveUp&) {
    return plans;
  }
}

}  // namespace clink::sql
