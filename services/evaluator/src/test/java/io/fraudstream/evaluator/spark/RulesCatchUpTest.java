package io.fraudstream.evaluator.spark;

import static io.fraudstream.evaluator.spark.Records.rule;
import static io.fraudstream.evaluator.spark.Records.tx;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * RulesCatchUp through its seams: the rules topic's end offsets, what the bucket applied before the task and the state
 * it stashes held records in.
 */
class RulesCatchUpTest {
  private static final long NOW = 1_000_000;
  private static final long TIMEOUT_MS = 5_000;

  private final MemoryMapState<Long, byte[]> pending = new MemoryMapState<>();
  private final PendingRecords stash = new PendingRecords(pending, true);

  private static InputRecord transaction(long offset, long timestampMs) {
    return tx(0, offset, timestampMs, "{}");
  }

  private static InputRecord ruleAt(int partition, long offset, long timestampMs) {
    return rule(partition, offset, timestampMs, "ns/r", "{}");
  }

  @Test
  void nothingIsHeldWhenEveryPartitionWasAppliedUpToItsEndOrIsEmpty() {
    RulesCatchUp catchUp = new RulesCatchUp(Map.of(0, 3L, 1, 0L), p -> p == 0 ? 2L : null, stash, NOW, TIMEOUT_MS);
    List<InputRecord> records = List.of(transaction(0, 5));
    assertFalse(catchUp.holding());
    assertEquals(records, catchUp.admit(records, NOW));
  }

  @Test
  void recordsAreHeldUntilEveryPartitionIsReadUpToItsEndThenReleasedInOrder() {
    RulesCatchUp catchUp = new RulesCatchUp(Map.of(0, 3L, 1, 2L), p -> p == 1 ? 0L : null, stash, NOW, TIMEOUT_MS);
    InputRecord first = transaction(0, 50);
    assertEquals(List.of(), catchUp.admit(List.of(first), NOW));
    InputRecord rule1 = ruleAt(1, 1, 20);
    assertEquals(List.of(), catchUp.admit(List.of(rule1), NOW), "partition 0 is still awaited");
    InputRecord rule0 = ruleAt(0, 1, 10);
    assertEquals(List.of(), catchUp.admit(List.of(rule0), NOW), "its last record is at offset 2");
    assertTrue(catchUp.holding());
    InputRecord last0 = ruleAt(0, 2, 30);
    InputRecord second = transaction(1, 5);
    assertEquals(List.of(second, rule0, rule1, last0, first), catchUp.admit(List.of(last0, second), NOW + 1));
    assertFalse(catchUp.holding());
    InputRecord third = transaction(2, 60);
    assertEquals(List.of(third), catchUp.admit(List.of(third), NOW + 2), "later records pass straight through");
  }

  @Test
  void aRecordPastTheAwaitedOffsetLiftsItsPartitionToo() {
    // Compaction can remove the record at end - 1 from a re-read; any later offset counts as read up to it.
    RulesCatchUp catchUp = new RulesCatchUp(Map.of(0, 3L), p -> null, stash, NOW, TIMEOUT_MS);
    InputRecord rule = ruleAt(0, 7, 10);
    assertEquals(List.of(rule), catchUp.admit(List.of(rule), NOW));
  }

  @Test
  void transactionsDoNotLiftTheBarrierWhateverTheirPartitionAndOffset() {
    RulesCatchUp catchUp = new RulesCatchUp(Map.of(0, 1L), p -> null, stash, NOW, TIMEOUT_MS);
    assertEquals(List.of(), catchUp.admit(List.of(tx(0, 100, 1, "{}")), NOW));
  }

  @Test
  void theTimeoutReleasesEverythingHeld() {
    RulesCatchUp catchUp = new RulesCatchUp(Map.of(0, 3L), p -> null, stash, NOW, TIMEOUT_MS);
    InputRecord first = transaction(0, 20);
    InputRecord second = transaction(1, 10);
    assertEquals(List.of(), catchUp.admit(List.of(first), NOW));
    assertEquals(List.of(), catchUp.admit(List.of(), NOW + TIMEOUT_MS - 1));
    assertEquals(List.of(second, first), catchUp.admit(List.of(second), NOW + TIMEOUT_MS));
  }

  /** Where each record was read: records taken back from the stash are copies, equal in these. */
  private static List<String> at(List<InputRecord> records) {
    return records.stream().map(r -> (r.isRule() ? "rules " : "tx ") + r.partition() + ":" + r.offset()).toList();
  }

  @Test
  void heldRecordsAreStashedAndReleasedFromTheStashWhenTheBarrierLifts() {
    RulesCatchUp catchUp = new RulesCatchUp(Map.of(0, 2L), p -> null, stash, NOW, TIMEOUT_MS);
    assertEquals(List.of(), catchUp.admit(List.of(transaction(0, 5), ruleAt(0, 0, 1)), NOW));
    assertEquals(2, pending.entries.size());
    catchUp.admit(List.of(ruleAt(0, 1, 2)), NOW);
    assertEquals(Map.of(), pending.entries, "released: nothing stays stashed");
  }

  @Test
  void aTaskEndingBehindTheBarrierLosesNothingAndItsRulesCountAsReadForTheNext() {
    Map<Integer, Long> ends = Map.of(0, 2L, 1, 1L);
    RulesCatchUp first = new RulesCatchUp(ends, p -> null, stash, NOW, TIMEOUT_MS);
    InputRecord tx = transaction(0, 5);
    InputRecord last0 = ruleAt(0, 1, 1);
    assertEquals(List.of(), first.admit(List.of(tx, last0), NOW), "partition 1 is still awaited");
    // The task ends; the next one's sources resume after what the first read, so last0 never comes again.
    RulesCatchUp next = new RulesCatchUp(ends, p -> null, stash, NOW + 10, TIMEOUT_MS);
    InputRecord last1 = ruleAt(1, 0, 2);
    assertEquals(at(List.of(last0, last1, tx)), at(next.admit(List.of(last1), NOW + 10)), "no wait for last0");
    assertEquals(Map.of(), pending.entries);
  }

  @Test
  void stashedRecordsOfAnEarlierTaskComeFirstEvenWithNothingAwaited() {
    RulesCatchUp first = new RulesCatchUp(Map.of(0, 2L), p -> null, stash, NOW, TIMEOUT_MS);
    InputRecord tx = transaction(0, 5);
    first.admit(List.of(tx), NOW);
    RulesCatchUp next = new RulesCatchUp(Map.of(0, 2L), p -> 1L, stash, NOW + 10, TIMEOUT_MS);
    InputRecord later = transaction(1, 6);
    assertEquals(at(List.of(tx, later)), at(next.admit(List.of(later), NOW + 10)));
    InputRecord last = transaction(2, 7);
    assertEquals(List.of(last), next.admit(List.of(last), NOW + 11), "then straight through");
  }
}
