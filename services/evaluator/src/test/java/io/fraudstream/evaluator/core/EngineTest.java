package io.fraudstream.evaluator.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A few cases of the evaluation semantics (docs/detector.md), one per rule of them; the Python oracle and property
 * tests hold the whole of them against both cores.
 */
class EngineTest {
  private static final long T0 = 1_700_000_000_000L;
  private final InMemoryGroupStore store = new InMemoryGroupStore();
  private long offset;

  static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  static byte[] rule(String ruleId, String spec) {
    String json =
        "{\"ruleId\": \"" + ruleId + "\", \"generation\": 1, \"uid\": \"uid-" + ruleId + "\", \"spec\": " + spec + "}";
    return json.getBytes(StandardCharsets.UTF_8);
  }

  static String count(String keys, int windowMinutes, int limit) {
    return "{\"groupingKeyNames\": " + keys + ", \"aggregatorFunctionType\": \"COUNT\", \"limitOperatorType\": "
        + "\"GREATER_EQUAL\", \"limit\": " + limit + ", \"windowMinutes\": " + windowMinutes + "}";
  }

  static String sum(String field, int limit) {
    return "{\"groupingKeyNames\": [\"payerId\"], \"aggregatorFunctionType\": \"SUM\", \"aggregateFieldName\": \""
        + field + "\", \"limitOperatorType\": \"GREATER\", \"limit\": " + limit + ", \"windowMinutes\": 60}";
  }

  static byte[] tx(String id, long eventTimeMs, String extra) {
    String json =
        "{\"transactionId\": \"" + id + "\", \"eventTime\": " + eventTimeMs
            + ", \"payerId\": \"p1\", \"beneficiaryId\": \"b1\"" + extra + "}";
    return json.getBytes(StandardCharsets.UTF_8);
  }

  private Outcome onRecord(Engine engine, byte[] value, long ingestTsMs) {
    return engine.onRecord(value, ingestTsMs, 0, offset++, store, ingestTsMs + 5, key -> true);
  }

  private static List<String> alertedRules(Outcome outcome) {
    return outcome.alerts().stream().map(Alert::ruleId).toList();
  }

  @Test
  void anAlertWhenTheWindowsAggregateHoldsItsLimit() throws RejectedRuleMessageException {
    Engine engine = new Engine(60_000, 300_000);
    engine.onRule("ns/count", rule("ns/count", count("[\"payerId\"]", 1, 2)), T0);
    assertEquals(List.of(), onRecord(engine, tx("t1", T0, ""), T0 + 1).alerts());
    Outcome second = onRecord(engine, tx("t2", T0 + 60_000, ""), T0 + 2);
    assertEquals(List.of("ns/count"), alertedRules(second));
    Alert alert = second.alerts().get(0);
    assertEquals("t2", alert.transactionId());
    assertEquals(0, alert.aggregateValue().compareTo(BigDecimal.valueOf(2)), "t1 is exactly at the window's start");
    assertEquals(T0 + 2, alert.transactionTimestampMs());
    assertEquals(T0 + 7, alert.detectedAtMs());
    assertEquals(Alert.alertId("ns/count", "t2"), alert.alertId());
    Outcome third = onRecord(engine, tx("t3", T0 + 120_001, ""), T0 + 3);
    assertEquals(List.of(), third.alerts(), "t1 and t2 are out of t3's window");
  }

  @Test
  void aTransactionBeyondItsKeyGroupsHorizonIsLateThereAndEvaluatedElsewhere() throws RejectedRuleMessageException {
    Engine engine = new Engine(1_000, 300_000);
    engine.onRule("ns/payer", rule("ns/payer", count("[\"payerId\"]", 1, 1)), T0);
    engine.onRule("ns/pair", rule("ns/pair", count("[\"beneficiaryId\", \"payerId\"]", 10, 1)), T0);
    long newestMs = T0 + 600_000;
    onRecord(engine, tx("t1", newestMs, ""), newestMs + 1);
    // The payer group's horizon is 60 s + 1 s behind its newest event time; the pair group's 600 s + 1 s.
    Outcome atHorizon = onRecord(engine, tx("t2", newestMs - 61_000, ""), newestMs + 2);
    assertEquals(List.of(), atHorizon.late());
    Outcome late = onRecord(engine, tx("t3", newestMs - 61_001, ""), newestMs + 3);
    assertEquals(1, late.late().size());
    Outcome.LateGroup group = late.late().get(0);
    assertEquals("[[\"payerId\"],[\"p1\"]]", group.groupKey());
    assertEquals(1, group.behindMs());
    assertTrue(group.detail().startsWith("late for group [[\"payerId\"],[\"p1\"]] by 1 ms: "), group.detail());
    assertEquals(List.of("ns/pair"), late.applied(), "the wider key group still evaluates it");
    assertEquals(List.of("ns/pair"), alertedRules(late));
    assertNull(late.rejection());
  }

