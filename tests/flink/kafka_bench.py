# Flink 2.3 (PyFlink mini-cluster, parallelism 1) on the same topic and cases as
# `clink bench kafka`, for the ratio in docs/kafka.md. Usage (in tests/flink's venv):
#   FLINK_KAFKA_JAR=<flink-sql-connector-kafka-5.0.0-2.2.jar> python kafka_bench.py source|e2e TOPIC OUT_TOPIC RECORDS
# The jar: mvn dependency:copy -Dartifact=org.apache.flink:flink-sql-connector-kafka:5.0.0-2.2 -DoutputDirectory=DIR
# Prints wall time and records/s per core of the mini-cluster JVM's CPU time during the job.
import os, sys, time
from pyflink.table import EnvironmentSettings, TableEnvironment
from jvm_cpu import children_cpu_seconds
case, topic, out = sys.argv[1], sys.argv[2], sys.argv[3]
bootstrap = os.environ.get("CLINK_KAFKA_BOOTSTRAP", "127.0.0.1:19092")
t = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
c = t.get_config()
c.set("pipeline.jars", "file://" + os.path.abspath(os.environ["FLINK_KAFKA_JAR"]))
c.set("parallelism.default", "1")
c.set("execution.checkpointing.interval", "1 s")
cols = "auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, `dateTime` TIMESTAMP(3), extra STRING"
t.execute_sql(f"""CREATE TABLE bids ({cols}) WITH ('connector' = 'kafka', 'topic' = '{topic}',
  'properties.bootstrap.servers' = '{bootstrap}', 'properties.group.id' = 'flink-bench',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json')""")
if case == "source":
    t.execute_sql(f"CREATE TABLE sink ({cols}) WITH ('connector' = 'blackhole')")
    q = "INSERT INTO sink SELECT * FROM bids"
else:
    t.execute_sql(f"""CREATE TABLE sink ({cols}) WITH ('connector' = 'kafka', 'topic' = '{out}',
      'properties.bootstrap.servers' = '{bootstrap}', 'format' = 'json',
      'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = '{out}',
      'properties.transaction.timeout.ms' = '600000')""")
    q = "INSERT INTO sink SELECT auction, bidder, price * 100, channel, url, `dateTime`, extra FROM bids WHERE auction % 10 <> 7"
cpu0 = children_cpu_seconds()
start = time.time()
t.execute_sql(q).wait()
wall = time.time() - start
cpu = children_cpu_seconds() - cpu0
n = float(sys.argv[4])
print(f"flink {case}: wall {wall:.3f} s, {n / wall:.0f} records/s, cpu {cpu:.2f} s, {n / cpu:.0f} records/s per core")
