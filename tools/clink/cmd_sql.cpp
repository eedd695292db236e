// clink sql: the interactive SQL shell. On a terminal: line editing and history
// (libedit, ~/.clink_history), multi-line statements ending at `;`, and SELECT results as
// a table redrawn in place as the changelog arrives (Ctrl-C stops the query and returns
// to the prompt). With piped input: the same statements, results in tableau form.
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

#include <editline/readline.h>
#include <fmt/format.h>

#include "clink/cluster/rest/rest_server.hpp"
#include "clink/core/error.hpp"
#include "clink/sql/parser/parser.hpp"
#include "cluster_client.hpp"
#include "commands.hpp"
#include "result_table.hpp"
#include "sql_session.hpp"
#include "statement_reader.hpp"

namespace clink::cli {
namespace {

constexpr const char* kPrompt = "Flink SQL> ";
constexpr const char* kContinuation = "> ";

extern "C" void shell_interrupt(int) { stop_requested().store(true); }

struct ShellOptions {
  std::string coordinator;  // HOST:PORT of a coordinator's REST API
  std::string catalog_dir;
  int parallelism = 0;
  std::vector<std::string> init_files;
};

std::size_t terminal_rows() {
  winsize ws{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0) return ws.ws_row;
  return 24;
}

// A live result view redrawn in place (cursor moved up over the previous drawing, then
// cleared below) at most every 200 ms: the materialised table (table mode) or the
// changelog (changelog mode). A View has View(columns), apply(rows), render(max_rows).
template <class View>
class LivePresenter final : public ResultPresenter {
 public:
  void start(const std::vector<ResultColumn>& columns) override {
    view_ = std::make_unique<View>(columns);
    draw();
  }
  void rows(const std::vector<ResultRow>& rows) override {
    if (!rows.empty()) {
      view_->apply(rows);
      dirty_ = true;
    }
    auto now = std::chrono::steady_clock::now();
    if (dirty_ && now - last_draw_ >= std::chrono::milliseconds(200)) draw();
  }
  void finish(bool stopped) override {
    draw();
    std::fputs(stopped ? "[INFO] Query stopped.\n" : "[INFO] Query finished.\n", stdout);
    std::fflush(stdout);
  }

 private:
  void draw() {
    std::size_t rows = terminal_rows();
    std::string text = view_->render(rows > 8 ? rows - 8 : 1);
    std::string out;
    if (lines_ > 0) out += fmt::format("\x1b[{}F\x1b[J", lines_);
    out += text;
    lines_ = 0;
    for (char c : text) lines_ += c == '\n' ? 1 : 0;
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    last_draw_ = std::chrono::steady_clock::now();
    dirty_ = false;
  }

  std::unique_ptr<View> view_;
  std::size_t lines_ = 0;
  bool dirty_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
};

// Changelog mode: the changelog itself, an `op` column first, the latest rows that fit
// the terminal (Flink's changelog result mode).
class ChangelogView {
 public:
  explicit ChangelogView(const std::vector<ResultColumn>& columns) {
    header_.push_back("op");
    for (const auto& c : columns) header_.push_back(c.name);
  }
  void apply(const std::vector<ResultRow>& rows) {
    for (const auto& r : rows) {
      std::vector<std::optional<std::string>> cells{std::string(sql::row_kind_short_string(r.kind))};
      cells.insert(cells.end(), r.cells.begin(), r.cells.end());
      rows_.push_back(std::move(cells));
    }
  }
  std::string render(std::size_t max_rows, std::size_t max_width = 40) const {
    std::size_t first = rows_.size() > max_rows ? rows_.size() - max_rows : 0;
    std::vector<std::size_t> widths;
    for (const auto& h : header_) widths.push_back(std::min(h.size(), max_width));
    for (std::size_t r = first; r < rows_.size(); ++r)
      for (std::size_t i = 0; i < rows_[r].size(); ++i)
        widths[i] = std::max(widths[i], std::min(rows_[r][i] ? rows_[r][i]->size() : 6, max_width));
    std::string out = render_rule(widths) + render_line(header_, widths) + render_rule(widths);
    for (std::size_t r = first; r < rows_.size(); ++r) {
      std::vector<std::string> cells;
      for (std::size_t i = 0; i < rows_[r].size(); ++i) cells.push_back(fit_cell(rows_[r][i], widths[i]));
      out += render_line(cells, widths);
    }
    out += render_rule(widths);
    if (first > 0) out += fmt::format("({} earlier changes not shown)\n", first);
    return out + fmt::format("Received a total of {} row{}\n", rows_.size(), rows_.size() == 1 ? "" : "s");
  }

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::optional<std::string>>> rows_;
};

constexpr const char* kResultModeKey = "sql-client.execution.result-mode";

const char* kHelp =
    "Statements end with ';' and may span lines. Besides SQL (CREATE / ALTER / DROP, SHOW,\n"
    "DESCRIBE, EXPLAIN, SET / RESET, INSERT, EXECUTE STATEMENT SET, SELECT):\n"
    "  HELP;          this text\n"
    "  QUIT; EXIT;    leave the shell\n"
    "A running query stops with Ctrl-C. History is kept in ~/.clink_history.\n";

class Shell {
 public:
  Shell(const ShellOptions& opts, bool interactive)
      : interactive_(interactive), session_(settings(opts), opts.catalog_dir, stdout) {
    if (interactive_) session_.set_presenter([] { return std::make_unique<LivePresenter<MaterializedTable>>(); });
  }

