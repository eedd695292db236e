// Temporal functions that format or parse text and epoch numbers: DATE_FORMAT,
// TO_TIMESTAMP, TO_DATE, UNIX_TIMESTAMP(string [, fmt]), FROM_UNIXTIME, CONVERT_TZ and
// TO_TIMESTAMP_LTZ. Constant formats are compiled once (prepare); a format coming from a
// column is compiled when it changes from the previous row.
//
// Parsing with a pattern (Flink goes through java.text.SimpleDateFormat) supports the
// letters y u M d H k h K m s S a, X (zone offset Z, +hh, +hhmm, +hh:mm) and quoted
// literals: numbers take exactly the letter count of digits when the count is 2 or more
// and the next pattern item is a number, else 1 to 9 digits. Missing fields default to
// 1970-01-01 00:00:00. UNIX_TIMESTAMP and TO_DATE(s, fmt) ignore text after the pattern
// (SimpleDateFormat.parse does); TO_TIMESTAMP(s, fmt) needs all of it (DateTimeFormatter).
// SimpleDateFormat's lenient roll-over (month 13 -> January next year) is not
// reproduced: such text does not parse (NULL, or Long.MIN_VALUE for UNIX_TIMESTAMP).
#include <memory>
#include <string>

#include "clink/sql/common/time_zone.hpp"
#include "clink/sql/function/date_format.hpp"
#include "kernel_util.hpp"
#include "temporal_units.hpp"

namespace clink::sql {

namespace {

using kernels::for_each_valid_row;

class DateParser {
 public:
  // Throws SqlTypeError naming an unsupported letter.
  explicit DateParser(std::string_view p) {
    for (std::size_t i = 0; i < p.size();) {
      char c = p[i];
      if (c == '\'') {
        std::string lit;
        std::size_t j = i + 1;
        if (j < p.size() && p[j] == '\'') {
          items_.push_back({0, 0, "'"});
          i = j + 1;
          continue;
        }
        while (j < p.size()) {
          if (p[j] == '\'') {
            if (j + 1 < p.size() && p[j + 1] == '\'') {
              lit += '\'';
              j += 2;
              continue;
            }
            break;
          }
          lit += p[j++];
        }
        items_.push_back({0, 0, lit});
        i = j + 1;
      } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
        if (std::string_view("yuMdHkhKmsSaX").find(c) == std::string_view::npos)
          throw SqlTypeError(fmt::format("unsupported pattern letter '{}' at position {} in '{}'", c, i + 1, p));
        std::size_t j = i;
        while (j < p.size() && p[j] == c) ++j;
        items_.push_back({c, static_cast<int>(j - i), {}});
        i = j;
      } else {
        items_.push_back({0, 0, std::string(1, c)});
        ++i;
      }
    }
  }

