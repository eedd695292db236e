// The jdbc connector's options (include/clink/connectors/jdbc/jdbc_options.hpp).
#include "clink/connectors/jdbc/jdbc_options.hpp"

#include "clink/core/duration.hpp"
#include "clink/core/error.hpp"

namespace clink::sql {

const std::vector<std::string>& jdbc_option_keys() {
  static const std::vector<std::string> keys = {
      "url", "table-name", "driver", "username", "password", "compatible-mode", "connection.max-retry-timeout",
      // the source (bounded scan)
      "scan.partition.column", "scan.partition.num", "scan.partition.lower-bound", "scan.partition.upper-bound",
      "scan.fetch-size", "scan.auto-commit", "filter.handling.policy",
      // lookups
      "lookup.cache", "lookup.partial-cache.max-rows", "lookup.partial-cache.expire-after-write",
      "lookup.partial-cache.expire-after-access", "lookup.partial-cache.cache-missing-key", "lookup.max-retries",
      "lookup.cache.max-rows", "lookup.cache.ttl", "lookup.cache.caching-missing-key",
      // the sink
      "sink.buffer-flush.max-rows", "sink.buffer-flush.interval", "sink.max-retries", "sink.parallelism"};
  return keys;
}

void check_jdbc_options(const SqlConnectorParams& p) {
  p.check_options(jdbc_option_keys(), [](const std::string&) { return false; });
}

JdbcTableOptions read_jdbc_table_options(const SqlConnectorParams& p) {
  JdbcTableOptions o;
  auto url = p.option("url");
  if (!url) p.fail("missing required option 'url' (jdbc:postgresql://host:port/database)");
  if (!is_postgres_jdbc_url(*url))
    p.fail("option 'url' = '" + *url + "': only PostgreSQL is supported (jdbc:postgresql://host:port/database)");
  try {
    parse_postgres_jdbc_url(*url);
  } catch (const ClinkError& e) {
    p.fail(std::string("option 'url': ") + e.what());
  }
  o.connection.url = *url;
  auto table = p.option("table-name");
  if (!table || table->empty()) p.fail("missing required option 'table-name'");
  o.table_name = *table;
  try {
    quote_pg_table_name(*table);
  } catch (const ClinkError& e) {
    p.fail(std::string("option 'table-name': ") + e.what());
  }
  auto user = p.option("username"), password = p.option("password");
  if (user.has_value() != password.has_value())
    p.fail("Either all or none of the following options should be provided: 'username', 'password'");
  o.connection.username = user;
  o.connection.password = password;
  if (auto driver = p.option("driver"); driver && *driver != "org.postgresql.Driver")
    p.fail("option 'driver' = '" + *driver + "': the PostgreSQL URL needs the driver org.postgresql.Driver");
  if (auto mode = p.option("compatible-mode"); mode && !mode->empty() && *mode != "postgresql")
    p.fail("option 'compatible-mode' = '" + *mode + "' is not supported (only PostgreSQL)");
  if (auto timeout = p.option("connection.max-retry-timeout")) {
    auto ms = parse_duration_ms(*timeout);
    if (!ms || *ms < 1000 || *ms % 1000 != 0)
      p.fail("The value of 'connection.max-retry-timeout' option must be in second granularity and shouldn't be "
             "smaller than 1 second, but is " + *timeout + ".");
    o.connection.connect_timeout_s = static_cast<int>(*ms / 1000);
  }
  return o;
}

}  // namespace clink::sql