  // SET 'sql-client.execution.result-mode' = 'table' | 'changelog' | 'tableau': how the
  // next SELECTs show their rows. Off a terminal every mode prints the tableau (Flink's
  // table and changelog modes need a terminal too).
  void set_result_mode(const sql::ast::Set& set) {
    std::string mode = *set.value;
    for (auto& ch : mode) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (mode != "table" && mode != "changelog" && mode != "tableau")
      throw ClinkError(fmt::format("SET '{}' = '{}': expected 'table', 'changelog' or 'tableau'", kResultModeKey, *set.value));
    if (!interactive_ || mode == "tableau") session_.set_presenter([] { return make_tableau_presenter(stdout); });
    else if (mode == "table") session_.set_presenter([] { return std::make_unique<LivePresenter<MaterializedTable>>(); });
    else session_.set_presenter([] { return std::make_unique<LivePresenter<ChangelogView>>(); });
  }

  // Runs statements until quit or end of input; the exit code (non-interactive: 1 when a
  // statement failed).
  int loop(std::istream& in) {
    if (interactive_) open_history();
    StatementReader reader;
    for (;;) {
      std::optional<std::string> line = read_line(in, reader.empty() ? kPrompt : kContinuation);
      if (!line) {
        if (interactive_ && stop_requested().exchange(false)) {  // Ctrl-C at the prompt
          reader.clear();
          std::fputc('\n', stdout);
          continue;
        }
        break;
      }
      reader.add_line(*line);
      while (auto statement = reader.next()) {
        if (is_quit(*statement)) return finish();
        remember(*statement);
        run(*statement);
      }
    }
    if (!reader.empty()) {
      std::fprintf(stderr, "[ERROR] The input ended inside a statement (missing ';')\n");
      failed_ = true;
    }
    return finish();
  }

  void run_file(const std::string& path) {
    auto script = sql::parse(read_file(path));
    for (const auto& st : script.statements) session_.execute(st);
  }

 private:
  static SqlJobSettings settings(const ShellOptions& opts) {
    SqlJobSettings s;
    s.parallelism = opts.parallelism;
    if (!opts.coordinator.empty()) {
      // INSERTs go to the cluster, as Flink's client submits them (and prints the job id).
      s.coordinator = opts.coordinator;
      nlohmann::json options = nlohmann::json::object();
      if (opts.parallelism > 0) options["parallelism.default"] = opts.parallelism;
      s.submit = [address = opts.coordinator, options](nlohmann::json& spec) {
        std::fputs("[INFO] Submitting SQL update statement to the cluster...\n", stdout);
        cluster::RestClient client(address);
        auto r = rest_call(client, "POST", "/api/v1/jobs/spec", {{"spec", spec}, {"options", options}});
        std::printf("[INFO] SQL update statement has been successfully submitted to the cluster:\nJob ID: %s\n\n",
                    r.value("jobid", "").c_str());
        std::fflush(stdout);
      };
      // Materialized tables are the coordinator's (it keeps and refreshes them).
      s.forward_sql = [address = opts.coordinator, options](const std::string& script) {
        cluster::RestClient client(address);
        rest_call(client, "POST", "/api/v1/jobs/sql", {{"script", script}, {"options", options}});
        std::fputs("[INFO] Execute statement succeeded.\n", stdout);
        std::fflush(stdout);
      };
    }
    return s;
  }

