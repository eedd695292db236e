// PgConnection against the real test server: JDBC URLs, statements, prepared statements,
// COPY, errors that name the statement, and a terminated backend seen as a lost connection.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pg_test_env.hpp"

namespace clink::test {
namespace {

using namespace clink::sql;

TEST(PgUrlTest, ParsesJdbcUrls) {
  PgUrl u = parse_postgres_jdbc_url("jdbc:postgresql://db.example:6543/shop?user=alice&password=p%40ss&sslmode=disable");
  EXPECT_EQ(u.host, "db.example");
  EXPECT_EQ(u.port, 6543);
  EXPECT_EQ(u.database, "shop");
  EXPECT_EQ(u.param("user"), "alice");
  EXPECT_EQ(u.param("password"), "p@ss");
  EXPECT_EQ(u.param("sslmode"), "disable");
  EXPECT_FALSE(u.param("nope"));

  PgUrl d = parse_postgres_jdbc_url("jdbc:postgresql://localhost/");
  EXPECT_EQ(d.port, 5432);
  EXPECT_EQ(d.database, "");
  PgUrl v6 = parse_postgres_jdbc_url("jdbc:postgresql://[::1]:7000/x");
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.port, 7000);

  EXPECT_TRUE(is_postgres_jdbc_url("jdbc:postgresql://h/db"));
  EXPECT_FALSE(is_postgres_jdbc_url("jdbc:mysql://h/db"));
  try {
    parse_postgres_jdbc_url("jdbc:mysql://h:3306/db");
    FAIL() << "no error";
  } catch (const ClinkError& e) {
    EXPECT_NE(std::string(e.what()).find("'jdbc:mysql://h:3306/db' is not a PostgreSQL URL"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(parse_postgres_jdbc_url("jdbc:postgresql://h:99999/db"), ClinkError);
}

TEST(PgUrlTest, ConninfoTakesTheOptionsOverTheUrl) {
  PgConnectOptions o{.url = "jdbc:postgresql://127.0.0.1:1/db?user=u1&password=x'y", .username = "u2"};
  std::string info = pg_conninfo(o);
  EXPECT_NE(info.find("host='127.0.0.1' port='1' dbname='db' user='u2' password='x\\'y'"), std::string::npos) << info;
  EXPECT_NE(info.find("TimeZone=UTC"), std::string::npos) << info;
  EXPECT_EQ(pg_describe(o), "u2@127.0.0.1:1/db");
}

TEST(PgQuotingTest, FoldsAndQuotesNames) {
  EXPECT_EQ(quote_pg_identifier("a\"b"), "\"a\"\"b\"");
  EXPECT_EQ(quote_pg_literal("it's"), "'it''s'");
  EXPECT_EQ(quote_pg_column_name("userId"), "\"userid\"");
  EXPECT_EQ(quote_pg_table_name("Orders"), "\"orders\"");
  EXPECT_EQ(quote_pg_table_name("public.Orders"), "\"public\".\"orders\"");
  EXPECT_EQ(quote_pg_table_name("\"My.Schema\".t"), "\"My.Schema\".\"t\"");
  EXPECT_THROW(quote_pg_table_name("a..b"), ClinkError);
  EXPECT_THROW(quote_pg_table_name("\"open"), ClinkError);
}

TEST(PgConnectionTest, RunsStatementsAndPreparedStatements) {
  PgConnection c = pg_connect();
  EXPECT_TRUE(c.ok());
  EXPECT_GE(c.server_version(), 100000);
  const std::string t = unique_pg_table("conn");
  c.exec("CREATE TABLE " + t + " (id int PRIMARY KEY, name text)");
  c.prepare("ins", "INSERT INTO " + t + " VALUES ($1, $2)", 2);
  const char* v1[] = {"1", "one"};
  const char* v2[] = {"2", nullptr};
  EXPECT_EQ(c.exec_prepared("ins", 2, v1).affected_rows(), 1);
  EXPECT_EQ(c.exec_prepared("ins", 2, v2).affected_rows(), 1);
  EXPECT_EQ(c.exec_params("UPDATE " + t + " SET name = $1 WHERE id = $2", {std::string("uno"), std::string("1")})
                .affected_rows(),
            1);
  PgResult r = c.exec("SELECT id, name FROM " + t + " ORDER BY id");
  ASSERT_EQ(r.rows(), 2);
  EXPECT_EQ(r.columns(), 2);
  EXPECT_EQ(r.column_name(1), "name");
  EXPECT_EQ(r.column_index("name"), 1);
  EXPECT_EQ(r.column_index("nope"), -1);
  EXPECT_EQ(r.value(0, 1), "uno");
  EXPECT_TRUE(r.is_null(1, 1));
  EXPECT_EQ(pg_query_rows("SELECT * FROM " + t), (std::vector<std::string>{"1|uno", "2|NULL"}));
}

TEST(PgConnectionTest, CopiesRowsIn) {
  PgConnection c = pg_connect();
  const std::string t = unique_pg_table("copy");
  c.exec("CREATE TABLE " + t + " (id int, name text)");
  c.copy_in_begin("COPY " + t + " (id, name) FROM STDIN");
  c.copy_in_put("1\ta\\tb\n2\t");
  c.copy_in_put("\\N\n");
  EXPECT_EQ(c.copy_in_end(), 2);
  EXPECT_EQ(pg_query_rows("SELECT id, name FROM " + t), (std::vector<std::string>{"1|a\tb", "2|NULL"}));
  // A bad row fails the whole COPY, naming it; the connection stays usable.
  try {
    c.copy_in("COPY " + t + " (id, name) FROM STDIN", "3\tx\nnot-a-number\ty\n");
    FAIL() << "no error";
  } catch (const PgError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("COPY " + t), std::string::npos) << m;
    EXPECT_NE(m.find("invalid input syntax for type integer"), std::string::npos) << m;
    EXPECT_EQ(e.sqlstate(), "22P02");
    EXPECT_FALSE(e.connection_lost());
  }
  EXPECT_EQ(pg_query_value("SELECT count(*) FROM " + t), "2");
  EXPECT_TRUE(c.ok());
}

TEST(PgConnectionTest, ErrorsNameTheStatementAndTheServer) {
  PgConnection c = pg_connect();
  try {
    c.exec("SELECT nope FROM pg_class");
    FAIL() << "no error";
  } catch (const PgError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("SELECT nope FROM pg_class"), std::string::npos) << m;
    EXPECT_NE(m.find("column \"nope\" does not exist"), std::string::npos) << m;
    EXPECT_NE(m.find("SQLSTATE 42703"), std::string::npos) << m;
    EXPECT_NE(m.find("postgres@127.0.0.1:" + std::to_string(postgres_port()) + "/postgres"), std::string::npos) << m;
    EXPECT_FALSE(e.connection_lost());
  }
  EXPECT_TRUE(c.ok());
}

TEST(PgConnectionTest, AFailedConnectNamesTheServer) {
  try {
    PgConnection c(PgConnectOptions{.url = "jdbc:postgresql://127.0.0.1:1/postgres", .username = "postgres"});
    FAIL() << "connected to port 1";
  } catch (const PgError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("cannot connect to PostgreSQL postgres@127.0.0.1:1/postgres"), std::string::npos) << m;
    EXPECT_TRUE(e.connection_lost());
  }
  try {
    PgConnection c(PgConnectOptions{.url = postgres_url(), .username = "no_such_role"});
    FAIL() << "connected as an unknown role";
  } catch (const PgError& e) {
    EXPECT_NE(std::string(e.what()).find("role \"no_such_role\" does not exist"), std::string::npos) << e.what();
  }
}

TEST(PgConnectionTest, ATerminatedBackendIsALostConnectionAndReconnects) {
  PgConnection c = pg_connect();
  int pid = c.backend_pid();
  pg_exec("SELECT pg_terminate_backend(" + std::to_string(pid) + ")");
  try {
    c.exec("SELECT 1");
    FAIL() << "the terminated connection still answered";
  } catch (const PgError& e) {
    EXPECT_TRUE(e.connection_lost()) << e.what();
  }
  EXPECT_FALSE(c.ok());
  c.reconnect();
  EXPECT_TRUE(c.ok());
  EXPECT_NE(c.backend_pid(), pid);
  EXPECT_EQ(c.exec("SELECT 41 + 1").value(0, 0), "42");
}

}  // namespace
}  // namespace clink::test
