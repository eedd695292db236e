#pragma once
// Helpers for the record format tests: decode messages into a batch and print its rows as
// Flink's print sink does ("+I[1, a]"), encode a batch's rows back to messages.
#include <memory>
#include <string>
#include <vector>

#include "clink/formats/record_format.hpp"
#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/common/time_zone.hpp"

namespace clink::test {

inline sql::SchemaPtr fields_of(std::vector<std::pair<std::string, std::string>> fields) {
  std::vector<sql::RowField> f;
  for (auto& [n, t] : fields) f.push_back({n, sql::parse_logical_type(t)});
  return sql::make_schema(std::move(f));
}

// Decodes each message into `batch` (its columns, all of them); a message without a row
// adds nothing, a failed one the line "ERROR: <reason>" (after checking the columns and
// kinds were left as they were).
inline std::vector<std::string> decode_into(sql::RecordDecoder& dec, sql::ColumnBatch& batch,
                                            const std::vector<std::string>& messages) {
  std::vector<std::string> out;
  std::vector<sql::Column*> cols;
  for (auto& c : batch.columns()) cols.push_back(&c);
  for (const auto& m : messages) {
    std::vector<sql::RowKind> kinds;
    std::string reason;
    std::size_t before = batch.size();
    int n = dec.decode(m, cols, kinds, reason);
    if (n < 0) {
      for (auto* c : cols)
        if (c->size() != before) out.push_back("COLUMNS CHANGED");
      if (!kinds.empty()) out.push_back("KINDS CHANGED");
      out.push_back("ERROR: " + reason);
      continue;
    }
    if (static_cast<std::size_t>(n) != kinds.size()) out.push_back("WRONG COUNT");
    for (sql::RowKind k : kinds) {
      batch.commit_rows(1, k);
      out.push_back(sql::format_row(batch, batch.size() - 1, *sql::TimeZone::utc()));
    }
  }
  batch.validate();
  return out;
}

inline std::vector<std::string> decode(std::string_view format, const sql::SchemaPtr& schema,
                                       const std::vector<std::string>& messages, const sql::FormatOptions& options = {},
                                       std::size_t* skipped = nullptr) {
  auto dec = sql::make_record_decoder(format, schema, options);
  sql::ColumnBatch batch(schema);
  auto rows = decode_into(*dec, batch, messages);
  if (skipped) *skipped = dec->skipped();
  return rows;
}

// Encodes every row of `batch` (with its kind); a row without a message gives "NONE".
inline std::vector<std::string> encode(std::string_view format, const sql::ColumnBatch& batch,
                                       const sql::FormatOptions& options = {}) {
  auto enc = sql::make_record_encoder(format, batch.schema(), options);
  std::vector<const sql::Column*> cols;
  for (std::size_t i = 0; i < batch.num_columns(); ++i) cols.push_back(&batch.column(i));
  std::vector<std::string> out;
  for (std::size_t r = 0; r < batch.size(); ++r) {
    std::string m;
    out.push_back(enc->encode(cols, r, batch.row_kind(r), m) ? m : "NONE");
  }
  return out;
}

inline sql::ColumnBatch batch_of(const sql::SchemaPtr& schema, const std::vector<std::vector<sql::Value>>& rows,
                            const std::vector<sql::RowKind>& kinds = {}) {
  sql::ColumnBatch b(schema);
  for (std::size_t i = 0; i < rows.size(); ++i) b.append_row(rows[i], kinds.empty() ? sql::RowKind::kInsert : kinds[i]);
  return b;
}

// The ClinkError message `f` throws, or "no error".
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ClinkError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace clink::test
