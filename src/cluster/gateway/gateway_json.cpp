#include "gateway_json.hpp"

#include <fmt/format.h>

namespace clink::cluster::gateway {

namespace {

const char* type_name(sql::TypeKind k) {
  using K = sql::TypeKind;
  switch (k) {
    case K::kNull: return "NULL";
    case K::kBoolean: return "BOOLEAN";
    case K::kTinyInt: return "TINYINT";
    case K::kSmallInt: return "SMALLINT";
    case K::kInt: return "INTEGER";
    case K::kBigInt: return "BIGINT";
    case K::kFloat: return "FLOAT";
    case K::kDouble: return "DOUBLE";
    case K::kDecimal: return "DECIMAL";
    case K::kChar: return "CHAR";
    case K::kVarChar: return "VARCHAR";
    case K::kBinary: return "BINARY";
    case K::kVarBinary: return "VARBINARY";
    case K::kDate: return "DATE";
    case K::kTime: return "TIME_WITHOUT_TIME_ZONE";
    case K::kTimestamp: return "TIMESTAMP_WITHOUT_TIME_ZONE";
    case K::kTimestampLtz: return "TIMESTAMP_WITH_LOCAL_TIME_ZONE";
    case K::kIntervalDayTime: return "INTERVAL_DAY_TIME";
    case K::kIntervalYearMonth: return "INTERVAL_YEAR_MONTH";
    case K::kArray: return "ARRAY";
    case K::kMap: return "MAP";
    case K::kRow: return "ROW";
  }
  return "RAW";
}

// Flink's DayTimeResolution / YearMonthResolution names.
const char* resolution_name(sql::IntervalUnit u) {
  using U = sql::IntervalUnit;
  switch (u) {
    case U::kYear: return "YEAR";
    case U::kYearToMonth: return "YEAR_TO_MONTH";
    case U::kMonth: return "MONTH";
    case U::kDay: return "DAY";
    case U::kDayToHour: return "DAY_TO_HOUR";
    case U::kDayToMinute: return "DAY_TO_MINUTE";
    case U::kDayToSecond: return "DAY_TO_SECOND";
    case U::kHour: return "HOUR";
    case U::kHourToMinute: return "HOUR_TO_MINUTE";
    case U::kHourToSecond: return "HOUR_TO_SECOND";
    case U::kMinute: return "MINUTE";
    case U::kMinuteToSecond: return "MINUTE_TO_SECOND";
    case U::kSecond: return "SECOND";
    case U::kNone: break;
  }
  return "DAY_TO_SECOND";
}

// A printed number cell as a JSON number (it was printed by clink from a number).
json number(const std::string& cell) {
  json n = json::parse(cell, nullptr, /*allow_exceptions=*/false);
  return n.is_number() ? n : json(cell);  // NaN / Infinity stay strings
}

}  // namespace

json logical_type_json(const sql::LogicalType& t) {
  using K = sql::TypeKind;
  json j{{"type", type_name(t.kind())}, {"nullable", t.nullable()}};
  switch (t.kind()) {
    case K::kChar:
    case K::kVarChar:
    case K::kBinary:
    case K::kVarBinary: j["length"] = t.length(); break;
    case K::kDecimal:
      j["precision"] = t.precision();
      j["scale"] = t.scale();
      break;
    case K::kTime:
    case K::kTimestamp:
    case K::kTimestampLtz: j["precision"] = t.precision(); break;
    case K::kIntervalDayTime:
      j["precision"] = t.precision();
      j["fractionalPrecision"] = t.scale();
      j["resolution"] = resolution_name(t.interval_unit());
      break;
    case K::kIntervalYearMonth:
      j["precision"] = t.precision();
      j["resolution"] = resolution_name(t.interval_unit());
      break;
    case K::kArray: j["elementType"] = logical_type_json(t.element_type()); break;
    case K::kMap:
      j["keyType"] = logical_type_json(t.key_type());
      j["valueType"] = logical_type_json(t.value_type());
      break;
    case K::kRow: {
      json fields = json::array();
      for (const auto& f : t.fields()) fields.push_back({{"name", f.name}, {"fieldType", logical_type_json(f.type)}});
      j["fields"] = std::move(fields);
      break;
    }
    default: break;
  }
  return j;
}

json columns_json(const std::vector<ResultColumn>& columns) {
  json out = json::array();
  for (const auto& c : columns)
    out.push_back({{"name", c.name}, {"logicalType", logical_type_json(sql::parse_logical_type(c.type))}, {"comment", nullptr}});
  return out;
}

const char* row_kind_name(sql::RowKind kind) {
  switch (kind) {
    case sql::RowKind::kInsert: return "INSERT";
    case sql::RowKind::kUpdateBefore: return "UPDATE_BEFORE";
    case sql::RowKind::kUpdateAfter: return "UPDATE_AFTER";
    case sql::RowKind::kDelete: return "DELETE";
  }
  return "INSERT";
}

const char* row_format_name(RowFormat format) { return format == RowFormat::kJson ? "JSON" : "PLAIN_TEXT"; }

json row_json(const ResultRow& row, const std::vector<sql::LogicalType>& types, RowFormat format) {
  using K = sql::TypeKind;
  json fields = json::array();
  for (std::size_t i = 0; i < row.cells.size(); ++i) {
    const auto& cell = row.cells[i];
    if (!cell) {
      fields.push_back(nullptr);
      continue;
    }
    if (format == RowFormat::kPlainText || i >= types.size()) {
      fields.push_back(*cell);
      continue;
    }
    const sql::LogicalType& t = types[i];
    if (auto nested = row.nested_json.find(i); nested != row.nested_json.end()) {
      fields.push_back(json::parse(nested->second));  // ROW: an object, ARRAY: an array, MAP: an object
    } else if (t.is_numeric()) {
      fields.push_back(number(*cell));
    } else if (t.is(K::kBoolean)) {
      fields.push_back(*cell == "TRUE" || *cell == "true");
    } else if (t.is(K::kTimestamp) || t.is(K::kTimestampLtz)) {
      // RowDataToJsonConverters: ISO-8601, 'T' between date and time ('Z' for an instant).
      std::string iso = *cell;
      if (auto sp = iso.find(' '); sp != std::string::npos) iso[sp] = 'T';
      if (t.is(K::kTimestampLtz)) iso += 'Z';
      fields.push_back(std::move(iso));
    } else {
      fields.push_back(*cell);
    }
  }
  return json{{"kind", row_kind_name(row.kind)}, {"fields", std::move(fields)}};
}

}  // namespace clink::cluster::gateway
