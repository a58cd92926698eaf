package io.fraudstream.evaluator.spark;

import org.apache.spark.TaskContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When one task of a stateful stage did what, on the clock of the JVM that ran it, for splitting a checkpoint
 * transition's stall into the parts the stage sees (`make soak`, bench/soak.py).
 *
 * <p>Contract: a task's timeline starts when the processor is initialized for it (its state store is loaded by then),
 * notes the first and the last call that brought records and the call from which the bucket's rules were caught up
 * (the first such call when nothing was awaited). It is logged ({@link #line}) twice: once it is running, at the call
 * that caught up the rules ({@link #caughtUp}; for a stage without a catch-up, its first records), so that a
 * transition's second half is known while the next batch runs; and at {@link #close}, which Spark calls after the
 * task's state commit. Only a task logs (the driver also initializes and closes the processors, to learn their state
 * schema).
 */
final class TaskTimeline {
  /** What every line starts with; bench/soak.py finds the lines by it. */
  static final String PREFIX = "task timeline:";

  private static final Logger LOG = LoggerFactory.getLogger(TaskTimeline.class);

  private final String operator;
  private final boolean catchesUp;
  private final long startedMs;
  private long firstRecordMs = -1;
  private long lastRecordMs = -1;
  private long caughtUpMs = -1;
  private long records;

  /**
   * A timeline of a task of {@code operator} ({@code evaluate}, {@code report}) initialized at {@code nowMs};
   * {@code catchesUp}: whether the stage holds its records until the rules are caught up ({@link #caughtUp}).
   */
  TaskTimeline(String operator, boolean catchesUp, long nowMs) {
    this.operator = operator;
    this.catchesUp = catchesUp;
    this.startedMs = nowMs;
  }

  /** A call brought {@code count} records at {@code nowMs}; a call with none changes nothing. */
  void received(int count, long nowMs) {
    if (count == 0) {
      return;
    }
    boolean first = firstRecordMs < 0;
    if (first) {
      firstRecordMs = nowMs;
    }
    lastRecordMs = nowMs;
    records += count;
    if (first && !catchesUp) {
      log(-1);
    }
  }

  /** The bucket's rules were caught up in a call at {@code nowMs}; only the first such call counts, and is logged. */
  void caughtUp(long nowMs) {
    if (caughtUpMs < 0) {
      caughtUpMs = nowMs;
      log(-1);
    }
  }

  /**
   * The line logged for a task of batch {@code batch} and partition {@code partition} that closed at {@code
   * closedMs} (negative: still running): {@value #PREFIX} then space-separated {@code name=value} fields, epoch ms for
   * the times, {@code -} for a time that did not happen (yet, or at all: no record, no catch-up in a stage without
   * one).
   */
  String line(String batch, int partition, long closedMs) {
    return String.format(
        "%s operator=%s batch=%s partition=%d started=%d firstRecord=%s rulesCaughtUp=%s lastRecord=%s closed=%s "
            + "records=%d",
        PREFIX,
        operator,
        batch,
        partition,
        startedMs,
        time(firstRecordMs),
        time(caughtUpMs),
        time(lastRecordMs),
        time(closedMs),
        records);
  }

  /** The task closed at {@code nowMs}: logs its whole timeline. */
  void close(long nowMs) {
    log(nowMs);
  }

  /** Logs {@link #line} when called in a task; the batch is Spark's {@code streaming.sql.batchId} of the task. */
  private void log(long closedMs) {
    TaskContext task = TaskContext.get();
    if (task == null) {
      return;
    }
    String batch = task.getLocalProperty("streaming.sql.batchId");
    LOG.info(line(batch == null ? "-" : batch, task.partitionId(), closedMs));
  }

  private static String time(long ms) {
    return ms < 0 ? "-" : Long.toString(ms);
  }
}
