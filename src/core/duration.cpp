#include "clink/core/duration.hpp"

#include <cctype>
#include <string>
#include <utility>

namespace clink {

std::optional<std::int64_t> parse_duration_ms(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && text[i] == ' ') ++i;
  std::size_t digits = i;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == digits) return std::nullopt;
  std::int64_t n = std::stoll(std::string(text.substr(digits, i - digits)));
  while (i < text.size() && text[i] == ' ') ++i;
  std::string unit;
  for (; i < text.size(); ++i) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  while (!unit.empty() && unit.back() == ' ') unit.pop_back();
  static const std::pair<const char*, std::int64_t> kUnits[] = {
      {"", 1}, {"ms", 1}, {"milli", 1}, {"millis", 1}, {"millisecond", 1}, {"milliseconds", 1},
      {"s", 1000}, {"sec", 1000}, {"secs", 1000}, {"second", 1000}, {"seconds", 1000},
      {"min", 60000}, {"m", 60000}, {"mins", 60000}, {"minute", 60000}, {"minutes", 60000},
      {"h", 3600000}, {"hour", 3600000}, {"hours", 3600000},
      {"d", 86400000}, {"day", 86400000}, {"days", 86400000}};
  for (const auto& [name, factor] : kUnits)
    if (unit == name) return n * factor;
  return std::nullopt;
}

}  // namespace clink
