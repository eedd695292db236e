// Runs Apache Flink's own restart strategies (the classes in flink-dist) over failure
// timelines and prints each decision: the oracle for test_cluster_config's restart
// tests. Not built by CMake; run by hand against the Flink 2.3 of the test venv:
//   J=$(ls ~/.cache/clink/flink-venv/lib/python3.11/site-packages/pyflink/lib/flink-dist-*.jar)
//   java -cp "$J" tests/cluster/oracle/FlinkRestartOracle.java
// Each line: the strategy, then per failure "t=<ms>:<delay ms or FAIL>[ merged]".
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.util.concurrent.TimeUnit;
import org.apache.flink.util.clock.Clock;
import org.apache.flink.util.clock.ManualClock;

public class FlinkRestartOracle {
  static final String PKG = "org.apache.flink.runtime.executiongraph.failover.";

  static Object make(String cls, Class<?>[] types, Object... args) throws Exception {
    Constructor<?> c = Class.forName(PKG + cls).getDeclaredConstructor(types);
    c.setAccessible(true);
    return c.newInstance(args);
  }

  static void run(String name, Object strategy, ManualClock clock, long... times) throws Exception {
    Class<?> iface = Class.forName(PKG + "RestartBackoffTimeStrategy");
    Method notify = iface.getMethod("notifyFailure", Throwable.class);
    Method can = iface.getMethod("canRestart");
    Method backoff = iface.getMethod("getBackoffTime");
    StringBuilder out = new StringBuilder(name);
    for (long t : times) {
      long now = clock.absoluteTimeMillis();
      clock.advanceTime(t - now, TimeUnit.MILLISECONDS);
      Object isNew = notify.invoke(strategy, new Exception("failure"));
      boolean ok = (Boolean) can.invoke(strategy);
      out.append(" t=").append(t).append(':').append(ok ? String.valueOf(backoff.invoke(strategy)) : "FAIL");
      if (Boolean.FALSE.equals(isNew)) out.append(" merged");
    }
    System.out.println(out);
    System.out.println("  " + strategy);
  }

  static Object fixed(int attempts, long delay) throws Exception {
    return make("FixedDelayRestartBackoffTimeStrategy", new Class<?>[] {int.class, long.class}, attempts, delay);
  }

  static Object expo(ManualClock clock, long initial, long max, double mult, long reset, double jitter, int attempts)
      throws Exception {
    return make("ExponentialDelayRestartBackoffTimeStrategy",
        new Class<?>[] {Clock.class, long.class, long.class, double.class, long.class, double.class, int.class},
        clock, initial, max, mult, reset, jitter, attempts);
  }

  static Object rate(ManualClock clock, int max, long interval, long delay) throws Exception {
    return make("FailureRateRestartBackoffTimeStrategy",
        new Class<?>[] {Clock.class, int.class, long.class, long.class}, clock, max, interval, delay);
  }

  public static void main(String[] args) throws Exception {
    ManualClock c;
    run("fixed(3,250)", fixed(3, 250), new ManualClock(), 0, 1000, 2000, 3000);
    run("fixed(0,250)", fixed(0, 250), new ManualClock(), 0);
    c = new ManualClock();
    run("expo(1000,10000,2,60000,0,inf)", expo(c, 1000, 10000, 2.0, 60000, 0, Integer.MAX_VALUE), c,
        0, 1500, 4000, 8500, 17000, 26000, 27000, 86999, 147000, 207000);
    c = new ManualClock();
    run("expo(1000,10000,2,60000,0,2)", expo(c, 1000, 10000, 2.0, 60000, 0, 2), c, 0, 1500, 1600, 5000);
    c = new ManualClock();
    run("expo(1000,10000,2,60000,0,2)reset", expo(c, 1000, 10000, 2.0, 60000, 0, 2), c, 0, 1500, 63500, 64000);
    c = new ManualClock();
    run("expo(10000,120000,1.4,600000,0,inf)", expo(c, 10000, 120000, 1.4, 600000, 0, Integer.MAX_VALUE), c,
        0, 20000, 40000, 80000, 120000, 200000, 300000, 400000, 600000, 800000);
    c = new ManualClock();
    run("expo-defaults(1000,60000,1.5,3600000,0,inf)", expo(c, 1000, 60000, 1.5, 3600000, 0, Integer.MAX_VALUE),
        c, 100000, 101001, 102502, 104753);
    c = new ManualClock();
    run("rate(3,10000,500)", rate(c, 3, 10000, 500), c, 0, 1000, 2000, 3000);
    c = new ManualClock();
    run("rate(3,10000,500)spread", rate(c, 3, 10000, 500), c, 0, 1000, 2000, 10001, 10002);
    c = new ManualClock();
    run("rate(3,10000,500)edge", rate(c, 3, 10000, 500), c, 0, 1, 2, 10000);
    c = new ManualClock();
    run("rate(1,60000,1000)", rate(c, 1, 60000, 1000), c, 0, 60001, 120001, 180000);
  }
}
