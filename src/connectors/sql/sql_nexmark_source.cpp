#include "clink/connectors/sql/sql_nexmark_source.hpp"

#include <cstring>
#include <optional>

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

// The fields of each event ROW in the order of Nexmark's DDL (the bid's with channel and
// url): a read ROW's child k is field fields[k] of these.
enum PersonField : std::uint8_t { kPId, kPName, kPEmail, kPCreditCard, kPCity, kPState, kPDateTime, kPExtra };
enum AuctionField : std::uint8_t {
  kAId, kAItemName, kADescription, kAInitialBid, kAReserve, kADateTime, kAExpires, kASeller, kACategory, kAExtra
};
enum BidField : std::uint8_t { kBAuction, kBBidder, kBPrice, kBChannel, kBUrl, kBDateTime, kBExtra };

void append_person(Column& row, const NexmarkPerson& p, const std::vector<std::uint8_t>& fields) {
  for (std::size_t k = 0; k < fields.size(); ++k) {
    Column& c = row.child(k);
    switch (fields[k]) {
      case kPId: c.append<std::int64_t>(p.id); break;
      case kPName: c.append_string(p.name); break;
      case kPEmail: c.append_string(p.email_address); break;
      case kPCreditCard: c.append_string(p.credit_card); break;
      case kPCity: c.append_string(p.city); break;
      case kPState: c.append_string(p.state); break;
      case kPDateTime: append_time(c, p.date_time); break;
      default: append_extra(c, p.extra); break;
    }
  }
  finish_nested_value(row);
}

void append_auction(Column& row, const NexmarkAuction& a, const std::vector<std::uint8_t>& fields) {
  for (std::size_t k = 0; k < fields.size(); ++k) {
    Column& c = row.child(k);
    switch (fields[k]) {
      case kAId: c.append<std::int64_t>(a.id); break;
      case kAItemName: c.append_string(a.item_name); break;
      case kADescription: c.append_string(a.description); break;
      case kAInitialBid: c.append<std::int64_t>(a.initial_bid); break;
      case kAReserve: c.append<std::int64_t>(a.reserve); break;
      case kADateTime: append_time(c, a.date_time); break;
      case kAExpires: append_time(c, a.expires); break;
      case kASeller: c.append<std::int64_t>(a.seller); break;
      case kACategory: c.append<std::int64_t>(a.category); break;
      default: append_extra(c, a.extra); break;
    }
  }
  finish_nested_value(row);
}

void append_bid(Column& row, const NexmarkBid& b, const std::vector<std::uint8_t>& fields) {
  for (std::size_t k = 0; k < fields.size(); ++k) {
    Column& c = row.child(k);
    switch (fields[k]) {
      case kBAuction: c.append<std::int64_t>(b.auction); break;
      case kBBidder: c.append<std::int64_t>(b.bidder); break;
      case kBPrice: c.append<std::int64_t>(b.price); break;
      case kBChannel: c.append_string(b.channel); break;
      case kBUrl: c.append_string(b.url); break;
      case kBDateTime: append_time(c, b.date_time); break;
      default: append_extra(c, b.extra); break;
    }
  }
  finish_nested_value(row);
}

