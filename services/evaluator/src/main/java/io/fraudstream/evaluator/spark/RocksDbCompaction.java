package io.fraudstream.evaluator.spark;

import java.lang.reflect.Field;
import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.streaming.StatefulProcessorHandle;
import org.rocksdb.MutableColumnFamilyOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When RocksDB compacts level 0 in a task's state store: the one compaction setting the detector changes, which
 * Spark does not offer (it builds the store's options itself).
 *
 * <p>Why: the group keys spread each flush of the write buffer over the whole key range, so each compaction of level
 * 0 rewrites about all of the level below it, however little it brings. RocksDB starts one at 4 level-0 files, which
 * with the detector's 2-MiB write buffers is every 8 MiB of new rows; at 16 files it is every 32 MiB, for the same
 * small flush inside a snapshot's commit. At 2 500 tx/s RocksDB's compaction thread then used 0.077 cores instead of
 * 0.225 (docs/BENCHMARKS.md, "When level 0 is compacted"). The write slowdown and stop triggers rise with it (3 and 4
 * times the trigger, at least RocksDB's 20 and 36) so that the larger level 0 does not slow writes.
 *
 * <p>Spark configuration {@value #TRIGGER_CONF} gives the trigger (a task reads it from its local properties, where
 * Spark puts the query's SQL configuration, or else from the Spark configuration); unset, nothing is changed. It is
 * set on the live
 * database of each task's store (Spark reopens a database only to load another checkpoint, and each task sets it
 * again then), found through Spark's internals: the handle's store, its provider's RocksDB, its database. A Spark
 * whose internals differ, or a store that is not RocksDB, keeps RocksDB's defaults, and a warning says so once per
 * JVM.
 */
final class RocksDbCompaction {
  static final String TRIGGER_CONF = "spark.fraudstream.stateStore.rocksdb.level0FileNumCompactionTrigger";
  private static final Logger LOG = LoggerFactory.getLogger(RocksDbCompaction.class);
  // The databases already set, by identity (RocksDB objects do not override equals); a reopened one is new.
  private static final Map<RocksDB, Boolean> SET = Collections.synchronizedMap(new WeakHashMap<>());
  private static volatile boolean warned;
  private static volatile boolean reported;

  private RocksDbCompaction() {}

  /** The trigger configured for the current task; null if none (or no task). */
  static Integer configuredTrigger() {
    TaskContext task = TaskContext.get();
    if (task == null) {
      return null;
    }
    String value = task.getLocalProperty(TRIGGER_CONF);
    if (value == null) {
      SparkEnv env = SparkEnv.get();
      SparkConf conf = env == null ? null : env.conf();
      value = conf == null ? null : conf.get(TRIGGER_CONF, null);
    }
    if (value == null) {
      return null;
    }
    int trigger = Integer.parseInt(value.trim());
    if (trigger < 1) {
      throw new IllegalArgumentException(TRIGGER_CONF + " must be at least 1, not " + trigger);
    }
    return trigger;
  }

  /** The options set for {@code trigger}: the trigger, and the slowdown and stop triggers above it. */
  static MutableColumnFamilyOptions options(int trigger) {
    return MutableColumnFamilyOptions.builder()
        .setLevel0FileNumCompactionTrigger(trigger)
        .setLevel0SlowdownWritesTrigger(Math.max(20, 3 * trigger))
        .setLevel0StopWritesTrigger(Math.max(36, 4 * trigger))
        .build();
  }

  /**
   * Sets the configured trigger ({@link #configuredTrigger}) on the database of the task's state store. Outside a task
   * (Spark initializes processors on the driver too, for their schemas) it does nothing.
   */
  static void apply(StatefulProcessorHandle handle) {
    Integer trigger = configuredTrigger();
    if (trigger == null) {
      return;
    }
    RocksDB db = databaseOf(handle);
    if (db == null || SET.containsKey(db)) {
      return;
    }
    try {
      db.setOptions(options(trigger));
      SET.put(db, Boolean.TRUE);
      if (!reported) {
        reported = true;
        LOG.info("RocksDB compacts level 0 of the state stores at {} files ({})", trigger, TRIGGER_CONF);
      }
    } catch (RocksDBException exc) {
      warn("cannot set the level-0 compaction trigger: " + exc);
    }
  }

  /** The open database behind a task's state store; null (with a warning) if it cannot be found. */
  static RocksDB databaseOf(StatefulProcessorHandle handle) {
    try {
      Object store = field(handle, "store");
      Object provider = field(store, "$outer"); // the store is an inner class of its provider
      Object rocksDb = provider.getClass().getMethod("rocksDB").invoke(provider);
      if (field(rocksDb, "db") instanceof RocksDB db) {
        return db;
      }
      warn("the state store's database is not open");
    } catch (ReflectiveOperationException | RuntimeException exc) {
      warn("no RocksDB behind the state store of " + handle.getClass().getName() + ": " + exc);
    }
    return null;
  }

  private static Object field(Object owner, String name) throws ReflectiveOperationException {
    for (Class<?> type = owner.getClass(); type != null; type = type.getSuperclass()) {
      try {
        Field field = type.getDeclaredField(name);
        field.setAccessible(true);
        return field.get(owner);
      } catch (NoSuchFieldException exc) {
        // a superclass may declare it
      }
    }
    throw new NoSuchFieldException(owner.getClass().getName() + "." + name);
  }

  private static void warn(String message) {
    if (!warned) {
      warned = true;
      LOG.warn("{}; RocksDB keeps its level-0 compaction defaults ({})", message, TRIGGER_CONF);
    }
  }
}
