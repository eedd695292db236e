#include "gateway_backend.hpp"

#include <fmt/format.h>

#include "clink/cluster/gateway/collect_sink.hpp"
#include "clink/cluster/rest/dispatcher.hpp"
#include "clink/core/error.hpp"
#include "clink/sql/handler/statement_runner.hpp"
#include "clink/sql/parser/parser.hpp"
#include "clink/sql/planner/explain.hpp"
#include "sql_session.hpp"

namespace clink::cli {

namespace gw = cluster::gateway;

namespace {

// A SELECT's job on the Dispatcher; its rows arrive through the gateway's collect channel.
class DispatchedSelect final : public gw::QueryRows {
 public:
  DispatchedSelect(cluster::Dispatcher& dispatcher, gw::SqlGateway& gateway, std::string result_id,
                   std::shared_ptr<gw::CollectedRows> rows)
      : dispatcher_(dispatcher), gateway_(gateway), result_id_(std::move(result_id)), rows_(std::move(rows)) {}
  ~DispatchedSelect() override {
    cancel();
    gateway_.close_collect(result_id_);
  }
  void set_job(std::string id) { job_id_ = std::move(id); }

  std::vector<gw::ResultRow> take() override { return rows_->take(); }
  bool finished() override {
    auto job = dispatcher_.job(job_id_);
    if (!job->terminal()) return false;
    if (job->status() == JobStatus::kFailed) {
      auto ex = job->exceptions();
      throw ClinkError(fmt::format("the query's job {} failed: {}", job_id_, ex.empty() ? "unknown cause" : ex.back().message));
    }
    return true;
  }
  void cancel() override {
    if (job_id_.empty() || cancelled_) return;
    cancelled_ = true;
    try {
      if (!dispatcher_.job(job_id_)->terminal()) dispatcher_.cancel(job_id_);
    } catch (const std::exception&) {  // it ended meanwhile
    }
  }

 private:
  cluster::Dispatcher& dispatcher_;
  gw::SqlGateway& gateway_;
  std::string result_id_;
  std::shared_ptr<gw::CollectedRows> rows_;
  std::string job_id_;
  bool cancelled_ = false;
};

// SHOW / DESCRIBE print a tableau box: its header and rows become columns and rows;
// other text (EXPLAIN) is one row of one column "result", as Flink's.
gw::StatementOutcome text_outcome(const std::string& text) {
  gw::StatementOutcome out;
  out.kind = gw::StatementOutcome::Kind::kTable;
  std::vector<std::vector<std::string>> lines;
  std::size_t start = 0;
  bool boxed = !text.empty() && text[0] == '+';
  while (boxed && start < text.size()) {
    std::size_t end = text.find('\n', start);
    std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    start = end == std::string::npos ? text.size() : end + 1;
    if (line.empty() || line[0] == '+') continue;
    if (line[0] != '|') {  // "N rows in set" after the box, or not a box at all
      boxed = !lines.empty();
      break;
    }
    std::vector<std::string> cells;
    std::size_t p = 1;
    for (std::size_t q = line.find('|', p); q != std::string::npos; p = q + 1, q = line.find('|', p)) {
      std::string cell = line.substr(p, q - p);
      std::size_t b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
      cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
    }
    lines.push_back(std::move(cells));
  }
  if (!boxed || lines.empty()) {
    out.columns = {{"result", "STRING"}};
    out.rows.push_back({sql::RowKind::kInsert, {text}});
    return out;
  }
  for (const auto& h : lines[0]) out.columns.push_back({h, "STRING"});
  for (std::size_t i = 1; i < lines.size(); ++i) {
    gw::ResultRow row;
    for (auto& c : lines[i]) row.cells.emplace_back(std::move(c));
    out.rows.push_back(std::move(row));
  }
  return out;
}

class CoordinatorSession final : public gw::SessionBackend {
 public:
  CoordinatorSession(CoordinatorSql& sql, gw::SqlGateway& gateway, std::string collect_url,
                     std::map<std::string, std::string> properties)
      : sql_(sql), gateway_(gateway), collect_url_(std::move(collect_url)), runner_(sql.catalog()), properties_(std::move(properties)) {
    sql_.prepare(runner_, [this] { return submit_options(); });  // materialized tables: the coordinator's
  }

