// The SQL gateway's REST routes (Flink's SqlGatewayRestEndpoint): /v1../v4 sessions,
// statements, operations and results, answered with Flink's bodies and error shapes.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>

#include "clink/cluster/gateway/sql_gateway.hpp"
#include "clink/core/error.hpp"
#include "clink/formats/json_row_format.hpp"
#include "clink/sql/common/column_batch.hpp"
#include "clink/sql/common/column_serde.hpp"
#include "clink/sql/common/time_zone.hpp"
#include "clink/sql/common/value_format.hpp"
#include "clink/sql/spec/sql_op_spec.hpp"
#include "gateway_json.hpp"
#include "gateway_operation.hpp"

namespace clink::cluster::gateway {

namespace {

constexpr const char* kJson = "application/json; charset=UTF-8";
constexpr const char* kVersion = R"(/(v[1-4]))";
constexpr const char* kUuid = R"(([^/]+))";

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string random_uuid() {
  static std::mutex mu;
  static std::mt19937_64 rng{std::random_device{}()};
  std::lock_guard lock(mu);
  std::uint64_t hi = rng(), lo = rng();
  hi = (hi & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  lo = (lo & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // variant 1
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32, (hi >> 16) & 0xffff, hi & 0xffff, lo >> 48,
                     lo & 0xffffffffffffULL);
}

// Flink's path parameters are UUIDs; anything else is a 400 before any lookup.
const std::string& uuid_param(const std::string& value, const char* what) {
  bool ok = value.size() == 36;
  for (std::size_t i = 0; ok && i < value.size(); ++i)
    ok = (i == 8 || i == 13 || i == 18 || i == 23) ? value[i] == '-' : std::isxdigit(static_cast<unsigned char>(value[i])) != 0;
  if (!ok)
    throw GatewayError(400, fmt::format("Bad request, could not parse parameters: Cannot resolve path parameter ({}) from value \"{}\".",
                                        what, value));
  return value;
}

void reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(), kJson);
}

// A statement's failure as Flink's gateway reports it: the server-side exception chain,
// whose last "Caused by" (up to its first frame) the SQL client shows as the reason.
std::string server_side(const std::string& what, const std::string& operation, const std::string& message) {
  return fmt::format("<Exception on server side:\norg.apache.flink.table.gateway.api.utils.SqlGatewayException: Failed to {}.\n"
                     "Caused by: org.apache.flink.table.gateway.service.utils.SqlExecutionException: Failed to execute the operation {}.\n"
                     "Caused by: org.apache.flink.table.api.TableException: {}\n"
                     // A frame ends the message: the SQL client shows the last cause up to it.
                     "\tat clink.cluster.gateway.Operation.run(sql-gateway)\n\nEnd of exception on server side>",
                     what, operation, message);
}

// A statement's failure: Flink answers it as an internal error carrying the server-side
// exception (server_side()).
class ServerSideError : public GatewayError {
 public:
  explicit ServerSideError(std::string text) : GatewayError(500, std::move(text)) {}
};

json body_object(const httplib::Request& req) {
  bool blank = req.body.find_first_not_of(" \t\r\n") == std::string::npos;
  if (blank) return json::object();
  json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object())
    throw GatewayError(400, "Bad request, could not parse the request body: not a JSON object.");
  return body;
}

std::string statement_of(const json& body) {
  if (!body.contains("statement") || !body["statement"].is_string())
    throw GatewayError(400, "Bad request, the request body needs \"statement\" (a string).");
  return body["statement"].get<std::string>();
}

// configure-session takes only what shapes the session (Flink's list).
void check_configuring(const std::string& statement) {
  std::size_t b = statement.find_first_not_of(" \t\r\n(");
  std::size_t e = b == std::string::npos ? b : statement.find_first_of(" \t\r\n;(", b);
  std::string word = b == std::string::npos ? "" : statement.substr(b, e == std::string::npos ? std::string::npos : e - b);
  for (auto& c : word) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const char* ok : {"SET", "RESET", "CREATE", "DROP", "ALTER", "USE", "LOAD", "UNLOAD", "ADD"})
    if (word == ok) return;
  throw GatewayError(500, fmt::format("Unsupported statement for configuring session: {}\nThe configureSession API only supports "
                                      "executing statements of type SET, RESET, CREATE, DROP, ALTER, USE, LOAD, UNLOAD and ADD JAR.",
                                      statement));
}

