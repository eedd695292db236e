// libpq behind PgConnection (include/clink/connectors/jdbc/pg_connection.hpp).
#include "clink/connectors/jdbc/pg_connection.hpp"

#include <libpq-fe.h>

#include <cctype>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

namespace clink::sql {

namespace {

constexpr std::string_view kPrefix = "jdbc:postgresql:";

std::string percent_decode(std::string_view s, std::string_view url) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%') {
      int v = 0;
      if (i + 2 >= s.size() || std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16).ptr != s.data() + i + 3)
        throw ClinkError(fmt::format("the JDBC URL '{}' has a bad percent escape", url));
      out.push_back(static_cast<char>(v));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// The statement as messages show it: its first 200 characters.
std::string statement_text(std::string_view sql) {
  constexpr std::size_t kMax = 200;
  std::string s(sql.substr(0, kMax));
  for (char& c : s)
    if (c == '\n' || c == '\t') c = ' ';
  if (sql.size() > kMax) s += "...";
  return s;
}

bool lost_sqlstate(std::string_view state) {
  return state.starts_with("08") || state == "57P01" || state == "57P02" || state == "57P03";
}

// libpq prints NOTICEs (such as "table does not exist, skipping") to stderr by default.
void drop_notice(void*, const char*) {}

void append_conninfo(std::string& out, std::string_view key, std::string_view value) {
  out += key;
  out += "='";
  for (char c : value) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  out += "' ";
}

// The session settings pg_values' text forms assume.
constexpr std::string_view kSessionOptions =
    "-c DateStyle=ISO -c TimeZone=UTC -c IntervalStyle=iso_8601 -c bytea_output=hex -c extra_float_digits=3";

}  // namespace

std::optional<std::string> PgUrl::param(std::string_view key) const {
  for (const auto& [k, v] : params)
    if (k == key) return v;
  return std::nullopt;
}

bool is_postgres_jdbc_url(std::string_view url) { return url.starts_with(kPrefix); }

