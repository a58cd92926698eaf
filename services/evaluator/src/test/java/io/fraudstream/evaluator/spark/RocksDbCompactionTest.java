package io.fraudstream.evaluator.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.api.java.function.MapFunction;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.streaming.ExpiredTimerInfo;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.StatefulProcessor;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.apache.spark.sql.streaming.TimeMode;
import org.apache.spark.sql.streaming.TimerValues;
import org.apache.spark.sql.streaming.Trigger;
import org.apache.spark.sql.streaming.ValueState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.MutableColumnFamilyOptions;
import org.rocksdb.RocksDB;
import scala.collection.Iterator;
import scala.jdk.javaapi.CollectionConverters;

/** The level-0 compaction trigger: what it sets, and that it reaches the live database of a real Spark store. */
class RocksDbCompactionTest {
  @Test
  void theSlowdownAndStopTriggersRiseWithTheTrigger() {
    MutableColumnFamilyOptions options = RocksDbCompaction.options(16);
    String text = options.toString();
    assertTrue(text.contains("level0_file_num_compaction_trigger=16"), text);
    assertTrue(text.contains("level0_slowdown_writes_trigger=48"), text);
    assertTrue(text.contains("level0_stop_writes_trigger=64"), text);
    String low = RocksDbCompaction.options(2).toString();
    assertTrue(low.contains("level0_slowdown_writes_trigger=20") && low.contains("level0_stop_writes_trigger=36"), low);
  }

  @Test
  void onlyAPositiveIntegerIsATrigger() {
    assertEquals(16, RocksDbCompaction.parseTrigger("16"));
    assertEquals(8, RocksDbCompaction.parseTrigger(" 8 "));
    for (String bad : List.of("0", "-4", "", "sixteen", "1.5", "99999999999")) {
      assertNull(RocksDbCompaction.parseTrigger(bad), "'" + bad + "' keeps RocksDB's defaults");
    }
  }

  @Test
  void anInMemoryStoreHasNoDatabaseAndNoTaskNoSetting() {
    PROBED.remove("tester");
    Tester<String> tester = new Tester<>(new Probe("tester"), TimeMode.None());
    tester.tws.test("k", CollectionConverters.asScala(List.<org.apache.spark.sql.Row>of()).toList());
    assertEquals(List.of(NO_DATABASE), PROBED.get("tester"), "TwsTester's store is not RocksDB");
    assertNull(RocksDbCompaction.configuredTrigger(), "no task, no setting");
  }

  private static final int NO_DATABASE = -1;
  // What each probe's store had after RocksDbCompaction.apply, by probe name: the level-0 compaction, slowdown and
  // stop triggers, or NO_DATABASE if no database was found.
  private static final Map<String, List<Integer>> PROBED = new ConcurrentHashMap<>();

  /** Applies the setting as BucketProcessor does, then reads the live database's trigger back under its name. */
  static final class Probe extends StatefulProcessor<String, org.apache.spark.sql.Row, org.apache.spark.sql.Row> {
    private final String name;
    private transient ValueState<Long> seen;

    Probe(String name) {
      this.name = name;
    }

    @Override
    public void init(OutputMode outputMode, TimeMode timeMode) {
      seen = getHandle().getValueState("seen", Encoders.LONG(), org.apache.spark.sql.streaming.TTLConfig.NONE());
      RocksDbCompaction.apply(getHandle()); // on the driver too, where Spark initializes it for its schema
      if (org.apache.spark.TaskContext.get() == null && !name.equals("tester")) {
        return; // the driver's: no store to read back
      }
      RocksDB db = RocksDbCompaction.databaseOf(getHandle());
      try {
        if (db == null) {
          PROBED.put(name, List.of(NO_DATABASE));
        } else {
          var options = db.getOptions();
          PROBED.put(
              name,
              List.of(
                  options.level0FileNumCompactionTrigger(),
                  options.level0SlowdownWritesTrigger(),
                  options.level0StopWritesTrigger()));
        }
      } catch (org.rocksdb.RocksDBException exc) {
        throw new IllegalStateException(exc);
      }
    }

    @Override
    public Iterator<org.apache.spark.sql.Row> handleInputRows(
        String key, Iterator<org.apache.spark.sql.Row> rows, TimerValues timerValues) {
      long count = 0;
      while (rows.hasNext()) {
        rows.next();
        count++;
      }
      seen.update(count);
      return CollectionConverters.asScala(List.<org.apache.spark.sql.Row>of().iterator());
    }

    @Override
    public Iterator<org.apache.spark.sql.Row> handleExpiredTimer(
        String key, TimerValues timerValues, ExpiredTimerInfo expiredTimerInfo) {
      return CollectionConverters.asScala(List.<org.apache.spark.sql.Row>of().iterator());
    }
  }

  @Test
  void theTriggerReachesTheLiveDatabaseOfASparkStateStore(@TempDir Path dir) throws Exception {
    Path input = Files.createDirectories(dir.resolve("input"));
    Files.writeString(input.resolve("part-0.txt"), "a\nb\na\n");
    SparkSession spark =
        SparkSession.builder()
            .master("local[1]")
            .appName("rocksdb-compaction-test")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "1")
            .config(
                "spark.sql.streaming.stateStore.providerClass",
                "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider")
            .getOrCreate();
    PROBED.remove("spark");
    try {
      // In the session's SQL configuration, where spark-defaults.conf and the detector's settings end up.
      spark.conf().set(RocksDbCompaction.TRIGGER_CONF, "16");
      StreamingQuery query =
          spark
              .readStream()
              .text(input.toString())
              .groupByKey((MapFunction<org.apache.spark.sql.Row, String>) row -> row.getString(0), Encoders.STRING())
              .transformWithState(
                  new Probe("spark"),
                  TimeMode.None(),
                  OutputMode.Update(),
                  Encoders.row(new org.apache.spark.sql.types.StructType().add("v", "string")))
              .writeStream()
              .format("noop")
              .option("checkpointLocation", dir.resolve("checkpoint").toString())
              .outputMode(OutputMode.Update())
              .trigger(Trigger.AvailableNow())
              .start();
      query.awaitTermination();
      assertEquals(List.of(16, 48, 64), PROBED.get("spark"), "the live database's level-0 triggers");
    } finally {
      spark.stop();
    }
  }
}
