package io.fraudstream.evaluator.spark;

import static io.fraudstream.evaluator.spark.Records.countRule;
import static io.fraudstream.evaluator.spark.Records.rule;
import static io.fraudstream.evaluator.spark.Records.transaction;
import static io.fraudstream.evaluator.spark.Records.tx;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fraudstream.evaluator.core.Engine;
import io.fraudstream.evaluator.core.Json;
import io.fraudstream.evaluator.core.JsonValueException;
import io.fraudstream.evaluator.core.Routes;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * BucketProcessor in Spark's TwsTester: every bucket receives every record, as the query fans them out; the rules
 * topic's end comes from a MockConsumer and processing time from a clock the test moves.
 */
class BucketProcessorTest {
  private static final long T0 = 1_700_000_000_000L;
  private static final long NOW = T0 + 5_000;
  private static final String P1 = "p1"; // bucket 1 of 2
  private static final String P3 = "p3"; // bucket 0 of 2
  private static final List<String> MAP_STATES = List.of(BucketStore.HEADS, BucketStore.ROWS, BucketStore.PENDING);

  private final String instance = "bucket-processor-test-" + UUID.randomUUID();
  private final SettableClock clock = new SettableClock(NOW);
  private final List<FakeRulesTopic> topics = new ArrayList<>();

  @AfterEach
  void forgetTheRulesTopics() {
    topics.forEach(FakeRulesTopic::close);
  }

  private BucketProcessor processor(int buckets, long reorderWaitMs, Map<Integer, Long> rulesEnds, long catchUpMs) {
    FakeRulesTopic rules = new FakeRulesTopic(rulesEnds, catchUpMs);
    topics.add(rules);
    BucketProcessor.Settings settings = new BucketProcessor.Settings(buckets, 60_000, 300_000, reorderWaitMs, 600_000, 0);
    return new BucketProcessor(settings, instance, rules.topic, clock);
  }

  private static Tester<String> tester(BucketProcessor processor) {
    return new Tester<>(processor, processor.timeMode());
  }

  /** Bucket {@code bucket}'s grouping key with 2 buckets (with 1 bucket, every key is bucket 0's). */
  private static String key(int bucket) {
    return BucketKeys.key(bucket, 2);
  }

  private static List<Row> rows(int bucket, InputRecord... records) {
    return Arrays.stream(records).map(record -> Records.row(record, bucket)).toList();
  }

  private MetricValues metrics() {
    return new MetricValues(EvaluatorMetrics.of(instance));
  }

  /** "ALERT ruleId transactionId", "DLQ error", "LATE", "OUT_OF_ORDER" with the source offset: what a row is about. */
  private static List<String> described(List<OutputRow> outputs) throws JsonValueException {
    List<String> described = new ArrayList<>();
    for (OutputRow row : outputs) {
      String about =
          switch (row.kind()) {
            case ALERT -> "ALERT " + row.ruleId() + " " + ((Map<?, ?>) Json.parse(row.value())).get("transactionId");
            case DLQ -> "DLQ " + row.error();
            case LATE, OUT_OF_ORDER -> row.kind().name();
          };
      described.add(about + " @" + row.sourcePartition() + ":" + row.sourceOffset());
    }
    return described;
  }