PgUrl parse_postgres_jdbc_url(std::string_view url) {
  auto bad = [&](std::string_view why) {
    return ClinkError(fmt::format("the JDBC URL '{}' is not a PostgreSQL URL "
                                  "(jdbc:postgresql://host[:port][/database][?user=...]): {}",
                                  url, why));
  };
  if (!is_postgres_jdbc_url(url)) throw bad("it does not start with 'jdbc:postgresql:'");
  std::string_view rest = url.substr(kPrefix.size());
  PgUrl out;
  std::string_view query;
  if (auto q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  if (rest.starts_with("//")) {
    rest.remove_prefix(2);
    auto slash = rest.find('/');
    std::string_view hostport = rest.substr(0, slash);
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
    if (hostport.find(',') != std::string_view::npos) throw bad("several hosts are not supported");
    std::string_view host = hostport;
    if (hostport.starts_with('[')) {  // [::1]:5432
      auto close = hostport.find(']');
      if (close == std::string_view::npos) throw bad("unclosed '['");
      host = hostport.substr(1, close - 1);
      hostport.remove_prefix(close + 1);
      if (!hostport.empty() && hostport[0] != ':') throw bad("junk after the IPv6 address");
      hostport = hostport.empty() ? hostport : hostport.substr(1);
      if (!hostport.empty()) {
        auto r = std::from_chars(hostport.data(), hostport.data() + hostport.size(), out.port);
        if (r.ec != std::errc() || r.ptr != hostport.data() + hostport.size()) throw bad("bad port");
      }
    } else if (auto colon = hostport.rfind(':'); colon != std::string_view::npos) {
      host = hostport.substr(0, colon);
      std::string_view p = hostport.substr(colon + 1);
      auto r = std::from_chars(p.data(), p.data() + p.size(), out.port);
      if (p.empty() || r.ec != std::errc() || r.ptr != p.data() + p.size() || out.port <= 0 || out.port > 65535)
        throw bad(fmt::format("bad port '{}'", p));
    }
    if (!host.empty()) out.host = std::string(host);
  }
  out.database = percent_decode(rest, url);
  while (!query.empty()) {
    auto amp = query.find('&');
    std::string_view kv = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (kv.empty()) continue;
    auto eq = kv.find('=');
    std::string key = percent_decode(kv.substr(0, eq), url);
    std::string value = eq == std::string_view::npos ? std::string() : percent_decode(kv.substr(eq + 1), url);
    out.params.emplace_back(std::move(key), std::move(value));
  }
  return out;
}

std::string pg_conninfo(const PgConnectOptions& o) {
  PgUrl u = parse_postgres_jdbc_url(o.url);
  std::string s;
  append_conninfo(s, "host", u.host);
  append_conninfo(s, "port", std::to_string(u.port));
  if (!u.database.empty()) append_conninfo(s, "dbname", u.database);
  std::optional<std::string> user = o.username ? o.username : u.param("user");
  std::optional<std::string> password = o.password ? o.password : u.param("password");
  if (user) append_conninfo(s, "user", *user);
  if (password) append_conninfo(s, "password", *password);
  if (auto v = u.param("sslmode")) append_conninfo(s, "sslmode", *v);
  int timeout = o.connect_timeout_s;
  if (auto v = u.param("connectTimeout")) {
    int t = 0;
    if (std::from_chars(v->data(), v->data() + v->size(), t).ec == std::errc() && t > 0) timeout = t;
  }
  append_conninfo(s, "connect_timeout", std::to_string(timeout));
  append_conninfo(s, "application_name", u.param("ApplicationName").value_or(o.application_name));
  std::string options(kSessionOptions);
  if (auto v = u.param("options")) options += " " + *v;
  append_conninfo(s, "options", options);
  if (o.replication) append_conninfo(s, "replication", "database");
  return s;
}

std::string pg_describe(const PgConnectOptions& o) {
  PgUrl u = parse_postgres_jdbc_url(o.url);
  std::string user = o.username ? *o.username : u.param("user").value_or("(default user)");
  return fmt::format("{}@{}:{}/{}", user, u.host, u.port, u.database.empty() ? user : u.database);
}

// ---- PgResult

PgResult::~PgResult() {
  if (r_) PQclear(r_);
}
int PgResult::rows() const { return r_ ? PQntuples(r_) : 0; }
int PgResult::columns() const { return r_ ? PQnfields(r_) : 0; }
bool PgResult::is_null(int row, int col) const { return PQgetisnull(r_, row, col) != 0; }
std::string_view PgResult::value(int row, int col) const {
  return {PQgetvalue(r_, row, col), static_cast<std::size_t>(PQgetlength(r_, row, col))};
}
std::string PgResult::column_name(int col) const { return PQfname(r_, col); }
std::uint32_t PgResult::column_type(int col) const { return PQftype(r_, col); }
int PgResult::column_index(std::string_view name) const {
  for (int c = 0; c < columns(); ++c)
    if (name == PQfname(r_, c)) return c;
  return -1;
}
std::int64_t PgResult::affected_rows() const {
  const char* n = r_ ? PQcmdTuples(r_) : "";
  std::int64_t v = 0;
  std::from_chars(n, n + std::strlen(n), v);
  return v;
}

// ---- PgConnection

PgConnection::PgConnection(PgConnectOptions options) : options_(std::move(options)) { open(); }

PgConnection::PgConnection(PgConnection&& o) noexcept
    : options_(std::move(o.options_)), conn_(std::exchange(o.conn_, nullptr)), copy_sql_(std::move(o.copy_sql_)) {}

PgConnection& PgConnection::operator=(PgConnection&& o) noexcept {
  std::swap(options_, o.options_);
  std::swap(conn_, o.conn_);
  std::swap(copy_sql_, o.copy_sql_);
  return *this;
}

PgConnection::~PgConnection() { close(); }

void PgConnection::close() {
  if (conn_) PQfinish(conn_);
  conn_ = nullptr;
}

void PgConnection::open() {
  std::string info = pg_conninfo(options_);
  conn_ = PQconnectdb(info.c_str());
  if (!conn_) throw PgError("cannot connect to PostgreSQL " + describe() + ": out of memory", "", true);
  if (PQstatus(conn_) != CONNECTION_OK) {
    std::string msg = PQerrorMessage(conn_);
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    close();
    throw PgError(fmt::format("cannot connect to PostgreSQL {}: {}", describe(), msg), "", true);
  }
  PQsetNoticeProcessor(conn_, drop_notice, nullptr);
}

void PgConnection::reconnect() {
  close();
  copy_sql_.clear();
  open();
}

bool PgConnection::ok() const { return conn_ && PQstatus(conn_) == CONNECTION_OK; }
int PgConnection::backend_pid() const { return conn_ ? PQbackendPID(conn_) : 0; }
int PgConnection::server_version() const { return conn_ ? PQserverVersion(conn_) : 0; }
int PgConnection::socket() const { return conn_ ? PQsocket(conn_) : -1; }

PgError PgConnection::error(std::string_view what, const pg_result* result) const {
  std::string state;
  std::string msg;
  if (result) {
    if (const char* s = PQresultErrorField(result, PG_DIAG_SQLSTATE)) state = s;
    if (const char* m = PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY)) msg = m;
    if (const char* d = PQresultErrorField(result, PG_DIAG_MESSAGE_DETAIL)) msg += fmt::format(" ({})", d);
  }
  if (msg.empty() && conn_) msg = PQerrorMessage(conn_);
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  bool lost = !conn_ || PQstatus(conn_) != CONNECTION_OK || lost_sqlstate(state);
  std::string text = state.empty() ? fmt::format("PostgreSQL {}: {}: {}", describe(), what, msg)
                                   : fmt::format("PostgreSQL {}: {}: {} (SQLSTATE {})", describe(), what, msg, state);
  return PgError(std::move(text), std::move(state), lost);
}