struct Session {
  std::string id;
  std::unique_ptr<SessionBackend> backend;
  std::mutex exec_mu;  // its statements run one at a time, in submission order:
  std::condition_variable turn;  // each waits for its ticket to be served
  std::uint64_t next_ticket = 0, serving = 0;  // under exec_mu
  std::mutex mu;
  std::map<std::string, std::shared_ptr<Operation>> operations;
  std::atomic<std::int64_t> last_access_ms{now_ms()};

  ~Session() {
    std::map<std::string, std::shared_ptr<Operation>> ops;
    {
      std::lock_guard lock(mu);
      ops.swap(operations);
    }
    ops.clear();  // closes each (cancelling its query) and joins its thread
  }
};

// A SELECT's result channel: how its posted batches decode.
struct Collect {
  std::shared_ptr<CollectedRows> rows;
  sql::SchemaPtr schema;
  sql::TimeZonePtr zone;
  // By column: an encoder of a one-field row {"v": value} for ROW / ARRAY / MAP columns.
  std::vector<std::shared_ptr<const sql::JsonRowEncoder>> nested;
};

bool is_nested(const sql::LogicalType& t) {
  return t.is(sql::TypeKind::kRow) || t.is(sql::TypeKind::kArray) || t.is(sql::TypeKind::kMap);
}

// Flink's SQL gateway writes JSON rows with RowDataToJsonConverters: ISO-8601 timestamps,
// a NULL map key as the literal "null"; the json format's encoder is those converters.
std::vector<std::shared_ptr<const sql::JsonRowEncoder>> nested_encoders(const sql::Schema& schema) {
  sql::JsonFormatOptions o;
  o.timestamp_standard = sql::TimestampStandard::kIso8601;
  o.map_null_key_mode = sql::JsonFormatOptions::MapNullKeyMode::kLiteral;
  std::vector<std::shared_ptr<const sql::JsonRowEncoder>> out;
  for (const auto& f : schema.fields())
    out.push_back(is_nested(f.type) ? std::make_shared<const sql::JsonRowEncoder>(sql::make_schema({{"v", f.type}}), o)
                                    : nullptr);
  return out;
}

}  // namespace

void CollectedRows::append(std::vector<ResultRow> rows) {
  std::lock_guard lock(mu_);
  if (rows_.empty()) rows_ = std::move(rows);
  else for (auto& r : rows) rows_.push_back(std::move(r));
}

bool CollectedRows::full() {
  std::lock_guard lock(mu_);
  return rows_.size() >= kMaxBuffered;
}

std::vector<ResultRow> CollectedRows::take() {
  std::lock_guard lock(mu_);
  std::vector<ResultRow> out;
  out.swap(rows_);
  return out;
}

struct SqlGateway::Impl {
  SessionFactory factory;
  SqlGatewayOptions options;
  httplib::Server server;
  std::thread thread;
  int port = 0;
  std::mutex mu;
  std::map<std::string, std::shared_ptr<Session>> sessions;
  std::map<std::string, Collect> collects;  // under mu
  // Closes idle sessions every few seconds (sql-gateway.session.idle-timeout).
  std::thread reaper;
  std::mutex reaper_mu;
  std::condition_variable reaper_cv;
  bool stopping = false;  // under reaper_mu

  std::shared_ptr<Session> session(const std::string& id) {
    uuid_param(id, "session_handle");
    std::shared_ptr<Session> s;
    {
      std::lock_guard lock(mu);
      auto it = sessions.find(id);
      if (it != sessions.end()) s = it->second;
    }
    if (!s) throw GatewayError(500, fmt::format("Session '{}' does not exist.", id));
    s->last_access_ms = now_ms();
    return s;
  }

  std::shared_ptr<Operation> operation(Session& s, const std::string& id) {
    uuid_param(id, "operation_handle");
    std::lock_guard lock(s.mu);
    auto it = s.operations.find(id);
    if (it == s.operations.end())
      throw GatewayError(500, fmt::format("Can not find the submitted operation in the OperationManager with the {}.", id));
    return it->second;
  }