  // Wall-clock microseconds, nullopt when `text` does not match the pattern. An X item
  // (Z, +hh, +hhmm, +hh:mm) sets *offset_seconds; text after the pattern fails unless
  // `allow_trailing` (SimpleDateFormat.parse ignores it).
  std::optional<std::int64_t> parse(std::string_view text, bool allow_trailing = false,
                                    std::optional<std::int64_t>* offset_seconds = nullptr) const {
    std::int64_t year = 1970, month = 1, day = 1, hour = 0, minute = 0, second = 0, micros = 0;
    int ampm = -1;
    bool hour12 = false;
    std::size_t at = 0;
    for (std::size_t k = 0; k < items_.size(); ++k) {
      const Item& it = items_[k];
      if (it.letter == 0) {
        if (text.substr(at, it.text.size()) != it.text) return std::nullopt;
        at += it.text.size();
        continue;
      }
      if (it.letter == 'X') {
        std::optional<std::int64_t> off = parse_offset(text, at);
        if (!off) return std::nullopt;
        if (offset_seconds != nullptr) *offset_seconds = off;
        continue;
      }
      if (it.letter == 'a') {
        std::string_view rest = text.substr(at, 2);
        if (rest == "AM" || rest == "am") ampm = 0;
        else if (rest == "PM" || rest == "pm") ampm = 1;
        else return std::nullopt;
        at += 2;
        continue;
      }
      bool next_numeric = k + 1 < items_.size() && items_[k + 1].letter != 0 && items_[k + 1].letter != 'a' &&
                          items_[k + 1].letter != 'X';
      std::size_t max = (it.count >= 2 && next_numeric) || it.letter == 'S' ? static_cast<std::size_t>(it.count) : 9;
      std::size_t min = (it.count >= 2 && next_numeric) || it.letter == 'S' ? static_cast<std::size_t>(it.count) : 1;
      std::int64_t v = 0;
      std::size_t n = 0;
      while (n < max && at + n < text.size() && text[at + n] >= '0' && text[at + n] <= '9') v = v * 10 + (text[at + n++] - '0');
      if (n < min) return std::nullopt;
      at += n;
      switch (it.letter) {
        case 'y': case 'u': year = it.count == 2 && n == 2 ? 2000 + v : v; break;
        case 'M': month = v; break;
        case 'd': day = v; break;
        case 'H': hour = v; break;
        case 'k': hour = v == 24 ? 0 : v; break;
        case 'h': case 'K': hour = v == 12 && it.letter == 'h' ? 0 : v; hour12 = true; break;
        case 'm': minute = v; break;
        case 's': second = v; break;
        case 'S': {  // fraction digits: S = tenths ... up to micros (SimpleDateFormat reads millis)
          std::int64_t f = v;
          for (std::size_t d = n; d < 6; ++d) f *= 10;
          for (std::size_t d = 6; d < n; ++d) f /= 10;
          micros = f;
          break;
        }
      }
    }
    if (at != text.size() && !allow_trailing) return std::nullopt;
    if (hour12 && ampm == 1) hour += 12;
    if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, static_cast<int>(month)) || hour > 23 ||
        minute > 59 || second > 59)
      return std::nullopt;
    return days_from_civil(year, static_cast<int>(month), static_cast<int>(day)) * kMicrosPerDay +
           ((hour * 60 + minute) * 60 + second) * kMicrosPerSecond + micros;
  }

 private:
  // Z, +hh, +hhmm or +hh:mm (seconds east of UTC), advancing `at`.
  static std::optional<std::int64_t> parse_offset(std::string_view text, std::size_t& at) {
    if (at < text.size() && text[at] == 'Z') {
      ++at;
      return 0;
    }
    if (at >= text.size() || (text[at] != '+' && text[at] != '-')) return std::nullopt;
    int sign = text[at] == '-' ? -1 : 1;
    auto two = [&](std::size_t i) -> int {
      if (i + 1 >= text.size()) return -1;
      if (text[i] < '0' || text[i] > '9' || text[i + 1] < '0' || text[i + 1] > '9') return -1;
      return (text[i] - '0') * 10 + (text[i + 1] - '0');
    };
    int h = two(at + 1);
    if (h < 0 || h > 18) return std::nullopt;
    std::size_t p = at + 3;
    int m = 0;
    if (p < text.size() && text[p] == ':') {
      m = two(p + 1);
      if (m < 0) return std::nullopt;
      p += 3;
    } else if (two(p) >= 0) {
      m = two(p);
      p += 2;
    }
    if (m > 59) return std::nullopt;
    at = p;
    return sign * (h * 3600 + m * 60);
  }

  struct Item {
    char letter;  // 0: literal text
    int count;
    std::string text;
  };
  std::vector<Item> items_;
};

constexpr const char* kDefaultTimestampFormat = "yyyy-MM-dd HH:mm:ss";

const DateParser& default_timestamp_parser() {
  static const DateParser kParser(kDefaultTimestampFormat);
  return kParser;
}

// A pattern per call: compiled once when constant, else cached from the previous row.
template <class P>
class PatternCache {
 public:
  explicit PatternCache(const void* prepared) : fixed_(static_cast<const P*>(prepared)) {}
  const P& get(std::string_view pattern) {
    if (fixed_ != nullptr) return *fixed_;
    if (!last_ || pattern != last_text_) {
      last_ = std::make_unique<P>(pattern);
      last_text_ = pattern;
    }
    return *last_;
  }

 private:
  const P* fixed_;
  std::unique_ptr<P> last_;
  std::string last_text_;
};

template <class P>
PrepareFn prepare_pattern(std::size_t index) {
  return [index](std::span<const LogicalType>, std::span<const std::optional<Value>> c) -> std::shared_ptr<const void> {
    if (index >= c.size() || !c[index] || c[index]->is_null()) return nullptr;
    return std::make_shared<P>(c[index]->as_string());
  };
}

using kernels::sv;