  gw::StatementOutcome execute(const std::string& statement) override {
    sql::ast::Script script = sql::parse(statement);
    if (script.statements.size() != 1)
      throw ClinkError(fmt::format("a gateway statement is one SQL statement; this text has {}", script.statements.size()));
    const auto& st = script.statements[0];
    sql::StatementResult r;
    {
      std::lock_guard lock(sql_.mutex());  // the catalog is every session's
      try {
        r = runner_.execute(st);
      } catch (const std::exception& e) {
        sql_.save();
        throw ClinkError(describe_error(e, st.pos));
      }
      sql_.save();
    }
    if (const auto* set = st.as<sql::ast::Set>(); set && set->key) sets_[*set->key] = set->value.value_or("");
    if (const auto* reset = st.as<sql::ast::Reset>()) {
      if (reset->key) sets_.erase(*reset->key);
      else sets_.clear();
    }
    switch (r.kind) {
      case sql::StatementResult::Kind::kOk: return {};
      case sql::StatementResult::Kind::kText: return text_outcome(r.text);
      case sql::StatementResult::Kind::kJob: break;
    }
    if (st.as<sql::ast::QueryStatement>()) return run_select(std::move(r.spec), texts(st));
    gw::StatementOutcome out;
    out.kind = gw::StatementOutcome::Kind::kJob;
    out.job_id = sql_.dispatcher().submit(r.spec, submit_options(), {}, texts(st));
    out.columns = {{"job id", "STRING"}};
    out.rows.push_back({sql::RowKind::kInsert, {out.job_id}});
    return out;
  }

  std::map<std::string, std::string> properties() const override {
    std::map<std::string, std::string> all = sql_.dispatcher().configuration();
    for (const auto& [k, v] : properties_) all[k] = v;
    for (const auto& [k, v] : sets_) all[k] = v;
    return all;
  }

 private:
  // A job's options: the session's SETs (Flink's keys: checkpointing, restarts, ...) over
  // the coordinator's configuration; not the properties the client opened it with (the
  // SQL client sends its whole local config.yaml). A bad value fails naming its key.
  cluster::SubmitOptions submit_options(const std::string& collect_result = {}) const {
    nlohmann::json options = nlohmann::json::object();
    for (const auto& [k, v] : sets_) options[k] = v;
    if (!collect_result.empty()) options[gw::kCollectJobOption] = collect_result;
    return cluster::parse_submit_options(options, sql_.dispatcher().configuration());
  }

  // The statement and its optimised plan, shown with the job by the REST API and web UI.
  cluster::JobTexts texts(const sql::ast::Statement& st) {
    cluster::JobTexts t{{}, st.text, {}};
    try {
      std::lock_guard lock(sql_.mutex());
      t.plan = sql::explain_plans(runner_.plan(st));
    } catch (const std::exception&) {  // planned once already; a plan not shown fails nothing
    }
    return t;
  }

  gw::StatementOutcome run_select(nlohmann::json spec, cluster::JobTexts texts) {
    gw::StatementOutcome out;
    out.kind = gw::StatementOutcome::Kind::kQuery;
    std::string result_id = cluster::random_hex_id();
    auto target = gw::route_select_to_gateway(spec, collect_url_, result_id);
    out.columns = target.columns;
    auto rows = gateway_.open_collect(result_id, target.columns, target.time_zone);
    auto query = std::make_shared<DispatchedSelect>(sql_.dispatcher(), gateway_, result_id, std::move(rows));
    out.job_id = sql_.dispatcher().submit(spec, submit_options(result_id), {}, std::move(texts));
    query->set_job(out.job_id);
    out.query = std::move(query);
    return out;
  }

  CoordinatorSql& sql_;
  gw::SqlGateway& gateway_;
  std::string collect_url_;
  sql::StatementRunner runner_;
  std::map<std::string, std::string> properties_;  // as the session was opened with
  std::map<std::string, std::string> sets_;        // its SETs since
};

}  // namespace

std::unique_ptr<gw::SessionBackend> make_gateway_session(CoordinatorSql& sql, gw::SqlGateway& gateway, const std::string& collect_url,
                                                         const std::map<std::string, std::string>& properties) {
  return std::make_unique<CoordinatorSession>(sql, gateway, collect_url, properties);
}

}  // namespace clink::cli
