// Prints how Flink 2.3 reads configuration values and which defaults and fallback keys
// its options have: the oracle for test_cluster_config's FlinkValues and ClusterConfig
// tests. Not built by CMake; run by hand:
//   J=$(ls ~/.cache/clink/flink-venv/lib/python3.11/site-packages/pyflink/lib/flink-dist-*.jar)
//   java -cp "$J" tests/cluster/oracle/FlinkConfigOracle.java [dir with a config.yaml]
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.FallbackKey;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.util.TimeUtils;

public class FlinkConfigOracle {
  public static void main(String[] args) throws Exception {
    for (String s : new String[] {"10 s", "10s", "1 min", "500 ms", "1500", "PT1M", "1m", "2 h", "1 d", "1 seconds",
        "10 S", " 3 s ", "PT1.5S", "pt1m", "P1DT1H", "10  s", "0", "1 MS", "100 ns", "2500 µs", "1 hours", "3 millis",
        "1 day", "1 mins", "1.5 s", "-1 s", "1min30s", "+10 s", "P2W", "ten seconds"}) {
      try {
        System.out.println("duration [" + s + "] = " + TimeUtils.parseDuration(s).toMillis() + " ms");
      } catch (Exception e) {
        System.out.println("duration [" + s + "] ! " + e.getMessage());
      }
    }
    for (String s : new String[] {"1024", "1 kb", "1k", "1KB", "64 mb", "1g", "2 gibibytes", "1 tb", "1b", "1 bytes",
        "1.5 g"}) {
      try {
        System.out.println("memory [" + s + "] = " + MemorySize.parse(s).getBytes());
      } catch (Exception e) {
        System.out.println("memory [" + s + "] ! " + e.getMessage());
      }
    }
    String[] classes = {"CheckpointingOptions", "StateBackendOptions", "RestOptions", "JobManagerOptions",
        "TaskManagerOptions", "HeartbeatManagerOptions", "HighAvailabilityOptions", "CoreOptions",
        "NettyShuffleEnvironmentOptions", "RestartStrategyOptions", "StateRecoveryOptions"};
    TreeSet<String> lines = new TreeSet<>();
    for (String name : classes) {
      for (Field f : Class.forName("org.apache.flink.configuration." + name).getFields()) {
        if (!ConfigOption.class.isAssignableFrom(f.getType())) continue;
        ConfigOption<?> o = (ConfigOption<?>) f.get(null);
        List<String> fallbacks = new ArrayList<>();
        for (FallbackKey k : o.fallbackKeys()) fallbacks.add(k.getKey());
        lines.add("option " + o.key() + " default=" + (o.hasDefaultValue() ? o.defaultValue() : "none")
            + " fallbacks=" + fallbacks);
      }
    }
    lines.forEach(System.out::println);
    if (args.length > 0) {
      Configuration c = GlobalConfiguration.loadConfiguration(args[0]);
      for (String k : new TreeSet<>(c.keySet())) System.out.println("config " + k + " = " + c.toMap().get(k));
    }
  }
}
