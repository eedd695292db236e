#pragma once
// Splits what a user types into complete statements: a statement ends at a `;` outside
// quotes ('...', "...", `...`) and comments (-- and /* */); a statement set
// (EXECUTE STATEMENT SET BEGIN ... END / BEGIN STATEMENT SET ... END) ends at `END;`.
#include <optional>
#include <string>

namespace clink::cli {

class StatementReader {
 public:
  // Adds one line (without its newline).
  void add_line(const std::string& line);
  // The next complete statement (with its `;`), removed from the buffer.
  std::optional<std::string> next();
  // Whether only whitespace and comments are pending.
  bool empty() const;
  void clear() { buffer_.clear(); }

 private:
  std::string buffer_;
};

// `quit;` / `exit;` (any case, spaces allowed).
bool is_quit(const std::string& statement);

}  // namespace clink::cli
