#include "clink/sql/planner/changelog_mode.hpp"

#include <fmt/format.h>

#include "clink/sql/function/process_table_function.hpp"
#include "clink/sql/planner/plan_properties.hpp"
#include "clink/sql/planner/rank_plan.hpp"
#include "clink/sql/spec/connector_table.hpp"

namespace clink::sql {

namespace {

std::string where(const LogicalNode& n) {
  if (!n.pos.known()) return construct_name(n);
  return fmt::format("{} at line {}, column {}", construct_name(n), n.pos.line, n.pos.column);
}

ChangelogMode updating_from(const LogicalNode& producer) {
  ChangelogMode m;
  m.kind = ChangelogMode::Kind::kRetract;
  m.producer = &producer;
  return m;
}

void require_insert_only(const LogicalNode& consumer, const ChangelogMode& in, const char* what) {
  if (!in.updating()) return;
  throw TranslationError(consumer.pos, fmt::format("{} cannot consume updates, but its input produces them ({})", what,
                                                   where(*in.producer)));
}

}  // namespace

std::string ChangelogMode::to_string() const {
  switch (kind) {
    case Kind::kInsertOnly: return "insert-only";
    case Kind::kRetract: return "retract";
    case Kind::kUpsert: {
      std::string s = "upsert[";
      for (std::size_t i = 0; i < upsert_key.size(); ++i) s += (i ? ", " : "") + upsert_key[i];
      return s + "]";
    }
  }
  return "?";
}

std::string construct_name(const LogicalNode& node) {
  switch (node.kind) {
    case LogicalKind::kAggregate: {
      const auto& a = static_cast<const LogicalAggregate&>(node);
      if (a.distinct_only) return "DISTINCT";
      return a.keys.empty() ? "a global aggregate" : "GROUP BY";
    }
    case LogicalKind::kJoin: {
      switch (static_cast<const LogicalJoin&>(node).type) {
        case LogicalJoin::Type::kLeft: return "LEFT JOIN";
        case LogicalJoin::Type::kRight: return "RIGHT JOIN";
        case LogicalJoin::Type::kFull: return "FULL JOIN";
        case LogicalJoin::Type::kSemi: return "a semi join (IN / EXISTS / INTERSECT)";
        case LogicalJoin::Type::kAnti: return "an anti join (NOT IN / NOT EXISTS / EXCEPT)";
        default: return "JOIN";
      }
    }
    case LogicalKind::kWindowAggregate: return "the window aggregate";
    case LogicalKind::kOverAggregate: return "the OVER aggregate";
    case LogicalKind::kMatch: return "MATCH_RECOGNIZE";
    case LogicalKind::kProcessTableFunction: return "the process table function";
    case LogicalKind::kSort: return "ORDER BY";
    case LogicalKind::kRank: return "the Top-N";
    case LogicalKind::kLimit: return "LIMIT";
    case LogicalKind::kScan: {  // a CDC source's updates
      const TableDef& t = static_cast<const LogicalScan&>(node).table;
      return fmt::format("the {} source of `{}`", t.connector(), t.name);
    }
    default: return "the query";
  }
}

ChangelogMode changelog_mode(const LogicalNode& node) {
  PlanProperties props;
  return props.changelog(node);
}

// One node's mode from its inputs' (each derived once, through the memo).
ChangelogMode PlanProperties::derive_changelog(const LogicalNode& node) {
  switch (node.kind) {
    case LogicalKind::kScan: {
      // What the connector emits: insert-only, or a CDC source's updates.
      const auto& table = static_cast<const LogicalScan&>(node).table;
      const ConnectorDescriptor* d = find_sql_connector(table.connector());
      ChangelogMode m;
      if (d && d->is_source()) {
        // An upsert source reaches the plan normalised into a retract stream.
        ChangelogKind k = d->source_changelog_for(table.options);
        if (k != ChangelogKind::kInsertOnly) {
          m.kind = ChangelogKind::kRetract;
          m.producer = &node;
        }
      }
      return m;
    }
    case LogicalKind::kValues: return {};
    case LogicalKind::kWatermarkAssigner:
    case LogicalKind::kProject:
    case LogicalKind::kFilter:
    case LogicalKind::kCorrelate:
    case LogicalKind::kLookupJoin:
    case LogicalKind::kVectorSearch: return changelog(node.input());  // row kinds follow their rows
    case LogicalKind::kWindowTvf: {
      const ChangelogMode& in = changelog(node.input());
      require_insert_only(node, in, "a window table function");
      return in;
    }
    case LogicalKind::kAggregate: {
      const ChangelogMode& in = changelog(node.input());  // validates below; GROUP BY consumes retractions
      if (in.updating())
        for (const auto& a : static_cast<const LogicalAggregate&>(node).aggregates)
          if (!a.retractable)
            throw TranslationError(node.pos, fmt::format("{}: the aggregate function {} cannot retract, but its input "
                                                         "produces updates ({})",
                                                         construct_name(node), a.function, where(*in.producer)));
      return updating_from(node);
    }
    case LogicalKind::kWindowAggregate: {
      const ChangelogMode& in = changelog(node.input());
      require_insert_only(node, in, fmt::format("The window aggregate ({})", where(node)).c_str());
      return {};
    }
    case LogicalKind::kUnion: {
      ChangelogMode out;
      for (const auto& i : node.inputs) {
        const ChangelogMode& m = changelog(*i);
        if (m.updating() && !out.updating()) out = m;
      }
      return out;
    }
    case LogicalKind::kProcessTableFunction: {
      // Its table argument is consumed as an append-only table (Flink's default
      // ArgumentTrait), unless the function declares SUPPORT_UPDATES; it emits inserts.
      const auto& ptf = static_cast<const LogicalProcessTableFunction&>(node);
      const ProcessTableFunctionDef* def = ProcessTableFunctionRegistry::process().find(ptf.function);
      for (std::size_t t = 0; t < node.inputs.size(); ++t) {
        const ChangelogMode& in = changelog(node.input(t));
        if (!def || !def->signature.supports_updates) {
          require_insert_only(node, in, "A process table function");
        } else if (in.updating() && !ptf.tables[t].order_keys.empty()) {  // ORDER BY waits for the watermark
          throw TranslationError(node.pos, fmt::format("A process table function's ORDER BY needs an insert-only "
                                                       "table, but its input produces updates ({})",
                                                       where(*in.producer)));
        }
      }
      return {};
    }
    case LogicalKind::kMatch: {
      // As Flink's StreamPhysicalMatch: insert-only in and out.
      const ChangelogMode& in = changelog(node.input());
      require_insert_only(node, in, "MATCH_RECOGNIZE");
      return {};
    }
    case LogicalKind::kOverAggregate: {
      // As Flink's StreamPhysicalOverAggregate: insert-only in and out, but for a non-time
      // order (Flink 2.1+): any input, and each row can update the rows after it.
      const ChangelogMode& in = changelog(node.input());
      if (over_is_nontime(static_cast<const LogicalOverAggregate&>(node))) return updating_from(node);
      require_insert_only(node, in, "An OVER aggregate");
      return {};
    }
    case LogicalKind::kSort:
    case LogicalKind::kLimit: {
      const ChangelogMode& in = changelog(node.input());
      require_insert_only(node, in, node.kind == LogicalKind::kSort ? "ORDER BY" : "LIMIT");
      return {};
    }
    case LogicalKind::kJoin: {
      const auto& j = static_cast<const LogicalJoin&>(node);
      const ChangelogMode& l = changelog(node.input(0));
      const ChangelogMode& r = changelog(node.input(1));
      const JoinAnalysis& a = join(j);
      if (a.temporal) {
        // The versioned side may update (each change is a version); the probe side is
        // joined once per row when the watermark passes it, so it must only insert.
        require_insert_only(node, l, "The left (probe) side of an event-time temporal join");
        return {};
      }
      if (a.interval || a.window) {
        // Time attributes and windows only exist on insert-only streams; these joins append.
        const char* what = a.interval ? "An interval join" : "A window join";
        require_insert_only(node, l, what);
        require_insert_only(node, r, what);
        return {};
      }
      if (j.semi_or_anti()) {
        // Left rows pass with their own kind; a right row arriving or leaving retracts or
        // (re)emits left rows, which an anti join always does (a right insert retracts).
        if (j.type == LogicalJoin::Type::kSemi && !r.updating()) return l;
        if (l.kind == ChangelogMode::Kind::kRetract) return l;
        return updating_from(node);
      }
      if (j.type != LogicalJoin::Type::kInner) return updating_from(node);
      if (l.updating()) return l;
      return r;
    }
    case LogicalKind::kRank: {
      const RankAnalysis& a = rank(static_cast<const LogicalRank&>(node));
      const ChangelogMode& in = changelog(node.input());
      switch (a.kind) {
        case RankAnalysis::Kind::kTopN: return updating_from(node);  // Retract takes updates
        case RankAnalysis::Kind::kDeduplicate:
          require_insert_only(node, in, "A deduplication");
          // Keep-first emits each key's row once (proctime: the first to arrive; rowtime: the
          // earliest, when the watermark passes it), Flink's insert-only deduplicate.
          if (!a.keep_last) return {};
          return updating_from(node);
        case RankAnalysis::Kind::kWindowTopN:
        case RankAnalysis::Kind::kWindowDeduplicate:
          require_insert_only(node, in, a.kind == RankAnalysis::Kind::kWindowTopN ? "A window Top-N" : "A window deduplication");
          return {};
      }
      return {};
    }
    case LogicalKind::kSink: {
      const auto& s = static_cast<const LogicalSink&>(node);
      const ChangelogMode& in = changelog(node.input());
      if (in.updating() && !s.table.primary_key.empty()) {
        ChangelogMode m = in;
        m.kind = ChangelogMode::Kind::kUpsert;
        m.upsert_key = s.table.primary_key;
        return m;
      }
      return in;
    }
  }
  return {};
}

void check_sink_changelog(const LogicalSink& sink, PlanProperties& props) {
  const ChangelogMode& mode = props.changelog(sink.input());
  if (!mode.updating()) return;
  std::string connector = sink.table.connector();
  const bool has_key = !sink.table.primary_key.empty();
  if (const ConnectorDescriptor* d = find_sql_connector(connector); d && d->is_sink()) {
    if (sink_changelog_kind(*d, sink.table.options, mode.kind, has_key)) return;
    if (d->sink_changelog_for(sink.table.options).upsert)  // an upsert sink without a key to upsert by
      throw TranslationError(sink.pos, fmt::format("INSERT INTO {}: the query produces updates ({}) but the {} sink "
                                                   "takes them only by a PRIMARY KEY, which the table does not declare",
                                                   sink.table.name, where(*mode.producer), connector));
  }
  throw TranslationError(sink.pos, fmt::format("INSERT INTO {}: the query produces updates ({}) but the {} sink only "
                                               "accepts inserts",
                                               sink.table.name, where(*mode.producer),
                                               connector.empty() ? "unnamed" : connector));
}

}  // namespace clink::sql
