#include "clink/connectors/sql/sql_nexmark_source.hpp"

#include <cstring>

#include "clink/core/error.hpp"
#include "clink/formats/sql_text_values.hpp"
#include "clink/sql/common/temporal.hpp"

namespace clink::sql {

namespace {

// Column indices of the table.
enum : std::size_t { kEventType = 0, kPerson = 1, kAuction = 2, kBid = 3 };

// VARCHAR of any length reads as STRING: Flink's DDL `VARCHAR` is VARCHAR(MAX).
LogicalType normalised(const LogicalType& t) {
  switch (t.kind()) {
    case TypeKind::kVarChar: return LogicalType::string();
    case TypeKind::kRow: {
      std::vector<RowField> fields;
      for (const auto& f : t.fields()) fields.push_back({f.name, normalised(f.type)});
      return LogicalType::row(std::move(fields));
    }
    default: return t.with_nullable(true);
  }
}

void append_view(Column& col, std::string_view s) { col.append_string(s); }

// `extra` straight into the arena: no string in between.
void append_extra(Column& col, const NexmarkExtra& extra) {
  Buffer& arena = col.arena();
  std::size_t at = arena.size();
  arena.resize(at + extra.size());
  if (extra.size() > 0) extra.write(reinterpret_cast<char*>(arena.data()) + at);
  auto end = static_cast<std::uint32_t>(arena.size());
  std::size_t row = col.size();
  col.grow_validity(row + 1);
  col.values_buffer().append(&end, sizeof end);
  col.set_valid(row, true);
  col.set_size(row + 1);
}

// `n` NULLs at once, Column::append_null's effect in bulk: 92 % of Nexmark's events are
// bids, so the person and auction structs are NULL in runs, and row by row their
// children cost more than generating the events.
void append_nulls(Column& col, std::size_t n) {
  if (n == 0) return;
  const std::size_t size = col.size();
  col.grow_validity(size + n);
  std::uint64_t* bits = col.validity();
  for (std::size_t i = size; i < size + n; ++i) bits[i >> 6] &= ~(std::uint64_t(1) << (i & 63));
  Buffer& values = col.values_buffer();
  switch (col.layout()) {
    case PhysicalLayout::kFixed: {
      const std::size_t width = static_cast<std::size_t>(fixed_width(col.type().kind()));
      const std::size_t at = values.size();
      values.resize(at + n * width);
      std::memset(values.data() + at, 0, n * width);
      break;
    }
    case PhysicalLayout::kVarLen:
    case PhysicalLayout::kList:
    case PhysicalLayout::kMap: {
      const std::uint32_t end = col.offsets()[size];
      const std::size_t at = values.size();
      values.resize(at + n * sizeof end);
      auto* out = reinterpret_cast<std::uint32_t*>(values.data() + at);
      for (std::size_t i = 0; i < n; ++i) out[i] = end;
      break;
    }
    case PhysicalLayout::kStruct:
      for (auto& c : col.children()) append_nulls(c, n);
      break;
    case PhysicalLayout::kNull: break;
  }
  col.set_size(size + n);
}

void append_time(Column& col, std::int64_t millis) { col.append<std::int64_t>(millis * kMicrosPerMilli); }

void append_person(Column& row, const NexmarkPerson& p) {
  row.child(0).append<std::int64_t>(p.id);
  append_view(row.child(1), p.name);
  append_view(row.child(2), p.email_address);
  append_view(row.child(3), p.credit_card);
  append_view(row.child(4), p.city);
  append_view(row.child(5), p.state);
  append_time(row.child(6), p.date_time);
  append_extra(row.child(7), p.extra);
  finish_nested_value(row);
}

void append_auction(Column& row, const NexmarkAuction& a) {
  row.child(0).append<std::int64_t>(a.id);
  append_view(row.child(1), a.item_name);
  append_view(row.child(2), a.description);
  row.child(3).append<std::int64_t>(a.initial_bid);
  row.child(4).append<std::int64_t>(a.reserve);
  append_time(row.child(5), a.date_time);
  append_time(row.child(6), a.expires);
  row.child(7).append<std::int64_t>(a.seller);
  row.child(8).append<std::int64_t>(a.category);
  append_extra(row.child(9), a.extra);
  finish_nested_value(row);
}

void append_bid(Column& row, const NexmarkBid& b) {
  std::size_t c = 0;
  row.child(c++).append<std::int64_t>(b.auction);
  row.child(c++).append<std::int64_t>(b.bidder);
  row.child(c++).append<std::int64_t>(b.price);
  if (row.num_children() == 7) {
    append_view(row.child(c++), b.channel);
    append_view(row.child(c++), b.url);
  }
  append_time(row.child(c++), b.date_time);
  append_extra(row.child(c), b.extra);
  finish_nested_value(row);
}

class NexmarkSqlReader final : public SqlSourceReader {
 public:
  NexmarkSqlReader(std::unique_ptr<SourceReader<NexmarkEvent>> events, const std::vector<std::size_t>& projected)
      : events_(std::move(events)), projected_(projected) {}

