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
 * in arrival order, until for every rules partition the last record before that end is in hand (read in this task,
 * held from an earlier one, or applied before the task, as {@code inHand} reports), or until {@code timeoutMs} has
 * passed since the task started; then everything held is released at once, in {@link InputRecord#compare} order,
 * and later records pass straight through. Records held while the barrier is up are mirrored in {@code stash}, so a
 * task that ends (or fails) holding them loses none: the bucket's next task takes them back first, and the rules
 * among them count as read. The caller must hand every record it receives to {@link #admit}.
 */
final class RulesCatchUp {
  private static final Logger LOG = LoggerFactory.getLogger(RulesCatchUp.class);

  /** partition -> the offset of the last rules record still to be read. */
  private final Map<Integer, Long> awaited = new HashMap<>();

  private final PendingRecords stash;
  private final long deadlineMs;
  private final List<Long> stashed = new ArrayList<>();
  private List<InputRecord> held = new ArrayList<>();
  private long nextSeq;

  /**
   * {@code endOffsets}: the rules topic's end per partition at task start; {@code inHand}: the offset of the last
   * rules record the bucket applied or holds (beyond this barrier) in that partition, or null if none;
   * {@code stash}: the bucket's state for the records this barrier holds.
   */
  RulesCatchUp(
      Map<Integer, Long> endOffsets,
      IntFunction<Long> inHand,
      PendingRecords stash,
      long nowMs,
      long timeoutMs) {
    this.stash = stash;
    this.deadlineMs = nowMs + timeoutMs;
    Map<Integer, Long> stashedRules = new HashMap<>();
    stash.readAll()
        .forEach(
            (seq, record) -> {
              held.add(record);
              stashed.add(seq);
              nextSeq = seq + 1;
              if (record.isRule()) {
                stashedRules.merge(record.partition(), record.offset(), Math::max);
              }
            });
    endOffsets.forEach(
        (partition, end) -> {
          Long applied = later(inHand.apply(partition), stashedRules.get(partition));
          if (end > 0 && (applied == null || applied < end - 1)) {
            awaited.put(partition, end - 1);
          }
        });
    if (awaited.isEmpty() && held.isEmpty()) {
      held = null;
    }
  }

  /** Whether records are held: the barrier is up. */
  boolean holding() {
    return held != null;
  }

  /** The later of two offsets, either of which may be null (none). */
  static Long later(Long a, Long b) {
    return a == null ? b : b == null ? a : Long.valueOf(Math.max(a, b));
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
    if (!awaited.isEmpty() && nowMs < deadlineMs) {
      for (InputRecord record : records) {
        stash.put(nextSeq, record);
        stashed.add(nextSeq++);
      }
      held.addAll(records);
      return List.of();
    }
    if (!awaited.isEmpty()) {
      LOG.warn(
          "rules topic not read up to its end at task start within the catch-up timeout (still awaited, partition -> "
              + "offset: {}); releasing {} held records",
          awaited,
          held.size() + records.size());
    }
    stashed.forEach(stash::remove);
    stashed.clear();
    List<InputRecord> released = held;
    held = null;
    released.addAll(records);
    released.sort(InputRecord::compare);
    return released;
  }
}