  @Test
  void everyBucketKeepsTheRuleSetAndEvaluatesTheGroupsItOwns() throws JsonValueException {
    BucketProcessor processor = processor(2, 0, Map.of(0, 1L), 60_000);
    Tester<String> tester = tester(processor);
    InputRecord[] records = {
      rule(0, 0, T0, "ns/count", countRule("ns/count", 10, 2)),
      tx(0, 0, T0 + 1, transaction("t1", P1, T0 + 1)),
      tx(0, 1, T0 + 2, transaction("t2", P1, T0 + 2)),
      tx(0, 2, T0 + 3, transaction("t3", P3, T0 + 3)),
      tx(0, 3, T0 + 4, transaction("t4", P3, T0 + 4))
    };
    assertEquals(List.of("ALERT ns/count t4 @0:3"), described(tester.test(key(0), rows(0, records))));
    List<OutputRow> bucket1 = tester.test(key(1), rows(1, records));
    assertEquals(List.of("ALERT ns/count t2 @0:1"), described(bucket1));
    OutputRow alert = bucket1.get(0);
    assertEquals("ns/count", new String(alert.key(), StandardCharsets.UTF_8));
    assertEquals(T0 + 2, alert.transactionTsMs());
    for (int bucket : new int[] {0, 1}) {
      byte[] engine = tester.<String, byte[]>map(BucketStore.ROWS, key(bucket)).get(BucketStore.ENGINE_ROW);
      assertEquals(1, Engine.fromBytes(engine).activeRuleCount(), "bucket " + bucket + " holds the rule set");
    }
    MetricValues metrics = metrics();
    assertEquals(
        Map.of("evaluated", 4.0), metrics.by("fraud_transactions", "outcome"), "each transaction counted once, by its reporter");
    assertEquals(
        Map.of("ns/count", 4.0), metrics.by("fraud_rule_applied", "rule_id"), "each in the bucket that owns its group");
    assertEquals(5.0, metrics.of("fraud_input_rows"));
    assertEquals(Map.of("0", 4.0, "1", 4.0), metrics.by("fraud_bucket_transactions", "bucket"), "what each received");
    assertEquals(5, EvaluatorMetrics.of(instance).recordsProcessed());
    assertEquals(1.0, metrics.of("fraud_active_rules"));
    assertEquals(Map.of("0", 3.0), metrics.by("fraud_evaluated_offset", "partition"), "the last offset evaluated");
    assertEquals(
        Map.of("absent", 2.0, "cached", 2.0),
        metrics.by("fraud_window_cache_reads", "result"),
        "each bucket's group new at its first transaction, cached at its second");
    assertEquals(
        Set.of("0", "1"), metrics.by("fraud_window_cache_bytes", "bucket").keySet(), "each bucket caches its group");
    assertEquals(
        Map.of("0", 0.0, "1", 0.0),
        metrics.every("fraud_window_cache_dropping_key_groups", "bucket"),
        "each bucket serves it: no key group observed long enough to drop its new groups");
  }

  /**
   * Grouped by a value as deep as a transaction may nest, or by a number whose normalized text is longer than a
   * number literal may be: the group key cannot be parsed back whole, and the first key of its key group a bucket
   * read failed the task on every retry. Both are evaluated like any other group.
   */
  @Test
  void aTransactionWhoseGroupKeyCannotBeParsedBackIsEvaluated() throws JsonValueException {
    Tester<String> tester = tester(processor(2, 0, Map.of(0, 1L), 60_000));
    int depth = Json.MAX_NESTING_DEPTH - 1; // the transaction object is the first level
    String deep = "[".repeat(depth) + "]".repeat(depth);
    String longNumber = "1".repeat(Json.MAX_NUMBER_CHARS - 6) + "e-2000";
    InputRecord[] records = {
      rule(0, 0, T0, "ns/count", countRule("ns/count", 10, 1)),
      tx(0, 0, T0 + 1, "{\"transactionId\": \"deep\", \"eventTime\": " + (T0 + 1) + ", \"payerId\": " + deep + "}"),
      tx(0, 1, T0 + 2, "{\"transactionId\": \"long\", \"eventTime\": " + (T0 + 2) + ", \"payerId\": " + longNumber + "}")
    };
    List<OutputRow> rows = new ArrayList<>(tester.test(key(0), rows(0, records)));
    rows.addAll(tester.test(key(1), rows(1, records)));
    // Not `described`: the alert nests the deep value deeper than Json.parse reads.
    Pattern id = Pattern.compile("\"transactionId\":\"([a-z]+)\"");
    List<String> outputs = new ArrayList<>();
    for (OutputRow row : rows) {
      Matcher matcher = id.matcher(new String(row.value(), StandardCharsets.UTF_8));
      outputs.add(row.kind() + " " + row.ruleId() + " " + (matcher.find() ? matcher.group(1) : "?"));
    }
    outputs.sort(null);
    assertEquals(List.of("ALERT ns/count deep", "ALERT ns/count long"), outputs);
  }

