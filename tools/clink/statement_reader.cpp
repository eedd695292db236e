#include "statement_reader.hpp"

#include <cctype>

namespace clink::cli {
namespace {

// Upper-case words of `s` outside quotes and comments, up to `limit` words.
std::string leading_words(const std::string& s, std::size_t limit) {
  std::string out;
  std::size_t words = 0;
  for (std::size_t i = 0; i < s.size() && words < limit;) {
    if (s.compare(i, 2, "--") == 0) {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (s.compare(i, 2, "/*") == 0) {
      auto e = s.find("*/", i + 2);
      i = e == std::string::npos ? s.size() : e + 2;
    } else if (std::isalpha(static_cast<unsigned char>(s[i]))) {
      std::size_t b = i;
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_')) ++i;
      for (std::size_t k = b; k < i; ++k) out += static_cast<char>(std::toupper(static_cast<unsigned char>(s[k])));
      out += ' ';
      ++words;
    } else if (std::isspace(static_cast<unsigned char>(s[i]))) {
      ++i;
    } else {
      break;
    }
  }
  return out;
}

bool is_statement_set(const std::string& s) {
  std::string w = leading_words(s, 4);
  return w.rfind("EXECUTE STATEMENT SET BEGIN", 0) == 0 || w.rfind("BEGIN STATEMENT SET", 0) == 0;
}

// Whether the text before `end` (a `;`) closes a statement set: its last word is END.
bool ends_with_end(const std::string& s, std::size_t end) {
  std::size_t i = end;
  while (i > 0 && std::isspace(static_cast<unsigned char>(s[i - 1]))) --i;
  if (i < 3) return false;
  std::string w;
  for (std::size_t k = i - 3; k < i; ++k) w += static_cast<char>(std::toupper(static_cast<unsigned char>(s[k])));
  return w == "END" && (i == 3 || !std::isalnum(static_cast<unsigned char>(s[i - 4])));
}

}  // namespace

void StatementReader::add_line(const std::string& line) {
  buffer_ += line;
  buffer_ += '\n';
}

std::optional<std::string> StatementReader::next() {
  bool set = is_statement_set(buffer_);
  char quote = 0;
  for (std::size_t i = 0; i < buffer_.size(); ++i) {
    char c = buffer_[i];
    if (quote) {
      if (c == quote) quote = 0;  // a doubled quote reopens at once: same result
      continue;
    }
    if (c == '\'' || c == '"' || c == '`') {
      quote = c;
    } else if (buffer_.compare(i, 2, "--") == 0) {
      auto e = buffer_.find('\n', i);
      if (e == std::string::npos) return std::nullopt;
      i = e;
    } else if (buffer_.compare(i, 2, "/*") == 0) {
      auto e = buffer_.find("*/", i + 2);
      if (e == std::string::npos) return std::nullopt;
      i = e + 1;
    } else if (c == ';' && (!set || ends_with_end(buffer_, i))) {
      std::string statement = buffer_.substr(0, i + 1);
      buffer_.erase(0, i + 1);
      // The next statement starts at its first non-blank character: error positions
      // count from there, as in Flink's client.
      buffer_.erase(0, buffer_.find_first_not_of(" \t\r\n") == std::string::npos ? buffer_.size()
                                                                                 : buffer_.find_first_not_of(" \t\r\n"));
      return statement;
    }
  }
  return std::nullopt;
}

bool StatementReader::empty() const {
  const std::string& s = buffer_;
  for (std::size_t i = 0; i < s.size();) {
    if (std::isspace(static_cast<unsigned char>(s[i]))) {
      ++i;
    } else if (s.compare(i, 2, "--") == 0) {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (s.compare(i, 2, "/*") == 0) {
      auto e = s.find("*/", i + 2);
      if (e == std::string::npos) return false;
      i = e + 2;
    } else {
      return false;
    }
  }
  return true;
}

bool is_quit(const std::string& statement) {
  std::string w = leading_words(statement, 2);
  if (w != "QUIT " && w != "EXIT ") return false;
  auto semi = statement.find(';');
  for (std::size_t i = statement.find_first_not_of(" \t\r\n") + 4; i < semi; ++i)
    if (!std::isspace(static_cast<unsigned char>(statement[i]))) return false;
  return true;
}

}  // namespace clink::cli
