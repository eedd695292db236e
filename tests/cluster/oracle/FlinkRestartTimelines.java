// Random failure timelines through Apache Flink's own restart strategies (flink-dist's
// classes, jitter 0): writes tests/cluster/data/flink_restart_timelines.txt, which
// test_cluster_config replays through RestartTracker and compares decision by decision.
// Not built by CMake; regenerate by hand:
//   J=$(ls ~/.cache/clink/flink-venv/lib/python3.11/site-packages/pyflink/lib/flink-dist-*.jar)
//   java -cp "$J" tests/cluster/oracle/FlinkRestartTimelines.java > tests/cluster/data/flink_restart_timelines.txt
// A line: "<strategy> | <failure times, ms> | <decisions>", a strategy being
// "fixed <attempts> <delay>", "rate <max failures> <interval> <delay>" or
// "expo <initial> <max> <multiplier> <reset threshold> <attempts>"; a decision is the
// delay in ms or FAIL, with "m" appended when the failure merged into a pending restart.
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.flink.util.clock.Clock;
import org.apache.flink.util.clock.ManualClock;

public class FlinkRestartTimelines {
  static final String PKG = "org.apache.flink.runtime.executiongraph.failover.";

  static Object make(String cls, Class<?>[] types, Object... args) throws Exception {
    Constructor<?> c = Class.forName(PKG + cls).getDeclaredConstructor(types);
    c.setAccessible(true);
    return c.newInstance(args);
  }

  public static void main(String[] args) throws Exception {
    Class<?> iface = Class.forName(PKG + "RestartBackoffTimeStrategy");
    Method notify = iface.getMethod("notifyFailure", Throwable.class);
    Method can = iface.getMethod("canRestart");
    Method backoff = iface.getMethod("getBackoffTime");
    Random random = new Random(7);
    double[] multipliers = {1.1, 1.4, 1.5, 1.7, 2.0, 3.0};
    int[] expoAttempts = {1, 2, 3, 5, Integer.MAX_VALUE};
    for (int i = 0; i < 400; i++) {
      ManualClock clock = new ManualClock();
      String spec;
      Object strategy;
      switch (i % 3) {
        case 0: {
          int attempts = random.nextInt(7);
          long delay = random.nextInt(3001);
          spec = "fixed " + attempts + " " + delay;
          strategy = make("FixedDelayRestartBackoffTimeStrategy", new Class<?>[] {int.class, long.class}, attempts,
              delay);
          break;
        }
        case 1: {
          int max = 1 + random.nextInt(5);
          long interval = 1 + random.nextInt(60000);
          long delay = random.nextInt(3001);
          spec = "rate " + max + " " + interval + " " + delay;
          strategy = make("FailureRateRestartBackoffTimeStrategy",
              new Class<?>[] {Clock.class, int.class, long.class, long.class}, clock, max, interval, delay);
          break;
        }
        default: {
          long initial = 1 + random.nextInt(3000);
          long max = initial + random.nextInt(60001);
          double multiplier = multipliers[random.nextInt(multipliers.length)];
          long reset = 1 + random.nextInt(100000);
          int attempts = expoAttempts[random.nextInt(expoAttempts.length)];
          spec = "expo " + initial + " " + max + " " + multiplier + " " + reset + " " + attempts;
          strategy = make("ExponentialDelayRestartBackoffTimeStrategy",
              new Class<?>[] {Clock.class, long.class, long.class, double.class, long.class, double.class, int.class},
              clock, initial, max, multiplier, reset, 0.0, attempts);
        }
      }
      StringBuilder times = new StringBuilder();
      StringBuilder decisions = new StringBuilder();
      long t = 0;
      int failures = 1 + random.nextInt(20);
      for (int f = 0; f < failures; f++) {
        int[] steps = {0, 1, random.nextInt(2001), random.nextInt(20001), random.nextInt(200001)};
        t += steps[random.nextInt(steps.length)];
        clock.advanceTime(t - clock.absoluteTimeMillis(), TimeUnit.MILLISECONDS);
        Object isNew = notify.invoke(strategy, new Exception("failure"));
        boolean restart = (Boolean) can.invoke(strategy);
        times.append(f == 0 ? "" : " ").append(t);
        decisions.append(f == 0 ? "" : " ").append(restart ? backoff.invoke(strategy).toString() : "FAIL")
            .append(Boolean.FALSE.equals(isNew) ? "m" : "");
      }
      System.out.println(spec + " | " + times + " | " + decisions);
    }
  }
}