  std::optional<std::string> read_line(std::istream& in, const char* prompt) {
    if (!interactive_) {
      std::string line;
      if (!std::getline(in, line)) return std::nullopt;
      return line;
    }
    char* raw = readline(prompt);
    if (!raw) return std::nullopt;
    std::string line(raw);
    std::free(raw);
    return line;
  }

  void open_history() {
    if (const char* home = std::getenv("HOME")) history_path_ = std::string(home) + "/.clink_history";
    if (!history_path_.empty()) read_history(history_path_.c_str());
  }

  void remember(const std::string& statement) {
    if (!interactive_ || history_path_.empty()) return;
    std::string one = statement;
    while (!one.empty() && (one.back() == '\n' || one.back() == ' ')) one.pop_back();
    add_history(one.c_str());
    write_history(history_path_.c_str());
  }

  void run(const std::string& text) {
    std::string upper;
    for (char c : text) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (upper.find_first_not_of(" \t\r\n") != std::string::npos &&
        upper.substr(upper.find_first_not_of(" \t\r\n")).rfind("HELP", 0) == 0 &&
        upper.find_first_not_of(" \t\r\n;", upper.find("HELP") + 4) == std::string::npos) {
      std::fputs(kHelp, stdout);
      return;
    }
    stop_requested().store(false);
    sql::ast::Script script;
    try {
      script = sql::parse(text);
    } catch (const std::exception& e) {
      error(e.what());
      return;
    }
    for (const auto& st : script.statements) {
      try {
        const auto* set = st.as<sql::ast::Set>();
        if (set && set->key && set->value && *set->key == kResultModeKey) set_result_mode(*set);
        bool completed = session_.execute(st);
        if (!completed) {
          stop_requested().store(false);
          if (!st.as<sql::ast::QueryStatement>()) std::fputs("[INFO] Job cancelled.\n", stdout);
        } else if (st.as<sql::ast::Insert>() || st.as<sql::ast::StatementSet>()) {
          if (!session_.detached()) std::fputs("[INFO] Job finished.\n", stdout);
        } else if (!st.as<sql::ast::QueryStatement>() && !st.as<sql::ast::Show>() && !st.as<sql::ast::Describe>() &&
                   !st.as<sql::ast::Explain>() && !st.as<sql::ast::StopJob>()) {
          std::fputs("[INFO] Execute statement succeeded.\n", stdout);
        }
        std::fflush(stdout);
      } catch (const std::exception& e) {
        error(describe_error(e, st.pos));
        return;
      }
    }
  }

  void error(const std::string& message) {
    std::fflush(stdout);
    std::fprintf(stderr, "[ERROR] %s\n", message.c_str());
    std::fflush(stderr);
    failed_ = true;
  }

  int finish() {
    if (interactive_) std::fputs("Goodbye!\n", stdout);
    std::fflush(stdout);
    return !interactive_ && failed_ ? kExitError : kExitOk;
  }

  bool interactive_;
  SqlSession session_;
  std::string history_path_;
  bool failed_ = false;
};

int shell(const ShellOptions& opts) {
  bool interactive = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
  struct sigaction sa {};
  sa.sa_handler = shell_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: Ctrl-C at the prompt interrupts the read
  sigaction(SIGINT, &sa, nullptr);
  try {
    Shell sh(opts, interactive);
    for (const auto& f : opts.init_files) sh.run_file(f);
    if (interactive) std::fputs("clink SQL shell: statements end with ';', HELP; lists commands, QUIT; leaves.\n\n", stdout);
    return sh.loop(std::cin);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "[ERROR] %s\n", e.what());
    return kExitError;
  }
}

}  // namespace

void add_sql_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<ShellOptions>();
  auto* cmd = app.add_subcommand("sql", "The interactive Flink SQL shell (statements from stdin when piped)");
  cmd->add_option("--catalog-dir", opts->catalog_dir, "Keep the catalog (tables, views, functions) in this directory");
  cmd->add_option("--coordinator,-m", opts->coordinator,
                  "HOST:PORT of a coordinator's REST API: INSERTs are submitted there, SHOW JOBS / STOP JOB act on its jobs");
  cmd->add_option("-p,--parallelism", opts->parallelism, "Default parallelism of the shell's jobs")
      ->check(CLI::Range(1, 1 << 15));
  cmd->add_option("-i,--init", opts->init_files, "SQL scripts run before the prompt (e.g. table definitions)");
  cmd->callback([opts, &exit_code] { exit_code = shell(*opts); });
}

}  // namespace clink::cli