  void expire_idle() {
    std::vector<std::shared_ptr<Session>> expired;
    {
      std::lock_guard lock(mu);
      for (auto it = sessions.begin(); it != sessions.end();)
        if (options.session_idle_timeout.count() > 0 &&
            now_ms() - it->second->last_access_ms > options.session_idle_timeout.count()) {
          expired.push_back(it->second);
          it = sessions.erase(it);
        } else {
          ++it;
        }
    }
  }

  std::string submit(const std::shared_ptr<Session>& s, std::string statement) {
    std::string id = random_uuid();
    Session* raw = s.get();  // the session outlives its operations (~Session joins them)
    std::uint64_t ticket;
    {
      std::lock_guard lock(raw->exec_mu);
      ticket = raw->next_ticket++;
    }
    auto op = std::make_shared<Operation>(id, [raw, ticket, statement = std::move(statement)] {
      std::unique_lock lock(raw->exec_mu);
      raw->turn.wait(lock, [&] { return raw->serving == ticket; });
      struct Next {  // the next statement's turn, however this one ends
        Session* s;
        ~Next() {
          ++s->serving;
          s->turn.notify_all();
        }
      } next{raw};
      return raw->backend->execute(statement);
    });
    std::lock_guard lock(s->mu);
    s->operations[id] = std::move(op);
    return id;
  }

  void routes();
};