  @Test
  void eachKeyGroupWithRulesHasTheHorizonOfItsWidestActiveRule() throws RejectedRuleMessageException {
    Engine engine = new Engine(1_000, 300_000);
    engine.onRule("ns/payer", rule("ns/payer", count("[\"payerId\"]", 1, 1)), T0);
    engine.onRule("ns/payer-wide", rule("ns/payer-wide", count("[\"payerId\"]", 10, 1)), T0);
    engine.onRule("ns/pair", rule("ns/pair", count("[\"beneficiaryId\", \"payerId\"]", 5, 1)), T0);
    List<String> payer = List.of("payerId");
    List<String> pair = List.of("beneficiaryId", "payerId");
    assertEquals(Set.of(payer, pair), engine.keyGroups());
    assertEquals(601_000, engine.horizonMs(payer));
    assertEquals(301_000, engine.horizonMs(pair));
    engine.onRule("ns/pair", null, T0 + 1);
    assertEquals(Set.of(payer), engine.keyGroups(), "a key group whose last rule is deleted");
    assertEquals(1_000, engine.horizonMs(pair), "no rule: the lateness alone");
  }

  @Test
  void aTransactionTooFarInTheFutureIsRejectedAndMovesNoClock() throws RejectedRuleMessageException {
    Engine engine = new Engine(0, 300_000);
    engine.onRule("ns/count", rule("ns/count", count("[\"payerId\"]", 1, 1)), T0);
    Outcome future = onRecord(engine, tx("t1", T0 + 300_001, ""), T0);
    assertEquals(DeadLetters.Error.FUTURE, future.rejection().error());
    assertEquals(
        "eventTime " + (T0 + 300_001) + " is 300001 ms ahead of its Kafka timestamp " + T0
            + " (allowed future skew 300000 ms)",
        future.rejection().detail());
    assertEquals(List.of(), future.alerts());
    Outcome now = onRecord(engine, tx("t2", T0, ""), T0 + 1);
    assertEquals(List.of(), now.late(), "the future event time did not become the group's newest");
    assertEquals(List.of("ns/count"), alertedRules(now));
    assertEquals(T0, engine.clockMs(), "nor did the sweep clock see it");
    assertNull(onRecord(engine, tx("t3", T0 + 300_000, ""), T0).rejection(), "exactly the allowed skew is accepted");
  }

  @Test
  void aRuleWithoutItsFieldSkipsTheTransactionAndSilencesNoOtherRule() throws RejectedRuleMessageException {
    Engine engine = new Engine(60_000, 300_000);
    engine.onRule("ns/sum", rule("ns/sum", sum("paymentAmount", 5)), T0);
    engine.onRule("ns/count", rule("ns/count", count("[\"payerId\"]", 60, 1)), T0);
    Outcome missing = onRecord(engine, tx("t1", T0, ""), T0 + 1);
    assertEquals(List.of(new Outcome.SkippedRule("ns/sum", SkipReason.MISSING)), missing.skipped());
    assertEquals(List.of("ns/count"), alertedRules(missing));
    assertEquals(List.of("ns/count", "ns/sum"), missing.applied().stream().sorted().toList());
    assertEquals(
        List.of(new Outcome.SkippedRule("ns/sum", SkipReason.NON_NUMERIC)),
        onRecord(engine, tx("t2", T0, ", \"paymentAmount\": \"abc\""), T0 + 2).skipped());
    assertEquals(
        List.of(new Outcome.SkippedRule("ns/sum", SkipReason.OUT_OF_RANGE)),
        onRecord(engine, tx("t3", T0, ", \"paymentAmount\": 1e200"), T0 + 3).skipped());
    // The skipped transactions did not enter the sum's window: 6 alone exceeds 5, and the sum is 6.
    Outcome counted = onRecord(engine, tx("t4", T0, ", \"paymentAmount\": \"6.0\""), T0 + 4);
    Alert sum = counted.alerts().stream().filter(a -> a.ruleId().equals("ns/sum")).findFirst().orElseThrow();
    assertEquals(0, sum.aggregateValue().compareTo(new BigDecimal("6")));
    assertEquals(List.of(), counted.skipped());
  }

