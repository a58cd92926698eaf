package io.fraudstream.evaluator.spark;

import io.fraudstream.evaluator.core.ReorderBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A bucket's records held for {@code reorderWaitMs} so that records of different partitions are evaluated in
 * ingestion order ({@link ReorderBuffer}), mirrored in the bucket's state so that none is lost when a batch ends or a
 * task fails while holding them.
 *
 * <p>Contract: every record given to {@link #offer} comes out of {@link #offer} or {@link #release} exactly once per
 * committed batch history; a new task (of a new batch, or a retry) first takes back what its bucket's state holds,
 * due at once.
 */
final class HeldRecords {
  private record Sequenced(long seq, InputRecord record) {}

  private final ReorderBuffer<Sequenced> buffer;
  private final PendingRecords state;
  private final Map<Integer, Long> loadedRules = new HashMap<>();
  private long nextSeq;

  private HeldRecords(long waitMs, PendingRecords state) {
    this.buffer = new ReorderBuffer<>(waitMs, (a, b) -> InputRecord.compare(a.record(), b.record()));
    this.state = state;
  }

  /** The bucket's held records as its state has them, due at {@code nowMs}. */
  static HeldRecords load(long waitMs, PendingRecords state, long nowMs) {
    HeldRecords held = new HeldRecords(waitMs, state);
    state.readAll()
        .forEach(
            (seq, record) -> {
              held.buffer.add(new Sequenced(seq, record), nowMs - waitMs);
              held.nextSeq = seq + 1;
              if (record.isRule()) {
                held.loadedRules.merge(record.partition(), record.offset(), Math::max);
              }
            });
    return held;
  }

  /** The offset of the last rules record of {@code partition} that was held when this task took the state over. */
  Long loadedRuleOffset(int partition) {
    return loadedRules.get(partition);
  }

  /** Holds {@code records}, arrived at {@code nowMs}; returns the records to evaluate now, in order. */
  List<InputRecord> offer(List<InputRecord> records, long nowMs) {
    for (InputRecord record : records) {
      long seq = nextSeq++;
      state.put(seq, record);
      buffer.add(new Sequenced(seq, record), nowMs);
    }
    return forget(buffer.release(nowMs));
  }

  /** The records due at {@code nowMs}, in order. */
  List<InputRecord> release(long nowMs) {
    return forget(buffer.release(nowMs));
  }

  /** When the next held record becomes due; null when none is held. */
  Long nextDueMs() {
    return buffer.nextDueMs();
  }

  private List<InputRecord> forget(List<Sequenced> released) {
    List<InputRecord> records = new ArrayList<>(released.size());
    for (Sequenced record : released) {
      state.remove(record.seq());
      records.add(record.record());
    }
    return records;
  }
}