class NexmarkSqlReader final : public SqlSourceReader {
 public:
  NexmarkSqlReader(std::unique_ptr<SourceReader<NexmarkEvent>> events, const std::vector<std::size_t>& projected,
                   const std::vector<std::vector<std::uint8_t>>& fields)
      : events_(std::move(events)), projected_(projected), fields_(fields) {}

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
      const std::vector<std::uint8_t>& fields = fields_[c];
      std::size_t nulls = 0;
      for (const auto& rec : scratch_.records) {
        const NexmarkEvent& e = rec.value;
        if (e.type != type) {
          ++nulls;
          continue;
        }
        append_nulls(col, nulls);
        nulls = 0;
        if (type == NexmarkEventType::kPerson) append_person(col, e.person, fields);
        else if (type == NexmarkEventType::kAuction) append_auction(col, e.auction, fields);
        else append_bid(col, e.bid, fields);
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
  const std::vector<std::vector<std::uint8_t>>& fields_;  // per projected column: its ROW's fields
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

namespace {

// Whether `declared` is one of Nexmark's table schemas; sets `channel_url` to its bid shape.
bool is_nexmark_schema(const Schema& declared, bool& channel_url) {
  channel_url = !(declared.size() == 4 && declared.type(kBid).is(TypeKind::kRow) &&
                  declared.type(kBid).fields().size() == 5);
  SchemaPtr expected = nexmark_table_schema(channel_url);
  bool same = declared.size() == expected->size();
  for (std::size_t i = 0; same && i < expected->size(); ++i)
    same = declared.name(i) == expected->name(i) && normalised(declared.type(i)) == normalised(expected->type(i));
  return same;
}

// The read ROW `read` (the declared one, or narrowed to some of its fields, in order):
// its fields' positions in Nexmark's full ROW `full`; nullopt when it is not such a ROW.
std::optional<std::vector<std::uint8_t>> row_fields(const LogicalType& read, const LogicalType& full) {
  if (!read.is(TypeKind::kRow)) return std::nullopt;
  std::vector<std::uint8_t> out;
  std::size_t next = 0;
  for (const auto& f : read.fields()) {
    while (next < full.fields().size() && full.fields()[next].name != f.name) ++next;
    if (next == full.fields().size() || normalised(f.type) != normalised(full.fields()[next].type)) return std::nullopt;
    out.push_back(static_cast<std::uint8_t>(next++));
  }
  return out;
}

template <class Draws>
Draws deepest(Draws a, Draws b) {
  return static_cast<std::uint8_t>(a) >= static_cast<std::uint8_t>(b) ? a : b;
}

// How far the generator must draw for the fields read (nexmark::NexmarkDraws).
nexmark::NexmarkDraws draws_for(const std::vector<std::size_t>& projected,
                                const std::vector<std::vector<std::uint8_t>>& fields) {
  using nexmark::AuctionDraws, nexmark::BidDraws, nexmark::PersonDraws;
  static constexpr PersonDraws kPersonOf[] = {PersonDraws::kNone,       PersonDraws::kName, PersonDraws::kEmail,
                                            PersonDraws::kCreditCard, PersonDraws::kCity, PersonDraws::kState,
                                            PersonDraws::kNone,       PersonDraws::kAll};
  static constexpr AuctionDraws kAuctionOf[] = {
      AuctionDraws::kNone,    AuctionDraws::kItemName, AuctionDraws::kDescription, AuctionDraws::kInitialBid,
      AuctionDraws::kReserve, AuctionDraws::kNone,     AuctionDraws::kExpires,     AuctionDraws::kSeller,
      AuctionDraws::kCategory, AuctionDraws::kAll};
  static constexpr BidDraws kBidOf[] = {BidDraws::kAuction, BidDraws::kBidder, BidDraws::kPrice, BidDraws::kChannel,
                                        BidDraws::kChannel, BidDraws::kNone,   BidDraws::kAll};
  nexmark::NexmarkDraws d{PersonDraws::kNone, AuctionDraws::kNone, BidDraws::kNone};
  for (std::size_t c = 0; c < projected.size(); ++c)
    for (std::uint8_t f : fields[c]) {
      if (projected[c] == kPerson) d.person = deepest(d.person, kPersonOf[f]);
      else if (projected[c] == kAuction) d.auction = deepest(d.auction, kAuctionOf[f]);
      else if (projected[c] == kBid) d.bid = deepest(d.bid, kBidOf[f]);
    }
  return d;
}

}  // namespace

NexmarkSqlSource::NexmarkSqlSource(std::map<std::string, std::string> options, SchemaPtr table_schema,
                                   std::vector<std::size_t> projected, SchemaPtr declared_schema)
    : projected_(std::move(projected)) {
  if (!declared_schema) declared_schema = table_schema;
  bool channel_url = true;
  if (!is_nexmark_schema(*declared_schema, channel_url))
    throw ClinkError("the nexmark table's schema must be " + nexmark_table_schema(channel_url)->to_string() +
                     " (Nexmark's DDL), got " + declared_schema->to_string());
  SchemaPtr full = nexmark_table_schema(true);
  bool narrowed_ok = table_schema->size() == full->size();
  for (std::size_t c : projected_) {
    if (c >= table_schema->size()) throw ClinkError("projected field " + std::to_string(c) + " is out of range");
    if (!narrowed_ok) break;
    if (c == kEventType) {
      fields_.emplace_back();
      continue;
    }
    auto f = row_fields(table_schema->type(c), full->type(c));
    if (!f || (table_schema->type(c).fields().size() < declared_schema->type(c).fields().size() && !channel_url)) {
      narrowed_ok = false;
      break;
    }
    fields_.push_back(std::move(*f));
  }
  if (!narrowed_ok)
    throw ClinkError("the nexmark source reads " + table_schema->to_string() + ", which is not " +
                     declared_schema->to_string() + " or its ROWs narrowed to some of their fields");
  if (!channel_url) {
    auto it = options.find("bid.channel-url");
    if (it != options.end() && it->second != "false")
      throw ClinkError("option 'bid.channel-url' = '" + it->second + "' needs a bid ROW with channel and url");
    options["bid.channel-url"] = "false";
  }
  nexmark::NexmarkSourceOptions parsed = nexmark::parse_nexmark_options(options);
  parsed.generator.draws = draws_for(projected_, fields_);
  events_ = std::make_shared<NexmarkSource>(std::move(parsed));
  std::vector<RowField> out;
  for (std::size_t i : projected_) out.push_back(table_schema->field(i));
  output_schema_ = make_schema(std::move(out));
}

std::unique_ptr<SqlSourceReader> NexmarkSqlSource::create_reader(int subtask, int parallelism) const {
  return std::make_unique<NexmarkSqlReader>(events_->create_reader(subtask, parallelism), projected_, fields_);
}

}  // namespace clink::sql