  @Test
  void anEarlierIngestedTransactionAfterALaterOneIsOutOfOrderAndCountedByEventTime()
      throws RejectedRuleMessageException {
    Engine engine = new Engine(60_000, 300_000);
    engine.onRule("ns/count", rule("ns/count", count("[\"payerId\"]", 1, 2)), T0);
    assertFalse(onRecord(engine, tx("t1", T0 + 10_000, ""), T0 + 200).outOfOrder());
    Outcome earlier = onRecord(engine, tx("t2", T0 + 5_000, ""), T0 + 100);
    assertTrue(earlier.outOfOrder());
    // t1 lies after t2's event time: t2's window [t - 60 s, t] holds t2 alone.
    assertEquals(List.of(), earlier.alerts());
    Outcome later = onRecord(engine, tx("t3", T0 + 20_000, ""), T0 + 300);
    assertFalse(later.outOfOrder());
    assertEquals(List.of("ns/count"), alertedRules(later));
    assertEquals(0, later.alerts().get(0).aggregateValue().compareTo(BigDecimal.valueOf(3)));
  }

  @Test
  void recordsThatAreNotTransactionsAreRejectedWithTheirError() {
    Engine engine = new Engine(60_000, 300_000);
    assertEquals(DeadLetters.Error.UNPARSEABLE, onRecord(engine, new byte[0], T0).rejection().error());
    assertEquals(DeadLetters.Error.UNPARSEABLE, onRecord(engine, bytes("{"), T0).rejection().error());
    Outcome array = onRecord(engine, bytes("[1]"), T0);
    assertEquals(
        new DeadLetters.Rejection(DeadLetters.Error.INVALID, "not a JSON object but an array"), array.rejection());
    assertEquals("missing eventTime", onRecord(engine, bytes("{}"), T0).rejection().detail());
  }

  @Test
  void aRefusedRuleMessageLeavesTheRuleSetAsItWas() throws RejectedRuleMessageException {
    Engine engine = new Engine(60_000, 300_000);
    engine.onRule("ns/count", rule("ns/count", count("[\"payerId\"]", 1, 1)), T0);
    RejectedRuleMessageException mismatch =
        assertThrows(
            RejectedRuleMessageException.class,
            () -> engine.onRule("ns/other", rule("ns/count", count("[\"payerId\"]", 1, 5)), T0 + 1));
    assertEquals(RejectedRuleMessageException.Reason.KEY_MISMATCH, mismatch.reason());
    RejectedRuleMessageException garbage =
        assertThrows(
            RejectedRuleMessageException.class,
            () -> engine.onRule("ns/count", bytes("not json"), T0 + 2));
    assertEquals(RejectedRuleMessageException.Reason.UNPARSEABLE, garbage.reason());
    assertEquals(1, engine.activeRuleCount());
    assertEquals(List.of("ns/count"), alertedRules(onRecord(engine, tx("t1", T0, ""), T0 + 3)));
    engine.onRule("ns/count", null, T0 + 4);
    assertEquals(0, engine.activeRuleCount(), "a tombstone deletes the rule");
  }

  @Test
  void theRuleSetRoundTripsThroughItsBytesWithTheConfiguredSettings() throws RejectedRuleMessageException {
    Engine engine = new Engine(60_000, 300_000);
    engine.onRule("ns/count", rule("ns/count", count("[\"payerId\"]", 1, 2)), T0);
    onRecord(engine, tx("t1", T0, ""), T0 + 1);
    byte[] bytes = engine.toBytes();
    Engine restored = Engine.fromBytes(bytes);
    assertArrayEquals(bytes, restored.toBytes());
    assertEquals(T0, restored.clockMs());
    Engine reconfigured = Engine.fromBytes(bytes, 5_000L, 1_000L);
    assertEquals(5_000, reconfigured.latenessMs());
    assertEquals(1_000, reconfigured.futureSkewMs());
    assertEquals(List.of("ns/count"), alertedRules(onRecord(restored, tx("t2", T0 + 1, ""), T0 + 2)));
    assertThrows(CorruptStateException.class, () -> Engine.fromBytes(bytes("{\"format\": 99}")));
  }
}
