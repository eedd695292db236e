# Flink 2.3 (PyFlink mini-cluster, parallelism 1) on the sql-upsert case of `clink bench
# jdbc`: datagen -> GROUP BY id -> jdbc upsert table, checkpoints every second, the jdbc
# sink's defaults. Usage (in tests/flink's venv, a PostgreSQL on PG_PORT):
#   FLINK_JDBC_JARS=<dir with flink-connector-jdbc-core-4.0.0-2.0.jar,
#     flink-connector-jdbc-postgres-4.0.0-2.0.jar, postgresql-42.7.14.jar> python jdbc_bench.py ROWS
# The jars: mvn dependency:copy -Dartifact=org.apache.flink:flink-connector-jdbc-core:4.0.0-2.0
#   (likewise flink-connector-jdbc-postgres:4.0.0-2.0 and org.postgresql:postgresql:42.7.14).
# Prints wall time and rows/s, and rows/s per core of the mini-cluster JVM's CPU time.
import glob, os, subprocess, sys, time
from pyflink.table import EnvironmentSettings, TableEnvironment
from jvm_cpu import children_cpu_seconds
rows = int(sys.argv[1])
port = os.environ.get("PG_PORT", "15432")
subprocess.run(["psql", "-h", "127.0.0.1", "-p", port, "-U", "postgres", "-q", "-c",
                "DROP TABLE IF EXISTS bench_flink; CREATE UNLOGGED TABLE bench_flink (id bigint PRIMARY KEY, c bigint, s bigint)"],
               check=True)
t = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
c = t.get_config()
jars = sorted(glob.glob(os.path.join(os.environ["FLINK_JDBC_JARS"], "*.jar")))
c.set("pipeline.jars", ";".join("file://" + os.path.abspath(j) for j in jars))
c.set("parallelism.default", "1")
c.set("execution.checkpointing.interval", "1 s")
c.set("execution.checkpointing.dir", "file:///tmp/flink-jdbc-bench-checkpoints")  # the JobManager's memory holds only 5 MB
t.execute_sql(f"""CREATE TABLE nums (id BIGINT NOT NULL) WITH ('connector' = 'datagen', 'number-of-rows' = '{rows}',
  'rows-per-second' = '1000000000', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '{rows}')""")
t.execute_sql(f"""CREATE TABLE totals (id BIGINT, c BIGINT, s BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH (
  'connector' = 'jdbc', 'url' = 'jdbc:postgresql://127.0.0.1:{port}/postgres?user=postgres', 'table-name' = 'bench_flink')""")
cpu0 = children_cpu_seconds()
start = time.time()
t.execute_sql("INSERT INTO totals SELECT id, COUNT(*), SUM(id) FROM nums GROUP BY id").wait()
wall = time.time() - start
cpu = children_cpu_seconds() - cpu0
n = subprocess.run(["psql", "-h", "127.0.0.1", "-p", port, "-U", "postgres", "-tA", "-c", "SELECT count(*) FROM bench_flink"],
                   check=True, capture_output=True, text=True).stdout.strip()
print(f"flink sql-upsert: {n} rows in the table, wall {wall:.3f} s, {rows / wall:.0f} rows/s, cpu {cpu:.2f} s, "
      f"{rows / cpu:.0f} rows/s per core")