  @Test
  void aBucketThatCaughtUpWithTheRulesTellsTheRouterTheirKeyGroups() {
    BucketProcessor processor = processor(2, 0, Map.of(0, 1L), 60_000);
    Tester<String> tester = tester(processor);
    Router router = new Router(instance, 2, true);
    long offset = 1; // reported by bucket 1
    assertEquals(1, Routes.reporterOf(0, offset, 2));
    byte[] p3 = transaction("t", P3, T0).getBytes(StandardCharsets.UTF_8); // bucket 0's payer
    byte[] noPayer = ("{\"eventTime\": " + T0 + "}").getBytes(StandardCharsets.UTF_8);
    InputRecord[] records = {rule(0, 0, T0, "ns/count", countRule("ns/count", 10, 2))};
    tester.test(key(0), rows(0, records));
    assertArrayEquals(new int[] {0, 1}, router.call(false, noPayer, 0, offset), "bucket 1 has not caught up");
    tester.test(key(1), rows(1, records));
    assertArrayEquals(new int[] {1}, router.call(false, noPayer, 0, offset), "no group: its reporter alone");
    assertArrayEquals(new int[] {0, 1}, router.call(false, p3, 0, offset), "its reporter and its payer's bucket");
  }

  @Test
  void aTransactionThatCannotBeEvaluatedGoesToTheDlqOnceFromItsReporter() throws JsonValueException {
    Tester<String> tester = tester(processor(2, 0, Map.of(), 60_000));
    InputRecord[] records = {
      tx(0, 0, T0, "not json"),
      tx(0, 1, T0, transaction("t2", P1, T0 + 300_001)),
      tx(0, 2, T0, transaction("t3", P1, T0))
    };
    assertEquals(0, Routes.reporterOf(0, 0, 2));
    assertEquals(1, Routes.reporterOf(0, 1, 2));
    List<OutputRow> dlq = tester.test(key(0), rows(0, records));
    assertEquals(List.of("DLQ unparseable @0:0"), described(dlq));
    assertTrue(dlq.get(0).detail().startsWith("not JSON: "), dlq.get(0).detail());
    assertEquals("not json", new String(dlq.get(0).value(), StandardCharsets.UTF_8), "the original bytes");
    assertEquals(List.of("DLQ future @0:1"), described(tester.test(key(1), rows(1, records))));
    assertEquals(
        Map.of("invalid", 1.0, "future", 1.0, "evaluated", 1.0), metrics().by("fraud_transactions", "outcome"));
  }

  @Test
  void lateAndOutOfOrderArePartsFromTheBucketThatOwnsTheGroup() throws JsonValueException {
    Tester<String> tester = tester(processor(2, 0, Map.of(0, 1L), 60_000));
    InputRecord rule = rule(0, 0, T0, "ns/count", countRule("ns/count", 1, 100));
    long newestMs = T0 + 200_000;
    // The group's horizon: the 1-minute window plus the 60 s lateness behind its newest event time.
    InputRecord[] first = {
      rule,
      tx(1, 0, newestMs, transaction("a", P1, newestMs)),
      tx(1, 1, newestMs + 1, transaction("b", P1, newestMs - 120_001))
    };
    assertEquals(List.of(), tester.test(key(0), rows(0, first)));
    List<OutputRow> late = tester.test(key(1), rows(1, first));
    assertEquals(List.of("LATE @1:1"), described(late));
    assertEquals("late", late.get(0).error());
    String detail = late.get(0).detail();
    assertTrue(detail.startsWith("late for group [[\"payerId\"],[\"p1\"]] by 1 ms"), detail);
    // Ingested before the group's latest transaction, evaluated after it.
    InputRecord earlier = tx(0, 0, newestMs - 1_000, transaction("c", P1, newestMs));
    assertEquals(List.of(), tester.test(key(0), rows(0, earlier)));
    assertEquals(List.of("OUT_OF_ORDER @0:0"), described(tester.test(key(1), rows(1, earlier))));
  }

