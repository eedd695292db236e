// Flink's JDBC driver (flink-sql-jdbc-driver-bundle) against a SQL gateway: connects to
// jdbc:flink://HOST:PORT and runs each statement argument in order, printing "OK <sql>"
// for a statement without rows and "ROW col=value ..." for each row of one with rows.
// Run as a single-file program: java -cp <driver bundle>:<flink-dist> JdbcProbe.java HOST:PORT SQL...
// (the bundle needs flink-dist for slf4j). Used by tests/cluster/test_gateway.cpp.
import java.sql.*;
public class JdbcProbe {
  public static void main(String[] a) throws Exception {
    Class.forName("org.apache.flink.table.jdbc.FlinkDriver");
    try (Connection c = DriverManager.getConnection("jdbc:flink://" + a[0]);
         Statement st = c.createStatement()) {
      for (int i = 1; i < a.length; i++) {
        String sql = a[i];
        boolean rs = st.execute(sql);
        if (!rs) { System.out.println("OK " + sql); continue; }
        try (ResultSet r = st.getResultSet()) {
          ResultSetMetaData md = r.getMetaData();
          while (r.next()) {
            StringBuilder sb = new StringBuilder("ROW");
            for (int k = 1; k <= md.getColumnCount(); k++) sb.append(' ').append(md.getColumnName(k)).append('=').append(r.getObject(k));
            System.out.println(sb);
          }
        }
      }
    }
  }
}
