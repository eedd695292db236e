#include "sql_test_case.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>

namespace clink::test {

namespace fs = std::filesystem;

namespace {

std::string trim_right(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r' || s.back() == '\t')) s.pop_back();
  return s;
}

// `@matrix none # why` or `@matrix -p4 -restore # why`: the variants, and the reason.
void read_matrix(const std::string& rest, std::set<std::string>& excluded, std::vector<std::string>& reasons,
                 const std::function<void(const std::string&)>& fail) {
  auto hash = rest.find('#');
  std::string reason = hash == std::string::npos ? "" : rest.substr(hash + 1);
  reason.erase(0, reason.find_first_not_of(' '));
  if (reason.empty()) fail("@matrix needs a reason: @matrix -p4 # why the case cannot run at parallelism 4");
  std::istringstream words(rest.substr(0, hash));
  std::vector<std::string> items;
  for (std::string w; words >> w;) items.push_back(w);
  if (items.empty()) fail("@matrix names no variant (none, or -p2 -p4 -restore -rocksdb)");
  const auto& all = matrix_variants();
  for (const auto& w : items) {
    if (w == "none") {
      excluded.insert(all.begin(), all.end());
    } else if (w.size() > 1 && w[0] == '-' && std::find(all.begin(), all.end(), w.substr(1)) != all.end()) {
      excluded.insert(w.substr(1));
    } else {
      fail("@matrix: unknown variant '" + w + "' (none, or -p2 -p4 -restore -rocksdb)");
    }
  }
  reasons.push_back(reason);
}

}  // namespace

std::vector<SqlTestCase> parse_sql_test_file(const fs::path& path) {
  std::ifstream in(path);
  std::vector<SqlTestCase> cases;
  std::vector<SqlTestInput> file_inputs;
  std::set<std::string> file_excluded;
  std::vector<std::string> file_reasons;
  std::string setup;
  enum class Section { kNone, kInput, kSetup, kSql, kExpect } section = Section::kNone;
  SqlTestInput* input = nullptr;
  SqlTestCase* current = nullptr;
  int n = 0;
  auto fail = [&](const std::string& m) {
    throw std::runtime_error(path.string() + ":" + std::to_string(n) + ": " + m);
  };
  for (std::string line; std::getline(in, line);) {
    ++n;
    line = trim_right(line);
    if (line.rfind("@", 0) == 0) {
      std::istringstream words(line.substr(1));
      std::string word;
      words >> word;
      std::string rest;
      std::getline(words, rest);
      rest.erase(0, rest.find_first_not_of(' '));
      if (word == "input") {
        std::istringstream r(rest);
        SqlTestInput i;
        r >> i.name >> i.ext;
        if (i.name.empty()) fail("@input needs a name (and a format: csv, json)");
        if (i.ext.empty()) i.ext = "csv";
        auto& list = current ? current->inputs : file_inputs;
        list.push_back(i);
        input = &list.back();
        section = Section::kInput;
      } else if (word == "setup") {
        if (current) fail("@setup belongs before the first @case");
        section = Section::kSetup;
      } else if (word == "case") {
        SqlTestCase c;
        c.file = path.stem().string();
        c.line = n;
        c.name = rest;
        c.inputs = file_inputs;
        c.setup = setup;
        c.matrix_excluded = file_excluded;
        c.matrix_reasons = file_reasons;
        cases.push_back(std::move(c));
        current = &cases.back();
        section = Section::kSql;
      } else if (word == "expect") {
        if (!current) fail("@expect outside a @case");
        current->expect = rest == "unordered" ? SqlTestCase::Expect::kUnordered
                          : rest == "final"   ? SqlTestCase::Expect::kFinal
                                              : SqlTestCase::Expect::kOrdered;
        if (!rest.empty() && rest != "unordered" && rest != "ordered" && rest != "final")
          fail("@expect [ordered|unordered|final]");
        section = Section::kExpect;
      } else if (word == "error") {
        if (!current) fail("@error outside a @case");
        current->expect = SqlTestCase::Expect::kError;
        section = Section::kExpect;
      } else if (word == "matrix") {
        // Before the first case: every case of the file; after it: that case. The
        // section goes on (the directive may sit between a case's name and its SQL).
        if (current) read_matrix(rest, current->matrix_excluded, current->matrix_reasons, fail);
        else read_matrix(rest, file_excluded, file_reasons, fail);
      } else {
        fail("unknown directive @" + word);
      }
      continue;
    }
    // The Flink oracle's record of a case (tests/flink/oracle.py): a comment in any section.
    if (line.rfind("# flink:", 0) == 0) continue;
    switch (section) {
      case Section::kNone:
        if (!line.empty() && line[0] != '#') fail("text outside a section");
        break;
      case Section::kInput: input->text += line + "\n"; break;
      case Section::kSetup: setup += line + "\n"; break;
      case Section::kSql: current->sql += line + "\n"; break;
      case Section::kExpect:
        if (!line.empty() && line[0] != '#') current->expected.push_back(line);
        break;
    }
  }
  return cases;
}

namespace {

// The first word of each ';'-separated statement of `script` (upper case), skipping
// comments and string literals: enough to tell the statements that run a job.
std::vector<std::string> leading_words(const std::string& script) {
  std::vector<std::string> words;
  bool at_start = true;
  for (std::size_t i = 0; i < script.size();) {
    char ch = script[i];
    if (std::isspace(static_cast<unsigned char>(ch))) {
      ++i;
    } else if (script.compare(i, 2, "--") == 0) {
      i = script.find('\n', i);
    } else if (script.compare(i, 2, "/*") == 0) {
      i = script.find("*/", i + 2);
      if (i != std::string::npos) i += 2;
    } else if (ch == '\'' || ch == '"' || ch == '`') {
      i = script.find(ch, i + 1);  // a doubled quote reads as two literals: the same
      if (i != std::string::npos) ++i;
      at_start = false;
    } else if (ch == ';') {
      at_start = true;
      ++i;
    } else {
      std::size_t j = i;
      while (j < script.size() && (std::isalnum(static_cast<unsigned char>(script[j])) || script[j] == '_')) ++j;
      if (j == i) ++j;  // punctuation: "(" opens a parenthesised query
      if (at_start) {
        std::string w = script.substr(i, j - i);
        for (auto& c : w) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        words.push_back(w);
      }
      at_start = false;
      i = j;
    }
  }
  return words;
}

}  // namespace

bool runs_a_job(const SqlTestCase& c) {
  static const std::set<std::string> kJobStatements = {"SELECT", "WITH", "VALUES", "TABLE", "(",
                                                       "INSERT", "EXECUTE", "BEGIN"};
  for (const std::string* script : {&c.setup, &c.sql})
    for (const auto& w : leading_words(*script))
      if (kJobStatements.count(w)) return true;
  return false;
}

}  // namespace clink::test
