// `clink run script.sql` and `clink explain script.sql`: a script's statements in order.
#include <cstdio>

#include "clink/core/error.hpp"
#include "clink/sql/common/sql_error.hpp"
#include "clink/sql/parser/parser.hpp"
#include "commands.hpp"
#include "run_services.hpp"
#include "refresh_scheduler.hpp"
#include "sql_session.hpp"

namespace clink::cli {
namespace {

SqlJobSettings job_settings(const RunOptions& opts) {
  SqlJobSettings s;
  s.execution = execution_options(opts);
  s.parallelism = opts.job.parallelism;
  s.sets = opts.job.sets;
  s.metrics = opts.metrics;
  s.savepoint_on_stop = opts.savepoint_on_stop;
  return s;
}

void report(const std::string& path, const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "error: %s: %s\n", path.c_str(), message.c_str());
}

}  // namespace

int run_sql_script(const RunOptions& opts) {
  const std::string& path = opts.job.path;
  sql::ast::Script script;
  std::unique_ptr<RunServices> services;
  std::unique_ptr<SqlSession> session;
  try {
    std::string text = read_file(path);
    script = sql::parse(text);  // the whole script parses before anything runs
    services = std::make_unique<RunServices>(opts);
    SqlJobSettings settings = job_settings(opts);
    settings.job_ended = [s = services.get()] { s->progress_done(); };
    settings.launch = [s = services.get()](const JobGraph& g, const ExecutionOptions& o, cluster::JobTexts t) {
      return s->launch(g, o, std::move(t));
    };
    session = std::make_unique<SqlSession>(std::move(settings), opts.catalog_dir, stdout);
  } catch (const std::exception& e) {
    report(path, e.what());
    return kExitError;
  }
  for (const auto& st : script.statements) {
    try {
      if (!session->execute(st)) {
        std::fflush(stdout);
        if (!opts.savepoint_on_stop.empty()) return kExitOk;
        std::fprintf(stderr, "job cancelled\n");
        return kExitError;
      }
    } catch (const std::exception& e) {
      report(path, describe_error(e, st.pos));
      return kExitError;
    }
    // A stop before the next job: without --savepoint-on-stop the script ends here; with
    // it the next job starts from its restore point and is stopped with a savepoint at
    // once, so a stop always leaves a savepoint to resume from.
    if (stop_requested().load() && opts.savepoint_on_stop.empty()) return kExitError;
  }
  std::fflush(stdout);
  if (opts.keep_refreshing) return keep_refreshing(*session);
  return kExitOk;
}

int explain_sql_script(const JobOptions& opts, const std::string& catalog_dir, bool with_spec) {
  sql::ast::Script script;
  std::unique_ptr<SqlSession> session;
  try {
    script = sql::parse(read_file(opts.path));
    SqlJobSettings settings;
    settings.parallelism = opts.parallelism;
    settings.sets = opts.sets;
    session = std::make_unique<SqlSession>(settings, catalog_dir, stdout);
  } catch (const std::exception& e) {
    report(opts.path, e.what());
    return kExitError;
  }
  bool any = false;
  for (const auto& st : script.statements) {
    try {
      std::string text = session->explain(st, with_spec);
      if (text.empty()) continue;
      if (any) std::fputc('\n', stdout);
      any = true;
      std::fputs(text.c_str(), stdout);
    } catch (const std::exception& e) {
      report(opts.path, describe_error(e, st.pos));
      return kExitError;
    }
  }
  if (!any) std::fputs("(the script has no INSERT, statement set or query to explain)\n", stdout);
  return kExitOk;
}

}  // namespace clink::cli