// DATE_FORMAT(timestamp | string, format) -> STRING.
void add_date_format(FunctionRegistry& r) {
  r.add_scalar("DATE_FORMAT", "DATE_FORMAT(TIMESTAMP|TIMESTAMP_LTZ|DATE|STRING, STRING)",
               [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
                 if (args.size() != 2 || !args[1].is_character_string()) return std::nullopt;
                 TypeKind k = args[0].kind();
                 if (k != TypeKind::kTimestamp && k != TypeKind::kTimestampLtz && k != TypeKind::kDate && !args[0].is_character_string())
                   return std::nullopt;
                 ResolvedFunction f;
                 f.name = "DATE_FORMAT";
                 f.arg_types = {args[0], args[1]};
                 // A string that does not parse gives NULL (Flink), so the string form is nullable.
                 f.return_type = LogicalType::string().with_nullable(args[0].nullable() || args[1].nullable() || args[0].is_character_string());
                 f.prepare = prepare_pattern<DateFormatter>(1);
                 bool text = args[0].is_character_string();
                 f.kernel = [k, text](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
                   PatternCache<DateFormatter> fmt_cache(ctx.state);
                   std::string buf;
                   for_each_valid_row(ctx, out, [&](std::size_t i) {
                     std::int64_t wall;
                     if (text) {
                       // SimpleDateFormat("yyyy-MM-dd HH:mm:ss").parse: trailing text (a
                       // fraction) is ignored, a date alone does not parse.
                       auto ts = default_timestamp_parser().parse(sv(a, 0, i), true);
                       if (!ts) {
                         out.append_null();
                         return;
                       }
                       wall = *ts;
                     } else {
                       wall = temporal_fn::wall_micros(k, *a[0].column, i, *ctx.session);
                     }
                     buf.clear();
                     fmt_cache.get(sv(a, 1, i)).format(wall, buf);
                     out.append_string(buf);
                   });
                 };
                 return f;
               });
}

// Parses `text` as Flink's one-argument forms do (yyyy-MM-dd[ HH:mm:ss[.fff]]), or with a pattern.
// A zone offset in the text (pattern letter X) moves the value to UTC ("under UTC+0").
std::optional<std::int64_t> parse_wall(std::string_view text, const DateParser* parser) {
  if (parser == nullptr) return parse_timestamp(text);
  std::optional<std::int64_t> offset;
  auto v = parser->parse(text, false, &offset);
  if (v && offset) *v -= *offset * kMicrosPerSecond;
  return v;
}

void add_parsers(FunctionRegistry& r) {
  LogicalType s = LogicalType::string();
  // TO_TIMESTAMP(string [, format]) -> TIMESTAMP(3); NULL when the text does not parse.
  auto to_ts = [](bool with_format) {
    return [with_format](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
      PatternCache<DateParser> cache(ctx.state);
      auto* o = out.values<std::int64_t>();
      for (std::size_t i = 0; i < ctx.rows; ++i) {
        if (!out.is_valid(i)) continue;
        auto v = parse_wall(sv(a, 0, i), with_format ? &cache.get(sv(a, 1, i)) : nullptr);
        if (v) o[i] = floor_div(*v, kMicrosPerMilli) * kMicrosPerMilli;
        else out.set_valid(i, false);
      }
    };
  };
  r.add_fixed("TO_TIMESTAMP", {s}, LogicalType::timestamp(3), to_ts(false), NullPolicy::kPropagate);
  r.add_fixed("TO_TIMESTAMP", {s, s}, LogicalType::timestamp(3), to_ts(true), NullPolicy::kPropagate, false,
              prepare_pattern<DateParser>(1));
  // TO_DATE(string [, format]) -> DATE.
  auto to_date = [](bool with_format) {
    return [with_format](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
      PatternCache<DateParser> cache(ctx.state);
      auto* o = out.values<std::int32_t>();
      for (std::size_t i = 0; i < ctx.rows; ++i) {
        if (!out.is_valid(i)) continue;
        std::optional<std::int64_t> v;
        std::optional<std::int64_t> offset;  // SimpleDateFormat in UTC: trailing text is ignored
        if (with_format) v = cache.get(sv(a, 1, i)).parse(sv(a, 0, i), true, &offset);
        if (v && offset) *v -= *offset * kMicrosPerSecond;
        else if (auto d = parse_date(sv(a, 0, i))) v = std::int64_t{*d} * kMicrosPerDay;
        if (v) o[i] = static_cast<std::int32_t>(floor_div(*v, kMicrosPerDay));
        else out.set_valid(i, false);
      }
    };
  };
  r.add_fixed("TO_DATE", {s}, LogicalType::date(), to_date(false));
  r.add_fixed("TO_DATE", {s, s}, LogicalType::date(), to_date(true), NullPolicy::kPropagate, false, prepare_pattern<DateParser>(1));
  // UNIX_TIMESTAMP(string [, format]) -> BIGINT seconds of the text read in the session zone;
  // text that does not parse gives Long.MIN_VALUE, as Flink's DateTimeUtils.unixTimestamp.
  auto unix_ts = [](bool with_format) {
    return [with_format](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
      PatternCache<DateParser> cache(ctx.state);
      static const DateParser kDefault(kDefaultTimestampFormat);
      auto* o = out.values<std::int64_t>();
      const TimeZone& zone = *ctx.session->time_zone;
      for (std::size_t i = 0; i < ctx.rows; ++i) {
        if (!out.is_valid(i)) continue;
        std::optional<std::int64_t> offset;
        auto v = (with_format ? cache.get(sv(a, 1, i)) : kDefault).parse(sv(a, 0, i), true, &offset);
        if (!v) {
          o[i] = INT64_MIN;
          continue;
        }
        std::int64_t utc = offset ? *v - *offset * kMicrosPerSecond : zone.local_micros_to_utc(*v);
        // java's Date.getTime() / 1000 truncates toward zero (pre-1970 fractions round up).
        o[i] = floor_div(utc, kMicrosPerMilli) / 1000;
      }
    };
  };
  r.add_fixed("UNIX_TIMESTAMP", {s}, LogicalType::bigint(), unix_ts(false));
  r.add_fixed("UNIX_TIMESTAMP", {s, s}, LogicalType::bigint(), unix_ts(true), NullPolicy::kPropagate, false,
              prepare_pattern<DateParser>(1));
}

