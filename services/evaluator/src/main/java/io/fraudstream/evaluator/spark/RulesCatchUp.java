package io.fraudstream.evaluator.spark;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A bucket's start-up barrier for one task: no record is evaluated before the bucket has read the rules topic up to
 * the end it had when the task started.
 *
 * <p>Why: under Real-time Mode the two sources are read concurrently, so after a restart the transactions backlog
 * could reach a bucket before the rules that preceded it, and be evaluated without them. Contract: records are held,
 * in arrival order, until for every rules partition the last record before that end has been read (in this task,
 * or applied before the task, as {@code lastApplied} reports from the bucket's state), or until {@code timeoutMs}
 * has passed since the task started; then everything held is released at once, in {@link InputRecord#compare}
 * order, and later records pass straight through. The caller must hand every record it receives to {@link #admit}.
 */
final class RulesCatchUp {
  private static final Logger LOG = LoggerFactory.getLogger(RulesCatchUp.class);

  /** partition -> the offset of the last rules record still to be read. */
  private final Map<Integer, Long> awaited = new HashMap<>();

  private final long deadlineMs;
  private List<InputRecord> held = new ArrayList<>();

  /**
   * {@code endOffsets}: the rules topic's end per partition at task start; {@code lastApplied}: the offset of the
   * last rules record the bucket applied in that partition, or null if none.
   */
  RulesCatchUp(Map<Integer, Long> endOffsets, IntFunction<Long> lastApplied, long nowMs, long timeoutMs) {
    endOffsets.forEach(
        (partition, end) -> {
          Long applied = lastApplied.apply(partition);
          if (end > 0 && (applied == null || applied < end - 1)) {
            awaited.put(partition, end - 1);
          }
        });
    this.deadlineMs = nowMs + timeoutMs;
  }

  /** The records to evaluate now, in order: none while holding, everything held when the barrier lifts. */
  List<InputRecord> admit(List<InputRecord> records, long nowMs) {
    if (held == null) {
      return records;
    }
    for (InputRecord record : records) {
      if (record.isRule()) {
        awaited.computeIfPresent(record.partition(), (p, last) -> record.offset() >= last ? null : last);
      }
    }
    held.addAll(records);
    if (!awaited.isEmpty() && nowMs < deadlineMs) {
      return List.of();
    }
    if (!awaited.isEmpty()) {
      LOG.warn(
          "rules topic not read up to its end at task start within the catch-up timeout (still awaited, partition -> "
              + "offset: {}); releasing {} held records",
          awaited,
          held.size());
    }
    List<InputRecord> released = held;
    held = null;
    released.sort(InputRecord::compare);
    return released;
  }
}