PgResult PgConnection::check(pg_result* r, std::string_view sql, int ok_status) const {
  PgResult result(r);
  auto st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (st == ok_status || (ok_status == PGRES_COMMAND_OK && st == PGRES_TUPLES_OK) ||
      (ok_status == PGRES_TUPLES_OK && st == PGRES_COMMAND_OK))
    return result;
  throw error(fmt::format("statement failed: {}", statement_text(sql)), r);
}

PgResult PgConnection::exec(std::string_view sql) {
  if (!conn_) throw error(fmt::format("statement failed: {}", statement_text(sql)));
  std::string s(sql);
  return check(PQexec(conn_, s.c_str()), sql, PGRES_COMMAND_OK);
}

PgResult PgConnection::exec_params(std::string_view sql, int n, const char* const* values, const int* lengths) {
  if (!conn_) throw error(fmt::format("statement failed: {}", statement_text(sql)));
  std::string s(sql);
  return check(PQexecParams(conn_, s.c_str(), n, nullptr, values, lengths, nullptr, 0), sql, PGRES_COMMAND_OK);
}

PgResult PgConnection::exec_params(std::string_view sql, const std::vector<std::optional<std::string>>& values) {
  std::vector<const char*> ptrs;
  std::vector<int> lengths;
  for (const auto& v : values) {
    ptrs.push_back(v ? v->c_str() : nullptr);
    lengths.push_back(v ? static_cast<int>(v->size()) : 0);
  }
  return exec_params(sql, static_cast<int>(values.size()), ptrs.data(), lengths.data());
}

void PgConnection::prepare(const std::string& name, std::string_view sql, int n) {
  if (!conn_) throw error(fmt::format("preparing failed: {}", statement_text(sql)));
  std::string s(sql);
  check(PQprepare(conn_, name.c_str(), s.c_str(), n, nullptr), sql, PGRES_COMMAND_OK);
}