// FROM_UNIXTIME(seconds [, format]) -> STRING in the session zone.
void add_from_unixtime(FunctionRegistry& r) {
  auto kernel = [](bool with_format) {
    return [with_format](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
      PatternCache<DateFormatter> cache(ctx.state);
      static const DateFormatter kDefault(kDefaultTimestampFormat);
      const TimeZone& zone = *ctx.session->time_zone;
      std::string buf;
      for_each_valid_row(ctx, out, [&](std::size_t i) {
        std::int64_t secs = a[0].column->values<std::int64_t>()[a[0].row(i)];
        std::int64_t local = zone.utc_to_local(secs) * kMicrosPerSecond;
        buf.clear();
        (with_format ? cache.get(sv(a, 1, i)) : kDefault).format(local, buf);
        out.append_string(buf);
      });
    };
  };
  r.add_fixed("FROM_UNIXTIME", {LogicalType::bigint()}, LogicalType::string(), kernel(false));
  r.add_fixed("FROM_UNIXTIME", {LogicalType::bigint(), LogicalType::string()}, LogicalType::string(), kernel(true),
              NullPolicy::kPropagate, false, prepare_pattern<DateFormatter>(1));
}

// CONVERT_TZ(string, from_zone, to_zone): 'yyyy-MM-dd HH:mm:ss' text moved between zones.
// Unknown zones fail (Flink's TimeZone.getTimeZone falls back to GMT silently; a typo
// then gives wrong data, so clink reports it); text that does not parse gives NULL.
void add_convert_tz(FunctionRegistry& r) {
  LogicalType s = LogicalType::string();
  r.add_fixed("CONVERT_TZ", {s, s, s}, s, [](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
    static const DateParser kParser(kDefaultTimestampFormat);
    static const DateFormatter kFormatter(kDefaultTimestampFormat);
    TimeZonePtr from, to;
    std::string from_id, to_id, buf;
    for_each_valid_row(ctx, out, [&](std::size_t i) {
      auto v = kParser.parse(sv(a, 0, i), true);  // SimpleDateFormat: trailing text is ignored
      if (!v) {
        out.append_null();
        return;
      }
      if (!from || sv(a, 1, i) != from_id) from = TimeZone::of(from_id = std::string(sv(a, 1, i)));
      if (!to || sv(a, 2, i) != to_id) to = TimeZone::of(to_id = std::string(sv(a, 2, i)));
      buf.clear();
      kFormatter.format(to->utc_micros_to_local(from->local_micros_to_utc(*v)), buf);
      out.append_string(buf);
    });
  });
}