  @Test
  void aRefusedRuleMessageIsCountedOnceAndLeavesTheRuleInForce() throws JsonValueException {
    Tester<String> tester = tester(processor(2, 0, Map.of(0, 2L), 60_000));
    InputRecord[] records = {
      rule(0, 0, T0, "ns/count", countRule("ns/count", 10, 1)),
      rule(0, 1, T0 + 1, "ns/count", "{not json"),
      tx(0, 0, T0 + 2, transaction("t1", P3, T0 + 2)),
      tx(0, 1, T0 + 3, transaction("t2", P1, T0 + 3))
    };
    assertEquals(List.of("ALERT ns/count t1 @0:0"), described(tester.test(key(0), rows(0, records))));
    assertEquals(List.of("ALERT ns/count t2 @0:1"), described(tester.test(key(1), rows(1, records))));
    assertEquals(Map.of("unparseable", 1.0), metrics().by("fraud_rule_messages_rejected", "reason"));
    assertEquals(Map.of(0, 1L), StoredRows.rulesOffsets(tester, key(0)), "the refused record was read all the same");
    assertEquals(Map.of(0, 1L), StoredRows.rulesOffsets(tester, key(1)));
  }

  @Test
  void recordsWaitUntilTheRulesTopicIsReadUpToItsEndAtTaskStart() throws JsonValueException {
    Tester<String> tester = tester(processor(1, 0, Map.of(0, 2L), 60_000));
    assertEquals(List.of(), tester.test(key(0), rows(0, tx(0, 0, T0 + 10, transaction("t1", P1, T0 + 10)))));
    assertEquals(List.of(), tester.test(key(0), rows(0, rule(0, 0, T0, "ns/a", countRule("ns/a", 10, 1)))));
    // The last rule before the end arrives: everything held is evaluated, in ingestion order, with both rules.
    List<OutputRow> released =
        tester.test(
            key(0),
            rows(
                0,
                rule(0, 1, T0 + 1, "ns/b", countRule("ns/b", 10, 2)),
                tx(0, 1, T0 + 20, transaction("t2", P1, T0 + 20))));
    assertEquals(List.of("ALERT ns/a t1 @0:0", "ALERT ns/a t2 @0:1", "ALERT ns/b t2 @0:1"), described(released));
    List<OutputRow> later = tester.test(key(0), rows(0, tx(0, 2, T0 + 30, transaction("t3", P1, T0 + 30))));
    assertEquals(List.of("ALERT ns/a t3 @0:2", "ALERT ns/b t3 @0:2"), described(later), "no longer held");
  }

  @Test
  void theBarrierLiftsWhenTheCatchUpTimesOut() throws JsonValueException {
    Tester<String> tester = tester(processor(1, 0, Map.of(0, 5L), 30_000));
    assertEquals(List.of(), tester.test(key(0), rows(0, tx(0, 0, T0, "x"))));
    clock.set(NOW + 29_999);
    assertEquals(List.of(), tester.test(key(0), rows(0, tx(0, 1, T0 + 1, "y"))));
    clock.set(NOW + 30_000);
    List<OutputRow> released = tester.test(key(0), rows(0, tx(0, 2, T0 + 2, "z")));
    assertEquals(List.of("DLQ unparseable @0:0", "DLQ unparseable @0:1", "DLQ unparseable @0:2"), described(released));
  }

