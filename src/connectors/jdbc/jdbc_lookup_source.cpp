// The jdbc connector's batched lookups (jdbc_lookup_source.hpp).
#include "clink/connectors/jdbc/jdbc_lookup_source.hpp"

#include <mutex>

#include <fmt/format.h>
#include <libpq-fe.h>
#include <nlohmann/json.hpp>

#include "clink/connectors/jdbc/jdbc_options.hpp"
#include "clink/connectors/jdbc/pg_values.hpp"
#include "clink/runtime/operator_registry.hpp"

namespace clink::sql {

namespace {

// An array parameter's text: {"v1","v2"} (each element quoted, " and \ escaped).
void append_array_element(const Column& col, std::size_t row, std::string& text, std::string& out) {
  text.clear();
  append_pg_text(col, row, text);
  out += '"';
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

class JdbcLookupSource final : public LookupSource {
 public:
  JdbcLookupSource(const LookupSourceContext& ctx, JdbcTableOptions table)
      : ctx_(ctx), table_(std::move(table)), sql_(select_statement()) {}

  void open() override { connect(); }

  void lookup(const ColumnBatch& keys, ColumnBatch& out) override {
    if (!conn_) connect();
    const std::size_t nk = keys.num_columns();
    params_.assign(nk, std::string());
    for (std::size_t k = 0; k < nk; ++k) {
      std::string& p = params_[k];
      p += '{';
      for (std::size_t r = 0; r < keys.size(); ++r) {
        if (r) p += ',';
        append_array_element(keys.column(k), r, scratch_, p);
      }
      p += '}';
    }
    values_.clear();
    for (const auto& p : params_) values_.push_back(p.c_str());
    PgResult result = conn_->exec_prepared(kStatement, static_cast<int>(nk), values_.data());
    const int rows = result.rows();
    for (int r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < out.num_columns(); ++c) {
        Column& col = out.column(c);
        if (result.is_null(r, static_cast<int>(c))) {
          col.append_null();
          continue;
        }
        try {
          append_pg_text_value(col, result.value(r, static_cast<int>(c)));
        } catch (const PgValueError& e) {
          throw ClinkError(ctx_.where + ": table `" + ctx_.table + "` column `" + ctx_.row_schema->name(c) + "`: " +
                           e.what());
        }
      }
    out.commit_rows(static_cast<std::size_t>(rows));
  }

  // After a failure: drop the connection when it broke (Flink reconnects only then).
  void reset() override {
    if (conn_ && !conn_->ok()) drop();
  }

  // From the op's thread while a lookup may block (a lock on the table): libpq's cancel
  // request, which is safe from another thread.
  void cancel() override {
    std::lock_guard lock(cancel_mu_);
    if (!cancel_) return;
    char err[256];
    PQcancel(cancel_, err, sizeof err);
  }

  void close() override { drop(); }

  ~JdbcLookupSource() override { drop(); }

 private:
  static constexpr const char* kStatement = "clink_lookup";

  void connect() {
    drop();
    auto conn = std::make_unique<PgConnection>(table_.connection);
    {
      // Cancellable from here on: preparing reads the table, which a lock can hold up.
      std::lock_guard lock(cancel_mu_);
      cancel_ = PQgetCancel(conn->raw());
    }
    try {
      conn->prepare(kStatement, sql_, static_cast<int>(ctx_.key_columns.size()));
    } catch (...) {
      drop();
      throw;
    }
    conn_ = std::move(conn);
  }

  void drop() {
    std::lock_guard lock(cancel_mu_);
    if (cancel_) PQfreeCancel(cancel_);
    cancel_ = nullptr;
    conn_.reset();
  }

  std::string select_statement() const {
    const Schema& row = *ctx_.row_schema;
    const std::string table = quote_pg_table_name(table_.table_name);
    const bool one_key = ctx_.key_columns.size() == 1;
    std::string sql = "SELECT ";
    for (std::size_t c = 0; c < row.size(); ++c)
      sql += (c ? ", " : "") + std::string(one_key ? "" : "t.") + quote_pg_column_name(row.name(c));
    sql += " FROM " + table;
    if (one_key) return sql + " WHERE " + quote_pg_column_name(row.name(ctx_.key_columns[0])) + " = ANY($1)";
    std::string arrays, names, on;
    for (std::size_t k = 0; k < ctx_.key_columns.size(); ++k) {
      const std::string col = quote_pg_column_name(row.name(ctx_.key_columns[k]));
      arrays += (k ? ", " : "") + fmt::format("${}::{}[]", k + 1, pg_type_name(row.type(ctx_.key_columns[k])));
      names += (k ? ", " : "") + fmt::format("k{}", k);
      on += (k ? " AND " : "") + fmt::format("t.{} = k.k{}", col, k);
    }
    return sql + " AS t JOIN unnest(" + arrays + ") AS k(" + names + ") ON " + on;
  }

  LookupSourceContext ctx_;
  JdbcTableOptions table_;
  std::string sql_;
  std::unique_ptr<PgConnection> conn_;
  std::vector<std::string> params_;
  std::vector<const char*> values_;
  std::string scratch_;
  std::mutex cancel_mu_;
  PGcancel* cancel_ = nullptr;  // for the open connection
};

}  // namespace

std::unique_ptr<LookupSource> make_jdbc_lookup_source(const LookupSourceContext& ctx) {
  // The table's options read as the other jdbc factories read them (the same checks and
  // messages), through a connector-params view of them.
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [k, v] : ctx.options) params[k] = v;
  OperatorSpecContext spec{ctx.op_id, params, {}};
  SqlConnectorParams p(spec, "jdbc lookup of `" + ctx.table + "`", {});
  check_jdbc_options(p);
  JdbcTableOptions table = read_jdbc_table_options(p);
  for (auto k : ctx.key_columns)
    if (ctx.row_schema->type(k).is(TypeKind::kRow))
      throw ClinkError(ctx.where + ": table `" + ctx.table + "`: a ROW column cannot be a lookup key");
  return std::make_unique<JdbcLookupSource>(ctx, std::move(table));
}

}  // namespace clink::sql