void SqlGateway::Impl::routes() {
  // Every handler: GatewayError -> Flink's {"errors": [...]} with its status.
  auto handle = [](auto fn) {
    return [fn](const httplib::Request& req, httplib::Response& res) {
      try {
        fn(req, res);
      } catch (const ServerSideError& e) {
        reply(res, e.status(), json{{"errors", json::array({"Internal server error.", e.what()})}});
      } catch (const GatewayError& e) {
        reply(res, e.status(), json{{"errors", json::array({e.what()})}});
      } catch (const std::exception& e) {
        reply(res, 500, json{{"errors", json::array({"Internal server error.", e.what()})}});
      }
    };
  };
  auto& srv = server;
  srv.Get(R"(/(?:v[1-4]/)?api_versions)", handle([](const httplib::Request&, httplib::Response& res) {
    reply(res, 200, json{{"versions", {"V1", "V2", "V3", "V4"}}});
  }));
  srv.Get(std::string(kVersion) + "/info", handle([this](const httplib::Request&, httplib::Response& res) {
    reply(res, 200, json{{"productName", "Apache Flink"}, {"version", options.version}});
  }));
  srv.Post(std::string(kVersion) + "/sessions", handle([this](const httplib::Request& req, httplib::Response& res) {
    json body = body_object(req);
    std::map<std::string, std::string> props;
    if (body.contains("properties") && body["properties"].is_object())
      for (const auto& [k, v] : body["properties"].items()) props[k] = v.is_string() ? v.get<std::string>() : v.dump();
    auto s = std::make_shared<Session>();
    s->id = random_uuid();
    s->backend = factory(props);
    {
      std::lock_guard lock(mu);
      sessions[s->id] = s;
    }
    reply(res, 200, json{{"sessionHandle", s->id}});
  }));
  const std::string session_path = std::string(kVersion) + "/sessions/" + kUuid;
  srv.Get(session_path, handle([this](const httplib::Request& req, httplib::Response& res) {
    auto s = session(req.matches[2]);
    json props = json::object();
    {
      std::lock_guard lock(s->exec_mu);
      for (const auto& [k, v] : s->backend->properties()) props[k] = v;
    }
    reply(res, 200, json{{"properties", std::move(props)}});
  }));
  srv.Delete(session_path, handle([this](const httplib::Request& req, httplib::Response& res) {
    auto s = session(req.matches[2]);
    {
      std::lock_guard lock(mu);
      sessions.erase(s->id);
    }
    s.reset();  // closes its operations once the last request using it is done
    reply(res, 200, json{{"status", "CLOSED"}});
  }));
  srv.Post(session_path + "/heartbeat", handle([this](const httplib::Request& req, httplib::Response& res) {
    session(req.matches[2]);
    reply(res, 200, json::object());
  }));
  srv.Post(session_path + "/configure-session", handle([this](const httplib::Request& req, httplib::Response& res) {
    auto s = session(req.matches[2]);
    std::string statement = statement_of(body_object(req));
    check_configuring(statement);
    try {
      std::lock_guard lock(s->exec_mu);
      s->backend->execute(statement);
    } catch (const std::exception& e) {
      throw ServerSideError(server_side("configure session", "configure-session", e.what()));
    }
    reply(res, 200, json::object());
  }));
  srv.Get(session_path + "/complete-statement", handle([this](const httplib::Request& req, httplib::Response& res) {
    session(req.matches[2]);
    reply(res, 200, json{{"candidates", json::array()}});
  }));
  srv.Post(session_path + "/statements", handle([this](const httplib::Request& req, httplib::Response& res) {
    auto s = session(req.matches[2]);
    json body = body_object(req);
    // As Flink 2.3's gateway: a positive executionTimeout is refused, before anything runs.
    if (auto t = body.find("executionTimeout"); t != body.end() && t->is_number() && t->get<double>() > 0)
      throw ServerSideError(
          "<Exception on server side:\norg.apache.flink.table.gateway.api.utils.SqlGatewayException: Failed to execute "
          "statement.\nCaused by: java.lang.UnsupportedOperationException: SqlGatewayService doesn't support timeout "
          "mechanism now.\n\tat clink.cluster.gateway.SqlGateway.executeStatement(sql-gateway)\n\nEnd of exception on "
          "server side>");
    reply(res, 200, json{{"operationHandle", submit(s, statement_of(body))}});
  }));
  const std::string op_path = session_path + "/operations/" + kUuid;
  srv.Get(op_path + "/status", handle([this](const httplib::Request& req, httplib::Response& res) {
    auto s = session(req.matches[2]);
    reply(res, 200, json{{"status", status_name(operation(*s, req.matches[3])->status())}});
  }));
  srv.Post(op_path + "/cancel", handle([this](const httplib::Request& req, httplib::Response& res) {
    auto s = session(req.matches[2]);
    auto op = operation(*s, req.matches[3]);
    op->cancel();
    reply(res, 200, json{{"status", status_name(op->status())}});
  }));
  srv.Delete(op_path + "/close", handle([this](const httplib::Request& req, httplib::Response& res) {
    auto s = session(req.matches[2]);
    std::shared_ptr<Operation> op = operation(*s, req.matches[3]);
    {
      std::lock_guard lock(s->mu);
      s->operations.erase(op->id());
    }
    op->close();
    reply(res, 200, json{{"status", "CLOSED"}});
  }));
  srv.Get(op_path + R"(/result/(\d+))", handle([this](const httplib::Request& req, httplib::Response& res) {
    const std::string version = req.matches[1];
    auto s = session(req.matches[2]);
    auto op = operation(*s, req.matches[3]);
    long token = std::stol(req.matches[4]);
    RowFormat format = RowFormat::kJson;
    std::string format_param;
    if (req.has_param("rowFormat")) {
      format_param = req.get_param_value("rowFormat");
      if (format_param == "PLAIN_TEXT") format = RowFormat::kPlainText;
      else if (format_param != "JSON")
        throw GatewayError(400, fmt::format("Bad request, could not parse parameters: Cannot resolve query parameter (rowFormat) "
                                            "from value \"{}\".", format_param));
    }
    Operation::Page page;
    try {
      page = op->fetch(token, format, options.max_rows_per_page);
    } catch (const GatewayError& e) {
      throw ServerSideError(server_side("fetchResults", op->id(), e.what()));
    }
    json body = std::move(page.body);
    if (page.has_next) {
      long next = page.not_ready ? token : token + 1;
      body["nextResultUri"] = fmt::format("/{}/sessions/{}/operations/{}/result/{}{}", version, s->id, op->id(), next,
                                          format_param.empty() ? "" : "?rowFormat=" + format_param);
    }
    reply(res, 200, body);
  }));
  // A gateway_collect_sink's batch (collect_sink.hpp): decoded and formatted once here.
  srv.Post(R"(/clink/v1/collect/([0-9A-Za-z_-]+))", handle([this](const httplib::Request& req, httplib::Response& res) {
    Collect c;
    {
      std::lock_guard lock(mu);
      auto it = collects.find(req.matches[1]);
      if (it == collects.end()) throw GatewayError(410, fmt::format("result {} is closed", req.matches[1].str()));
      c = it->second;
    }
    if (c.rows->full()) {  // the client is behind: the sink retries (backpressure)
      reply(res, 429, json{{"errors", {"the result buffer is full"}}});
      return;
    }
    sql::ColumnBatch b = sql::deserialize_batch(c.schema, req.body);
    std::vector<ResultRow> rows(b.size());
    for (std::size_t r = 0; r < b.size(); ++r) {
      rows[r].kind = b.row_kind(r);
      rows[r].cells.reserve(b.num_columns());
      for (std::size_t col = 0; col < b.num_columns(); ++col) {
        const sql::Column& column = b.column(col);
        if (column.is_null(r)) {
          rows[r].cells.emplace_back(std::nullopt);
          continue;
        }
        std::string cell;
        sql::append_cell_string(column, r, *c.zone, /*printing=*/true, cell);
        rows[r].cells.emplace_back(std::move(cell));
        if (col < c.nested.size() && c.nested[col]) {
          std::string one;  // {"v":<value>}
          const sql::Column* only = &column;
          c.nested[col]->encode(&only, r, one);
          rows[r].nested_json[col] = one.substr(5, one.size() - 6);
        }
      }
    }
    c.rows->append(std::move(rows));
    reply(res, 200, json::object());
  }));
  srv.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (res.status == 404 && res.body.empty()) reply(res, 404, json{{"errors", {"Not found: " + req.path}}});
  });
}

