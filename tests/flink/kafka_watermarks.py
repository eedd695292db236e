# Flink 2.3 on the events of tests/kafka/sql_kafka_watermark_test.cpp, for the expected
# windows there: per-partition watermarks of the Kafka source with a lagging partition, an
# idle partition (scan.watermark.idle-timeout), and a partition added while running.
# Usage (in tests/flink's venv, a broker from `scripts/kafka start`):
#   FLINK_KAFKA_JAR=<flink-sql-connector-kafka-5.0.0-2.2.jar> python kafka_watermarks.py lag|idle|idle-none|added
# Prints each result row with the seconds since the query started.
import glob, json, os, subprocess, sys, threading, time
from pyflink.table import EnvironmentSettings, TableEnvironment

case = sys.argv[1]
bootstrap = os.environ.get("CLINK_KAFKA_BOOTSTRAP", "127.0.0.1:19092")
jars = os.path.expanduser("~/.cache/clink/kafka/lib/*")
topic = f"flink-wm-{case}-{os.getpid()}"


def topics(*args):
    subprocess.run(["java", "-cp", jars, "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", bootstrap,
                    *args, "--topic", topic], check=True, capture_output=True)


def produce(events):  # [(id, ts, partition)]
    for i, ts, p in events:
        subprocess.run(["kcat", "-P", "-b", bootstrap, "-t", topic, "-p", str(p)],
                       input=json.dumps({"id": i, "ts": ts}) + "\n", text=True, check=True)


topics("--create", "--partitions", "1" if case == "added" else "2")
options = {"lag": ", 'scan.bounded.mode' = 'latest-offset'", "idle": ", 'scan.watermark.idle-timeout' = '200 ms'",
           "idle-none": "", "added": ", 'scan.topic-partition-discovery.interval' = '100 ms'"}[case]
if case == "lag":
    produce([(1, 1000, 0), (2, 12000, 0), (3, 25000, 0), (4, 2000, 1), (5, 9000, 1), (6, 14000, 1)])
elif case in ("idle", "idle-none"):
    produce([(1, 1000, 0), (2, 15000, 0)])
else:
    produce([(1, 1000, 0), (2, 12000, 0)])

t = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
c = t.get_config()
c.set("pipeline.jars", "file://" + os.path.abspath(os.environ["FLINK_KAFKA_JAR"]))
c.set("parallelism.default", "1")
c.set("table.local-time-zone", "UTC")
t.execute_sql(f"""CREATE TABLE src (id INT, ts BIGINT, rt AS TO_TIMESTAMP_LTZ(ts, 3), WATERMARK FOR rt AS rt) WITH (
  'connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json'{options})""")
result = t.execute_sql("SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(rt), "
                       "INTERVAL '10' SECOND)) GROUP BY window_start, window_end")
start = time.time()


def later():  # what the C++ test does while the job runs
    if case == "idle":
        time.sleep(6)  # the first window fires after the idle timeout (JVM start included)
        produce([(3, 5000, 1), (4, 16000, 1)])
        time.sleep(1.5)
        produce([(5, 31000, 0), (6, 32000, 1)])
    elif case == "added":
        time.sleep(6)
        topics("--alter", "--partitions", "2")
        time.sleep(1.5)
        produce([(3, 13000, 1), (4, 22000, 1), (5, 21000, 0)])
    time.sleep(8)
    if case != "lag":
        result.get_job_client().cancel()


threading.Thread(target=later, daemon=True).start()
try:
    with result.collect() as rows:
        for row in rows:
            print(f"{time.time() - start:6.1f} s  {row.get_row_kind()}[{row[0]}, {row[1]}]", flush=True)
except Exception as e:  # the cancel ends the iteration
    print(f"{time.time() - start:6.1f} s  ended: {type(e).__name__}", flush=True)
topics("--delete")