PgResult PgConnection::exec_prepared(const std::string& name, int n, const char* const* values, const int* lengths) {
  if (!conn_) throw error("prepared statement " + name + " failed");
  return check(PQexecPrepared(conn_, name.c_str(), n, values, lengths, nullptr, 0), "prepared statement " + name,
               PGRES_COMMAND_OK);
}

void PgConnection::copy_in_begin(std::string_view copy_sql) {
  if (!conn_) throw error(fmt::format("statement failed: {}", statement_text(copy_sql)));
  std::string s(copy_sql);
  check(PQexec(conn_, s.c_str()), copy_sql, PGRES_COPY_IN);
  copy_sql_ = s;
}

void PgConnection::copy_in_put(std::string_view data) {
  if (data.empty()) return;
  if (!conn_ || PQputCopyData(conn_, data.data(), static_cast<int>(data.size())) != 1)
    throw error(fmt::format("sending COPY data failed: {}", statement_text(copy_sql_)));
}

std::int64_t PgConnection::copy_in_end() {
  std::string sql = std::move(copy_sql_);
  copy_sql_.clear();
  if (!conn_ || PQputCopyEnd(conn_, nullptr) != 1) throw error(fmt::format("ending COPY failed: {}", statement_text(sql)));
  PgResult last;
  // The COPY's result, then the null that ends the command.
  bool failed = false;
  PgError err("", "", false);
  while (pg_result* r = PQgetResult(conn_)) {
    PgResult res(r);
    if (PQresultStatus(r) != PGRES_COMMAND_OK && !failed) {
      failed = true;
      err = error(fmt::format("statement failed: {}", statement_text(sql)), r);
    }
    last = std::move(res);
  }
  if (failed) throw err;
  return last.affected_rows();
}

std::int64_t PgConnection::copy_in(std::string_view copy_sql, std::string_view data) {
  copy_in_begin(copy_sql);
  copy_in_put(data);
  return copy_in_end();
}

// ---- quoting

std::string quote_pg_identifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

void append_pg_literal_text(std::string_view text, std::string& out) {
  out += '\'';
  for (char c : text) {
    if (c == '\'') out += '\'';
    out += c;
  }
  out += '\'';
}

std::string quote_pg_literal(std::string_view text) {
  std::string out;
  append_pg_literal_text(text, out);
  return out;
}

std::string quote_pg_column_name(std::string_view name) {
  std::string folded(name);
  for (char& c : folded) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return quote_pg_identifier(folded);
}

std::string quote_pg_table_name(std::string_view table_name) {
  std::string out;
  std::size_t i = 0;
  while (i <= table_name.size()) {
    if (!out.empty()) out += '.';
    if (i < table_name.size() && table_name[i] == '"') {  // "Quoted.Part" as written
      std::size_t j = i + 1;
      for (; j < table_name.size(); ++j) {
        if (table_name[j] != '"') continue;
        if (j + 1 < table_name.size() && table_name[j + 1] == '"') { ++j; continue; }
        break;
      }
      if (j >= table_name.size()) throw ClinkError(fmt::format("table name '{}': unclosed '\"'", table_name));
      out.append(table_name.substr(i, j + 1 - i));
      i = j + 1;
      if (i < table_name.size() && table_name[i] != '.')
        throw ClinkError(fmt::format("table name '{}': '.' expected after a quoted part", table_name));
    } else {
      auto dot = table_name.find('.', i);
      if (dot == std::string_view::npos) dot = table_name.size();
      auto part = table_name.substr(i, dot - i);
      if (part.empty()) throw ClinkError(fmt::format("table name '{}' has an empty part", table_name));
      out += quote_pg_column_name(part);
      i = dot;
    }
    if (i >= table_name.size()) break;
    ++i;  // the '.'
  }
  return out;
}

}  // namespace clink::sql
