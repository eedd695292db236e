#pragma once
// The `nexmark` table source: Nexmark's generator (connectors/nexmark/) as the table of
// nexmark/nexmark's Flink DDL (nexmark-flink queries/ddl_gen.sql):
//   event_type INT,
//   person  ROW<id BIGINT, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR,
//               city VARCHAR, state VARCHAR, dateTime TIMESTAMP(3), extra VARCHAR>,
//   auction ROW<id BIGINT, itemName VARCHAR, description VARCHAR, initialBid BIGINT,
//               reserve BIGINT, dateTime TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT,
//               category BIGINT, extra VARCHAR>,
//   bid     ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR,
//               dateTime TIMESTAMP(3), extra VARCHAR>
// (the computed `dateTime` column, its watermark and the person / auction / bid views
// are SQL in that DDL, planned like any other). A bid ROW without channel and url (the
// DDL of Nexmark releases before those fields) is accepted and generates bids as those
// releases did (bid.channel-url = false). The two kinds of event an event is not are
// NULL rows. Events go straight from the generator into the columns: strings from the
// generator's tables and inline buffers, `extra` written into the column's arena; each
// row's event time is its dateTime. Only projected columns are filled, and of a ROW
// narrowed to some fields (nested projection push-down) only those; the generator then
// draws each event only as far as the last field read (nexmark::NexmarkDraws).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "clink/connectors/nexmark/nexmark_source.hpp"
#include "clink/connectors/sql/sql_source.hpp"

namespace clink::sql {

// Nexmark's datagen table schema; `with_channel_url` selects the bid row's shape.
SchemaPtr nexmark_table_schema(bool with_channel_url = true);

class NexmarkSqlSource final : public SqlSource {
 public:
  // `declared_schema` (null: `table_schema`) must be nexmark_table_schema() (either bid
  // shape; VARCHAR of any length); `table_schema` is what is read: it, or with ROWs
  // narrowed to some of their fields (nested projection push-down); `projected` indexes
  // it. Throws ClinkError naming the difference.
  NexmarkSqlSource(std::map<std::string, std::string> options, SchemaPtr table_schema,
                   std::vector<std::size_t> projected, SchemaPtr declared_schema = nullptr);
  std::unique_ptr<SqlSourceReader> create_reader(int subtask, int parallelism) const override;
  const SchemaPtr& output_schema() const override { return output_schema_; }
  std::string factory_name() const override { return "sql_nexmark_source"; }

 private:
  std::shared_ptr<NexmarkSource> events_;
  std::vector<std::size_t> projected_;
  std::vector<std::vector<std::uint8_t>> fields_;  // per projected column: its ROW's fields (full-DDL positions)
  SchemaPtr output_schema_;
};

}  // namespace clink::sql
