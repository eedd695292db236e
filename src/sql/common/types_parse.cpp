// Parsing of the textual type form (what LogicalType::to_string prints, plus the usual
// SQL spellings). The SQL parser has its own type syntax over the AST; this one serves
// catalogs, specs and tests that carry types as text.
#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "clink/sql/common/multiset_type.hpp"
#include "clink/sql/common/types.hpp"

namespace clink::sql {

namespace {

class TypeTextParser {
 public:
  explicit TypeTextParser(std::string_view text) : text_(text) {}

  LogicalType parse_all() {
    LogicalType t = parse_type();
    skip_ws();
    if (pos_ != text_.size()) fail("unexpected text after the type");
    return t;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw SqlTypeError(fmt::format("cannot parse type '{}': {} at offset {}", text_, what, pos_));
  }
  void skip_ws() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  // Next word upper-cased (letters, digits, underscore); empty when none.
  std::string peek_word() {
    skip_ws();
    std::size_t p = pos_;
    std::string w;
    while (p < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[p])) || text_[p] == '_'))
      w += static_cast<char>(std::toupper(static_cast<unsigned char>(text_[p++])));
    return w;
  }
  std::string word() {
    std::string w = peek_word();
    pos_ += w.size();
    return w;
  }
  bool accept_word(std::string_view w) {
    std::size_t save = pos_;
    if (peek_word() == w) {
      pos_ += w.size();
      return true;
    }
    pos_ = save;
    return false;
  }
  void expect_word(std::string_view w) {
    if (!accept_word(w)) fail(fmt::format("expected {}", w));
  }
  bool accept(char c) {
    skip_ws();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!accept(c)) fail(fmt::format("expected '{}'", c));
  }
  std::int64_t number() {
    skip_ws();
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(text_.data() + pos_, text_.data() + text_.size(), v);
    if (ec != std::errc()) fail("expected a number");
    pos_ = static_cast<std::size_t>(p - text_.data());
    return v;
  }
  std::optional<std::int64_t> optional_param() {
    if (!accept('(')) return std::nullopt;
    auto v = number();
    expect(')');
    return v;
  }
  std::string identifier() {
    skip_ws();
    if (accept('`')) {
      std::string s;
      while (pos_ < text_.size()) {
        if (text_[pos_] == '`') {
          if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '`') {
            s += '`';
            pos_ += 2;
            continue;
          }
          ++pos_;
          return s;
        }
        s += text_[pos_++];
      }
      fail("unterminated quoted identifier");
    }
    std::size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
    if (start == pos_) fail("expected a field name");
    return std::string(text_.substr(start, pos_ - start));
  }

  LogicalType parse_type() {
    LogicalType t = parse_base();
    // Postfix forms: "INT ARRAY", "INT NOT NULL", "INT NULL".
    for (;;) {
      if (accept_word("ARRAY")) {
        t = LogicalType::array(t);
        continue;
      }
      if (accept_word("MULTISET")) {
        t = multiset_type(t);
        continue;
      }
      if (accept_word("NOT")) {
        expect_word("NULL");
        t = t.not_null();
        continue;
      }
      if (accept_word("NULL")) continue;
      break;
    }
    return t;
  }

  LogicalType parse_interval() {
    std::string first = word();
    auto leading = optional_param();
    if (first == "YEAR" || first == "MONTH") {
      if (first == "YEAR" && accept_word("TO")) {
        expect_word("MONTH");
        return LogicalType::interval_year_month(IntervalUnit::kYearToMonth, static_cast<int>(leading.value_or(2)));
      }
      return LogicalType::interval_year_month(first == "YEAR" ? IntervalUnit::kYear : IntervalUnit::kMonth,
                                             static_cast<int>(leading.value_or(2)));
    }
    static const std::pair<const char*, int> kOrder[] = {{"DAY", 0}, {"HOUR", 1}, {"MINUTE", 2}, {"SECOND", 3}};
    auto rank = [&](const std::string& w) {
      for (auto& [n, r] : kOrder)
        if (w == n) return r;
      fail("expected an interval unit");
    };
    int from = rank(first), to = from;
    std::optional<std::int64_t> fraction = first == "SECOND" ? leading : std::nullopt;
    if (accept_word("TO")) {
      to = rank(word());
      if (to <= from) fail("an interval range must go from a larger to a smaller unit");
      if (to == 3) fraction = optional_param();
    }
    static const IntervalUnit kUnits[4][4] = {
        {IntervalUnit::kDay, IntervalUnit::kDayToHour, IntervalUnit::kDayToMinute, IntervalUnit::kDayToSecond},
        {IntervalUnit::kNone, IntervalUnit::kHour, IntervalUnit::kHourToMinute, IntervalUnit::kHourToSecond},
        {IntervalUnit::kNone, IntervalUnit::kNone, IntervalUnit::kMinute, IntervalUnit::kMinuteToSecond},
        {IntervalUnit::kNone, IntervalUnit::kNone, IntervalUnit::kNone, IntervalUnit::kSecond}};
    int lead = from == 3 ? 2 : static_cast<int>(leading.value_or(2));
    return LogicalType::interval_day_time(kUnits[from][to], lead, static_cast<int>(fraction.value_or(6)));
  }

  LogicalType parse_base() {
    std::string w = word();
    if (w.empty()) fail("expected a type name");
    if (w == "NULL") return LogicalType::null_type();
    if (w == "BOOLEAN" || w == "BOOL") return LogicalType::boolean();
    if (w == "TINYINT") return LogicalType::tinyint();
    if (w == "SMALLINT") return LogicalType::smallint();
    if (w == "INT" || w == "INTEGER") return LogicalType::int_type();
    if (w == "BIGINT") return LogicalType::bigint();
    if (w == "FLOAT" || w == "REAL") return LogicalType::float_type();
    if (w == "DOUBLE") {
      accept_word("PRECISION");
      return LogicalType::double_type();
    }
    if (w == "DECIMAL" || w == "DEC" || w == "NUMERIC") {
      std::int64_t p = 10, s = 0;
      if (accept('(')) {
        p = number();
        if (accept(',')) s = number();
        expect(')');
      }
      return LogicalType::decimal(static_cast<int>(p), static_cast<int>(s));
    }
    if (w == "STRING") return LogicalType::string();
    if (w == "BYTES") return LogicalType::bytes();
    if (w == "CHAR" || w == "CHARACTER") {
      if (accept_word("VARYING")) return LogicalType::varchar(static_cast<std::int32_t>(optional_param().value_or(1)));
      return LogicalType::char_type(static_cast<std::int32_t>(optional_param().value_or(1)));
    }
    if (w == "VARCHAR") return LogicalType::varchar(static_cast<std::int32_t>(optional_param().value_or(1)));
    if (w == "BINARY") {
      if (accept_word("VARYING")) return LogicalType::varbinary(static_cast<std::int32_t>(optional_param().value_or(1)));
      return LogicalType::binary(static_cast<std::int32_t>(optional_param().value_or(1)));
    }
    if (w == "VARBINARY") return LogicalType::varbinary(static_cast<std::int32_t>(optional_param().value_or(1)));
    if (w == "DATE") return LogicalType::date();
    if (w == "TIME") {
      auto p = optional_param();
      if (accept_word("WITHOUT")) {
        expect_word("TIME");
        expect_word("ZONE");
      }
      return LogicalType::time(static_cast<int>(p.value_or(0)));
    }
    if (w == "TIMESTAMP") {
      int p = static_cast<int>(optional_param().value_or(6));
      if (accept_word("WITHOUT")) {
        expect_word("TIME");
        expect_word("ZONE");
      } else if (accept_word("WITH")) {
        expect_word("LOCAL");
        expect_word("TIME");
        expect_word("ZONE");
        return LogicalType::timestamp_ltz(p);
      }
      return LogicalType::timestamp(p);
    }
    if (w == "TIMESTAMP_LTZ") return LogicalType::timestamp_ltz(static_cast<int>(optional_param().value_or(6)));
    if (w == "INTERVAL") return parse_interval();
    if (w == "ARRAY") {
      expect('<');
      LogicalType e = parse_type();
      expect('>');
      return LogicalType::array(e);
    }
    if (w == "MULTISET") {
      expect('<');
      LogicalType e = parse_type();
      expect('>');
      return multiset_type(e);
    }
    if (w == "MAP") {
      expect('<');
      LogicalType k = parse_type();
      expect(',');
      LogicalType v = parse_type();
      expect('>');
      return LogicalType::map(k, v);
    }
    if (w == "ROW") {
      char close = '>';
      if (accept('(')) close = ')';
      else expect('<');
      std::vector<RowField> fields;
      if (!accept(close)) {
        do {
          std::string name = identifier();
          LogicalType t = parse_type();
          skip_ws();
          if (pos_ < text_.size() && text_[pos_] == '\'') {  // a field description: skipped
            ++pos_;
            while (pos_ < text_.size() && text_[pos_] != '\'') ++pos_;
            ++pos_;
          }
          fields.push_back({std::move(name), std::move(t)});
        } while (accept(','));
        expect(close);
      }
      return LogicalType::row(std::move(fields));
    }
    pos_ -= w.size();
    fail(fmt::format("unknown type '{}'", w));
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

LogicalType parse_logical_type(std::string_view text) { return TypeTextParser(text).parse_all(); }

}  // namespace clink::sql