SqlGateway::SqlGateway(SessionFactory factory, SqlGatewayOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->factory = std::move(factory);
  impl_->options = std::move(options);
  impl_->routes();
}

SqlGateway::~SqlGateway() { stop(); }

void SqlGateway::start() {
  auto& srv = impl_->server;
  int port = impl_->options.port;
  if (port == 0) port = srv.bind_to_any_port(impl_->options.address);
  else if (!srv.bind_to_port(impl_->options.address, port)) port = -1;
  if (port < 0)
    throw ClinkError(fmt::format("sql gateway: cannot listen on {}:{} (sql-gateway.endpoint.rest.address / .port)",
                                 impl_->options.address, impl_->options.port));
  impl_->port = port;
  impl_->thread = std::thread([&srv] { srv.listen_after_bind(); });
  impl_->reaper = std::thread([impl = impl_.get()] {
    std::unique_lock lock(impl->reaper_mu);
    while (!impl->reaper_cv.wait_for(lock, std::chrono::seconds(5), [impl] { return impl->stopping; })) {
      lock.unlock();
      impl->expire_idle();
      lock.lock();
    }
  });
}

void SqlGateway::stop() {
  if (!impl_->thread.joinable()) return;
  {
    std::lock_guard lock(impl_->reaper_mu);
    impl_->stopping = true;
  }
  impl_->reaper_cv.notify_all();
  impl_->reaper.join();
  impl_->server.stop();
  impl_->thread.join();
  std::map<std::string, std::shared_ptr<Session>> sessions;
  {
    std::lock_guard lock(impl_->mu);
    sessions.swap(impl_->sessions);
  }
}

int SqlGateway::port() const { return impl_->port; }

std::shared_ptr<CollectedRows> SqlGateway::open_collect(const std::string& result_id, const std::vector<ResultColumn>& columns,
                                                        const std::string& time_zone) {
  nlohmann::json fields = nlohmann::json::array();
  for (const auto& c : columns) fields.push_back({{"name", c.name}, {"type", c.type}});
  Collect c{std::make_shared<CollectedRows>(), sql::schema_from_json(fields, "gateway result " + result_id),
            sql::TimeZone::of(time_zone), {}};
  c.nested = nested_encoders(*c.schema);
  std::lock_guard lock(impl_->mu);
  impl_->collects[result_id] = c;
  return c.rows;
}

void SqlGateway::close_collect(const std::string& result_id) {
  std::lock_guard lock(impl_->mu);
  impl_->collects.erase(result_id);
}

}  // namespace clink::cluster::gateway
