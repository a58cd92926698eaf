package io.fraudstream.evaluator.spark;

import static io.fraudstream.evaluator.spark.Records.rule;
import static io.fraudstream.evaluator.spark.Records.tx;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** RulesCatchUp through its seams: the rules topic's end offsets and what the bucket applied before the task. */
class RulesCatchUpTest {
  private static final long NOW = 1_000_000;
  private static final long TIMEOUT_MS = 5_000;

  private static InputRecord transaction(long offset, long timestampMs) {
    return tx(0, offset, timestampMs, "{}");
  }

  private static InputRecord ruleAt(int partition, long offset, long timestampMs) {
    return rule(partition, offset, timestampMs, "ns/r", "{}");
  }

  @Test
  void nothingIsHeldWhenEveryPartitionWasAppliedUpToItsEndOrIsEmpty() {
    RulesCatchUp catchUp = new RulesCatchUp(Map.of(0, 3L, 1, 0L), p -> p == 0 ? 2L : null, NOW, TIMEOUT_MS);
    List<InputRecord> records = List.of(transaction(0, 5));
    assertEquals(records, catchUp.admit(records, NOW));
  }

  @Test
  void recordsAreHeldUntilEveryPartitionIsReadUpToItsEndThenReleasedInOrder() {
    RulesCatchUp catchUp = new RulesCatchUp(Map.of(0, 3L, 1, 2L), p -> p == 1 ? 0L : null, NOW, TIMEOUT_MS);
    InputRecord first = transaction(0, 50);
    assertEquals(List.of(), catchUp.admit(List.of(first), NOW));
    InputRecord rule1 = ruleAt(1, 1, 20);
    assertEquals(List.of(), catchUp.admit(List.of(rule1), NOW), "partition 0 is still awaited");
    InputRecord rule0 = ruleAt(0, 1, 10);
    assertEquals(List.of(), catchUp.admit(List.of(rule0), NOW), "its last record is at offset 2");
    InputRecord last0 = ruleAt(0, 2, 30);
    InputRecord second = transaction(1, 5);
    assertEquals(List.of(second, rule0, rule1, last0, first), catchUp.admit(List.of(last0, second), NOW + 1));
    InputRecord third = transaction(2, 60);
    assertEquals(List.of(third), catchUp.admit(List.of(third), NOW + 2), "later records pass straight through");
  }

  @Test
  void aRecordPastTheAwaitedOffsetLiftsItsPartitionToo() {
    // Compaction can remove the record at end - 1 from a re-read; any later offset counts as read up to it.
    RulesCatchUp catchUp = new RulesCatchUp(Map.of(0, 3L), p -> null, NOW, TIMEOUT_MS);
    InputRecord rule = ruleAt(0, 7, 10);
    assertEquals(List.of(rule), catchUp.admit(List.of(rule), NOW));
  }

  @Test
  void transactionsDoNotLiftTheBarrierWhateverTheirPartitionAndOffset() {
    RulesCatchUp catchUp = new RulesCatchUp(Map.of(0, 1L), p -> null, NOW, TIMEOUT_MS);
    assertEquals(List.of(), catchUp.admit(List.of(tx(0, 100, 1, "{}")), NOW));
  }

  @Test
  void theTimeoutReleasesEverythingHeld() {
    RulesCatchUp catchUp = new RulesCatchUp(Map.of(0, 3L), p -> null, NOW, TIMEOUT_MS);
    InputRecord first = transaction(0, 20);
    InputRecord second = transaction(1, 10);
    assertEquals(List.of(), catchUp.admit(List.of(first), NOW));
    assertEquals(List.of(), catchUp.admit(List.of(), NOW + TIMEOUT_MS - 1));
    assertEquals(List.of(second, first), catchUp.admit(List.of(second), NOW + TIMEOUT_MS));
  }
}