  @Test
  void theTaskTimelineNotesWhenRecordsCameAndWhenTheRulesWereCaughtUp() {
    BucketProcessor processor = processor(1, 0, Map.of(0, 1L), 60_000);
    Tester<String> tester = tester(processor);
    clock.set(NOW + 100);
    tester.test(key(0), rows(0, tx(0, 0, T0, "x")));
    clock.set(NOW + 250);
    tester.test(key(0), rows(0, rule(0, 0, T0, "ns/count", countRule("ns/count", 10, 1))));
    clock.set(NOW + 400);
    tester.test(key(0), rows(0, tx(0, 1, T0 + 1, "y")));
    assertEquals(
        "task timeline: operator=evaluate batch=3 partition=0 started=%d firstRecord=%d rulesCaughtUp=%d lastRecord=%d closed=%d records=3"
            .formatted(NOW, NOW + 100, NOW + 250, NOW + 400, NOW + 500),
        processor.timeline().line("3", 0, NOW + 500));
  }

  @Test
  void aTaskDoesNotWaitForRulesItsBucketAppliedBefore() throws JsonValueException {
    Map<Integer, Long> ends = Map.of(0, 1L);
    Tester<String> first = tester(processor(1, 0, ends, 60_000));
    assertEquals(List.of(), first.test(key(0), rows(0, rule(0, 0, T0, "ns/count", countRule("ns/count", 10, 1)))));
    // A later task of the same bucket (a new processor instance) restores the bucket's state, offsets included.
    Tester<String> next = tester(processor(1, 0, ends, 60_000));
    copyState(first, next, 0);
    InputRecord t1 = tx(0, 0, T0 + 1, transaction("t1", P1, T0 + 1));
    assertEquals(List.of("ALERT ns/count t1 @0:0"), described(next.test(key(0), rows(0, t1))));
    // Without those offsets the task holds its records until it has read the rules itself.
    Tester<String> fresh = tester(processor(1, 0, ends, 60_000));
    assertEquals(List.of(), fresh.test(key(0), rows(0, t1)));
  }

