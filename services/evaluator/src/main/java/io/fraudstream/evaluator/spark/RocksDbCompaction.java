package io.fraudstream.evaluator.spark;

import java.lang.reflect.Field;
import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.streaming.StatefulProcessorHandle;
import org.rocksdb.MutableColumnFamilyOptions;
import org.rocksdb.RocksDB;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When RocksDB compacts level 0 in an evaluating task's state store: a compaction setting that Spark does not offer (it
 * builds the store's options itself), for a deployment to set; the detector leaves it unset.
 *
 * <p>Why: the group keys spread each flush of the write buffer over the whole key range, so each compaction of level
 * 0 rewrites about all of the level below it, however little it brings. RocksDB starts one at 4 level-0 files, which
 * with the detector's 2-MiB write buffers is every 8 MiB of new rows; at 16 files it is every 32 MiB, for the same
 * small flush inside a snapshot's commit. At 2 500 tx/s RocksDB's compaction thread used 0.076-0.077 cores at 16
 * against 0.218-0.225 at 4, in two pairs of runs; through an hour at 1 000 tx/s, 13-39% less from minute 10, but the
 * snapshots' hard links took longer (more files to link) and more transitions stalled over 500 ms, so the detector
 * keeps RocksDB's 4 (docs/BENCHMARKS.md, "When level 0 is compacted"). The write slowdown and stop triggers rise with
 * it (3 and 4 times the trigger, at least RocksDB's 20 and 36) so that the larger level 0 does not slow writes.
 *
 * <p>Spark configuration {@value #TRIGGER_CONF} gives the trigger (a task reads it from its local properties, where
 * Spark puts the query's SQL configuration, or else from the Spark configuration); unset, nothing is changed. It is
 * set on the open database of each task's store, found through Spark's internals: the handle's store, its
 * provider's RocksDB, its database. Spark opens a new database only to load another checkpoint, before the task's
 * processor starts, which then sets it again. A Spark whose internals differ, a store that is not RocksDB, or a value
 * that is not a positive integer keeps RocksDB's defaults, and a warning says so once per JVM and kind; no task
 * fails for it.
 */
final class RocksDbCompaction {
  static final String TRIGGER_CONF = "spark.fraudstream.stateStore.rocksdb.level0FileNumCompactionTrigger";
  private static final Logger LOG = LoggerFactory.getLogger(RocksDbCompaction.class);
  // The databases already set, by identity (RocksDB objects do not override equals; a reopened one is a new object):
  // each setOptions writes a new OPTIONS file into the database's directory, so each database is set once.
  private static final Map<RocksDB, Boolean> SET = Collections.synchronizedMap(new WeakHashMap<>());
  private static final Set<String> WARNED = ConcurrentHashMap.newKeySet();
  private static volatile boolean reported;

  private RocksDbCompaction() {}

  /**
   * The trigger configured for the current task; null if there is none, no task, or (with a warning) the value is not
   * a positive integer.
   */
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
    return value == null ? null : parseTrigger(value);
  }

  /** The trigger {@code value} gives; null, with a warning, if it is not a positive integer. */
  static Integer parseTrigger(String value) {
    try {
      int trigger = Integer.parseInt(value.trim());
      if (trigger >= 1) {
        return trigger;
      }
    } catch (NumberFormatException exc) {
      // warned below
    }
    warn("value", TRIGGER_CONF + " is '" + value + "', not a positive integer");
    return null;
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
   * Sets the configured trigger ({@link #configuredTrigger}) on the database of the task's state store; never throws.
   * Outside a task (Spark initializes processors on the driver too, for their schemas) it does nothing. Call it only
   * from the task that holds the store, as a processor's {@code init} does: RocksDB's Java API does not check that a
   * database is still open, and only the holding task knows that it is.
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
        LOG.info(
            "RocksDB compacts level 0 of the evaluating tasks' state stores at {} files ({})", trigger, TRIGGER_CONF);
      }
    } catch (Exception exc) { // RocksDBException, or whatever else: the store works on at RocksDB's defaults
      warn("options", "cannot set the level-0 compaction trigger: " + exc);
    }
  }

  /** The open database behind a task's state store; null (with a warning) if it cannot be found. */
  static RocksDB databaseOf(StatefulProcessorHandle handle) {
    Object store = null;
    try {
      store = field(handle, "store");
      Object provider = field(store, "$outer"); // the store is an inner class of its provider
      Object rocksDb = provider.getClass().getMethod("rocksDB").invoke(provider);
      if (field(rocksDb, "db") instanceof RocksDB db) {
        return db;
      }
      warn("closed", "the state store's database is not open");
    } catch (ReflectiveOperationException | RuntimeException exc) {
      Object of = store == null ? handle : store;
      warn("database", "no RocksDB behind " + of.getClass().getName() + ": " + exc);
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

  /** Logs {@code message} the first time this JVM meets a problem of this {@code kind}. */
  private static void warn(String kind, String message) {
    if (WARNED.add(kind)) {
      LOG.warn("{}; RocksDB keeps its level-0 compaction defaults ({})", message, TRIGGER_CONF);
    }
  }
}