  void open(RuntimeContext& ctx) override { events_->open(ctx); }
  Status poll(ColumnBatch& out, std::size_t max_rows) override {
    scratch_.records.clear();  // reused: events are trivially copyable values
    Status s = events_->poll(scratch_, max_rows);
    auto& times = out.event_times();
    // Column by column: a struct's NULLs (the other event types) go in as runs.
    for (std::size_t c = 0; c < projected_.size(); ++c) {
      Column& col = out.column(c);
      if (projected_[c] == kEventType) {
        for (const auto& rec : scratch_.records) col.append<std::int32_t>(static_cast<std::int32_t>(rec.value.type));
        continue;
      }
      const NexmarkEventType type = projected_[c] == kPerson    ? NexmarkEventType::kPerson
                                    : projected_[c] == kAuction ? NexmarkEventType::kAuction
                                                                : NexmarkEventType::kBid;
      std::size_t nulls = 0;
      for (const auto& rec : scratch_.records) {
        const NexmarkEvent& e = rec.value;
        if (e.type != type) {
          ++nulls;
          continue;
        }
        append_nulls(col, nulls);
        nulls = 0;
        if (type == NexmarkEventType::kPerson) append_person(col, e.person);
        else if (type == NexmarkEventType::kAuction) append_auction(col, e.auction);
        else append_bid(col, e.bid);
      }
      append_nulls(col, nulls);
    }
    std::size_t before = times.size();
    out.commit_rows(scratch_.records.size());
    for (std::size_t i = 0; i < scratch_.records.size(); ++i) times[before + i] = scratch_.records[i].event_time;
    return s;
  }
  std::int64_t wait_hint_ms() const override { return events_->wait_hint_ms(); }
  void close() override { events_->close(); }
  std::vector<std::string> snapshot_splits() const override { return *events_->snapshot_splits(); }
  void restore_splits(std::vector<std::string> splits) override { events_->restore_splits(std::move(splits)); }

 private:
  std::unique_ptr<SourceReader<NexmarkEvent>> events_;
  const std::vector<std::size_t>& projected_;
  Batch<NexmarkEvent> scratch_;
};

}  // namespace

SchemaPtr nexmark_table_schema(bool with_channel_url) {
  auto s = LogicalType::string();
  auto big = LogicalType::bigint();
  auto ts = LogicalType::timestamp(3);
  std::vector<RowField> bid = {{"auction", big}, {"bidder", big}, {"price", big}};
  if (with_channel_url) {
    bid.push_back({"channel", s});
    bid.push_back({"url", s});
  }
  bid.push_back({"dateTime", ts});
  bid.push_back({"extra", s});
  return make_schema({
      {"event_type", LogicalType::int_type()},
      {"person", LogicalType::row({{"id", big}, {"name", s}, {"emailAddress", s}, {"creditCard", s}, {"city", s},
                                   {"state", s}, {"dateTime", ts}, {"extra", s}})},
      {"auction", LogicalType::row({{"id", big}, {"itemName", s}, {"description", s}, {"initialBid", big},
                                    {"reserve", big}, {"dateTime", ts}, {"expires", ts}, {"seller", big},
                                    {"category", big}, {"extra", s}})},
      {"bid", LogicalType::row(std::move(bid))},
  });
}

NexmarkSqlSource::NexmarkSqlSource(std::map<std::string, std::string> options, SchemaPtr table_schema,
                                   std::vector<std::size_t> projected)
    : projected_(std::move(projected)) {
  bool channel_url = true;
  if (table_schema->size() == 4 && table_schema->type(kBid).is(TypeKind::kRow) &&
      table_schema->type(kBid).fields().size() == 5)
    channel_url = false;
  SchemaPtr expected = nexmark_table_schema(channel_url);
  bool same = table_schema->size() == expected->size();
  for (std::size_t i = 0; same && i < expected->size(); ++i)
    same = table_schema->name(i) == expected->name(i) && normalised(table_schema->type(i)) == normalised(expected->type(i));
  if (!same)
    throw ClinkError("the nexmark table's schema must be " + expected->to_string() + " (Nexmark's DDL), got " +
                     table_schema->to_string());
  if (!channel_url) {
    auto it = options.find("bid.channel-url");
    if (it != options.end() && it->second != "false")
      throw ClinkError("option 'bid.channel-url' = '" + it->second + "' needs a bid ROW with channel and url");
    options["bid.channel-url"] = "false";
  }
  events_ = NexmarkSource::from_options(options);
  std::vector<RowField> out;
  for (std::size_t i : projected_) {
    if (i >= table_schema->size()) throw ClinkError("projected field " + std::to_string(i) + " is out of range");
    out.push_back(table_schema->field(i));
  }
  output_schema_ = make_schema(std::move(out));
}

std::unique_ptr<SqlSourceReader> NexmarkSqlSource::create_reader(int subtask, int parallelism) const {
  return std::make_unique<NexmarkSqlReader>(events_->create_reader(subtask, parallelism), projected_);
}

}  // namespace clink::sql