  @Test
  void aTaskClaimsItsBucketOnce() {
    Tester<String> first = tester(processor(1, 0, Map.of(), 60_000));
    List<Long> generations = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      first.test(key(0), rows(0, tx(0, i, T0 + i, transaction("t" + i, P1, T0 + i))));
      generations.add(StoredRows.generation(first, key(0)));
    }
    assertEquals(1, generations.stream().distinct().count(), "one generation for the task's calls");
    Tester<String> next = tester(processor(1, 0, Map.of(), 60_000));
    copyState(first, next, 0);
    next.test(key(0), rows(0, tx(0, 3, T0 + 3, transaction("t3", P1, T0 + 3))));
    assertNotEquals(generations.get(0), StoredRows.generation(next, key(0)));
  }

  @Test
  void theSweepAfterARuleIsDeletedRemovesTheGroupsItLeftWithoutRules() {
    Tester<String> tester = tester(processor(1, 0, Map.of(0, 1L), 60_000));
    tester.test(
        key(0),
        rows(
            0,
            rule(0, 0, T0, "ns/count", countRule("ns/count", 10, 5)),
            tx(0, 0, T0, transaction("t1", P1, T0))));
    assertEquals(1, tester.<String, byte[]>map(BucketStore.HEADS, key(0)).size());
    tester.test(key(0), rows(0, rule(0, 1, T0 + 1, "ns/count", null)));
    clock.set(NOW + 600_000); // the sweep interval after the task claimed the bucket
    tester.test(key(0), rows(0, tx(0, 1, T0 + 2, transaction("t2", P3, T0 + 2))));
    assertEquals(Map.of(), tester.<String, byte[]>map(BucketStore.HEADS, key(0)));
  }

  @Test
  void aCallDrainingABacklogMovesTheSweepsWalkOnBySlicesOnly() {
    Tester<String> tester = tester(processor(1, 0, Map.of(0, 1L), 60_000));
    List<InputRecord> records = new ArrayList<>();
    records.add(rule(0, 0, T0, "ns/count", countRule("ns/count", 1, 100)));
    for (int i = 0; i < 10; i++) {
      records.add(tx(0, i, T0, transaction("idle" + i, "idle" + i, T0)));
    }
    for (int i = 0; i < 15; i++) { // moves the sweep clock past the idle groups' horizon (1-minute window + lateness)
      long eventMs = T0 + 120_001 + i;
      records.add(tx(0, 10 + i, eventMs, transaction("busy" + i, "busy", eventMs)));
    }
    tester.test(key(0), rows(0, records.toArray(InputRecord[]::new)));
    assertEquals(11, tester.<String, byte[]>map(BucketStore.HEADS, key(0)).size());
    long due = NOW + 600_000; // the sweep interval after the task claimed the bucket
    for (long step = 0; step < 2; step++) {
      clock.set(due + 100 * step);
      long eventMs = T0 + 120_100 + step; // reached Kafka minutes before now: a backlog
      tester.test(key(0), rows(0, tx(0, 25 + step, eventMs, transaction("late" + step, "busy", eventMs))));
    }
    assertTrue(
        tester.<String, byte[]>map(BucketStore.HEADS, key(0)).size() >= 11 - 2 * BucketProcessor.SWEEP_SLICE,
        "two draining calls read two slices of groups at most");
    clock.set(due + 200);
    tester.test(key(0), rows(0, tx(0, 27, due + 200, transaction("fresh", "busy", T0 + 120_200))));
    assertEquals(
        1, tester.<String, byte[]>map(BucketStore.HEADS, key(0)).size(), "a fresh call walks its time share: the rest");
  }

  /** Moves both the processor's clock and the tester's processing time (which fires the timers due). */
  private static List<OutputRow> at(SettableClock clock, Tester<String> tester, long ms) {
    clock.set(ms);
    return tester.setProcessingTime(ms);
  }

  @Test
  void withAReorderWaitRecordsOfDifferentPartitionsLeaveInIngestionOrder() throws JsonValueException {
    Tester<String> tester = tester(processor(1, 1_000, Map.of(0, 1L), 60_000));
    assertEquals(List.of(), tester.test(key(0), rows(0, rule(0, 0, T0, "ns/count", countRule("ns/count", 10, 2)))));
    clock.set(NOW + 10);
    assertEquals(List.of(), tester.test(key(0), rows(0, tx(1, 0, T0 + 200, transaction("b", P1, T0 + 200)))));
    clock.set(NOW + 20);
    assertEquals(List.of(), tester.test(key(0), rows(0, tx(0, 0, T0 + 100, transaction("a", P1, T0 + 100)))));
    assertEquals(3, StoredRows.pending(tester, key(0), false).size(), "held in the bucket's state");
    assertEquals(List.of(), at(clock, tester, NOW + 999));
    assertEquals(List.of(), at(clock, tester, NOW + 1_000), "the rule is due: it applies, nothing to report");
    // b is due at NOW + 1 010, and a, ingested before it, leaves with it: a is evaluated first, so b alerts.
    assertEquals(List.of("ALERT ns/count b @1:0"), described(at(clock, tester, NOW + 1_010)));
    assertEquals(Map.of(), StoredRows.pending(tester, key(0), false));
    assertEquals(0.0, metrics().of("fraud_out_of_order"));
  }

  @Test
  void withoutAReorderWaitTheSameRecordsAreEvaluatedOutOfOrder() throws JsonValueException {
    Tester<String> tester = tester(processor(1, 0, Map.of(0, 1L), 60_000));
    tester.test(key(0), rows(0, rule(0, 0, T0, "ns/count", countRule("ns/count", 10, 2))));
    assertEquals(List.of(), tester.test(key(0), rows(0, tx(1, 0, T0 + 200, transaction("b", P1, T0 + 200)))));
    // a's window ends at its own event time, before b's: a is alone in it.
    InputRecord a = tx(0, 0, T0 + 100, transaction("a", P1, T0 + 100));
    assertEquals(List.of("OUT_OF_ORDER @0:0"), described(tester.test(key(0), rows(0, a))));
  }

  @Test
  void heldRecordsOutliveTheTaskThatHeldThem() throws JsonValueException {
    Tester<String> first = tester(processor(1, 1_000, Map.of(0, 1L), 60_000));
    first.test(key(0), rows(0, rule(0, 0, T0, "ns/count", countRule("ns/count", 10, 2))));
    assertEquals(List.of(), at(clock, first, NOW + 1_000), "the rule applies once its wait is over");
    clock.set(NOW + 1_010);
    first.test(key(0), rows(0, tx(1, 0, T0 + 200, transaction("b", P1, T0 + 200))));
    clock.set(NOW + 1_020);
    first.test(key(0), rows(0, tx(0, 0, T0 + 100, transaction("a", P1, T0 + 100))));
    // The task ends while holding a and b; the next one takes them back from the state, due at once.
    Tester<String> next = tester(processor(1, 1_000, Map.of(0, 1L), 60_000));
    copyState(first, next, 0);
    clock.set(NOW + 1_030);
    List<OutputRow> released = next.test(key(0), rows(0, tx(0, 1, T0 + 300, transaction("c", P1, T0 + 300))));
    assertEquals(List.of("ALERT ns/count b @1:0"), described(released));
    assertEquals(1, StoredRows.pending(next, key(0), false).size(), "c, just arrived, is still held");
    assertEquals(List.of("ALERT ns/count c @0:1"), described(at(clock, next, NOW + 2_030)));
    assertEquals(Map.of(), StoredRows.pending(next, key(0), false));
  }

  @Test
  void recordsHeldBehindTheBarrierWhenTheTaskEndsAreEvaluatedByTheNextTask() throws JsonValueException {
    Map<Integer, Long> ends = Map.of(0, 2L);
    Tester<String> first = tester(processor(1, 0, ends, 60_000));
    InputRecord t1 = tx(0, 0, T0 + 10, transaction("t1", P1, T0 + 10));
    assertEquals(List.of(), first.test(key(0), rows(0, t1, rule(0, 0, T0, "ns/a", countRule("ns/a", 10, 1)))));
    assertEquals(2, StoredRows.pending(first, key(0), true).size(), "held in the bucket's state");
    // The task ends; the next one's sources resume after what the first read.
    Tester<String> next = tester(processor(1, 0, ends, 60_000));
    copyState(first, next, 0);
    List<OutputRow> released = next.test(key(0), rows(0, rule(0, 1, T0 + 1, "ns/b", countRule("ns/b", 10, 5))));
    assertEquals(List.of("ALERT ns/a t1 @0:0"), described(released));
    assertEquals(Map.of(), StoredRows.pending(next, key(0), true));
  }

  @Test
  void aRuleHeldForTheReorderWaitWhenTheTaskEndsIsNotAwaitedByTheNextTask() throws JsonValueException {
    Map<Integer, Long> ends = Map.of(0, 1L);
    Tester<String> first = tester(processor(1, 1_000, ends, 60_000));
    assertEquals(List.of(), first.test(key(0), rows(0, rule(0, 0, T0, "ns/count", countRule("ns/count", 10, 1)))));
    // The task ends with the rule still in its wait: read, but not applied.
    Tester<String> next = tester(processor(1, 1_000, ends, 60_000));
    copyState(first, next, 0);
    clock.set(NOW + 10);
    assertEquals(List.of(), next.test(key(0), rows(0, tx(0, 0, T0 + 1, transaction("t1", P1, T0 + 1)))));
    assertEquals(Map.of(), StoredRows.pending(next, key(0), true), "not held for the rule, which the task already has");
    assertEquals(List.of("ALERT ns/count t1 @0:0"), described(at(clock, next, NOW + 1_010)));
  }

  /** What a later task of the bucket finds: the bucket's state as the previous task left it. */
  private static void copyState(Tester<String> from, Tester<String> to, int bucket) {
    for (String state : MAP_STATES) {
      to.setMap(state, key(bucket), from.map(state, key(bucket)));
    }
  }
}