// TO_TIMESTAMP_LTZ(numeric [, precision]): epoch seconds (precision 0) or milliseconds
// (3, the default) to TIMESTAMP_LTZ(3); other precisions fail; out-of-range values NULL.
void add_to_timestamp_ltz(FunctionRegistry& r) {
  auto resolver = [](std::span<const LogicalType> args) -> std::optional<ResolvedFunction> {
    if (args.empty() || args.size() > 2 || !args[0].is_numeric()) return std::nullopt;
    if (args.size() == 2 && !args[1].is_integer()) return std::nullopt;
    ResolvedFunction f;
    f.name = "TO_TIMESTAMP_LTZ";
    f.arg_types = {LogicalType::double_type().with_nullable(args[0].nullable())};
    bool integral = args[0].is_integer();
    if (integral) f.arg_types[0] = LogicalType::bigint().with_nullable(args[0].nullable());
    if (args.size() == 2) f.arg_types.push_back(LogicalType::int_type().with_nullable(args[1].nullable()));
    f.return_type = LogicalType::timestamp_ltz(3).with_nullable(true);
    f.kernel = [integral](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
      auto* o = out.values<std::int64_t>();
      for (std::size_t i = 0; i < ctx.rows; ++i) {
        if (!out.is_valid(i)) continue;
        std::int32_t precision = a.size() == 2 ? a[1].column->values<std::int32_t>()[i] : 3;
        if (precision != 0 && precision != 3) {
          if (!ctx.is_active(i)) continue;
          throw SqlRuntimeError(fmt::format(
              "TO_TIMESTAMP_LTZ: unsupported precision {} (expected 0 for seconds or 3 for milliseconds)", precision));
        }
        std::int64_t scale = precision == 0 ? kMicrosPerSecond : kMicrosPerMilli;
        if (integral) {
          std::int64_t v = a[0].column->values<std::int64_t>()[i];
          if (__builtin_mul_overflow(v, scale, &o[i])) out.set_valid(i, false);
        } else {
          double v = a[0].column->values<double>()[i] * static_cast<double>(scale);
          if (!(v > -9.2e18 && v < 9.2e18)) out.set_valid(i, false);
          else o[i] = floor_div(static_cast<std::int64_t>(v), kMicrosPerMilli) * kMicrosPerMilli;
        }
      }
    };
    return f;
  };
  r.add_scalar("TO_TIMESTAMP_LTZ", "TO_TIMESTAMP_LTZ(NUMERIC [, INT precision])", resolver);

  // TO_TIMESTAMP_LTZ(string [, format [, zone]]): the text (default format
  // 'yyyy-MM-dd HH:mm:ss.SSS') read as a wall-clock time in `zone` (default UTC; an X
  // offset in the text wins); NULL when it does not parse. An unknown zone fails.
  LogicalType s = LogicalType::string();
  auto parse_ltz = [](std::size_t nargs) {
    return [nargs](KernelContext& ctx, std::span<const KernelArg> a, Column& out) {
      static const DateParser kDefault("yyyy-MM-dd HH:mm:ss.SSS");
      PatternCache<DateParser> cache(ctx.state);
      TimeZonePtr zone = TimeZone::utc();
      std::string zone_id = "UTC";
      auto* o = out.values<std::int64_t>();
      for (std::size_t i = 0; i < ctx.rows; ++i) {
        if (!out.is_valid(i)) continue;
        std::optional<std::int64_t> offset;
        auto v = (nargs >= 2 ? cache.get(sv(a, 1, i)) : kDefault).parse(sv(a, 0, i), false, &offset);
        if (!v) {
          out.set_valid(i, false);
          continue;
        }
        if (nargs == 3 && sv(a, 2, i) != zone_id) zone = TimeZone::of(zone_id = std::string(sv(a, 2, i)));
        std::int64_t utc = offset ? *v - *offset * kMicrosPerSecond : zone->local_micros_to_utc(*v);
        o[i] = floor_div(utc, kMicrosPerMilli) * kMicrosPerMilli;
      }
    };
  };
  LogicalType ltz = LogicalType::timestamp_ltz(3);
  r.add_fixed("TO_TIMESTAMP_LTZ", {s}, ltz, parse_ltz(1));
  r.add_fixed("TO_TIMESTAMP_LTZ", {s, s}, ltz, parse_ltz(2), NullPolicy::kPropagate, false, prepare_pattern<DateParser>(1));
  r.add_fixed("TO_TIMESTAMP_LTZ", {s, s, s}, ltz, parse_ltz(3), NullPolicy::kPropagate, false, prepare_pattern<DateParser>(1));
}

}  // namespace

void register_temporal_format_functions(FunctionRegistry& r) {
  add_date_format(r);
  add_parsers(r);
  add_from_unixtime(r);
  add_convert_tz(r);
  add_to_timestamp_ltz(r);
}

}  // namespace clink::sql
