package io.fraudstream.evaluator.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fraudstream.evaluator.core.Json;
import io.fraudstream.evaluator.core.JsonValueException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.spark.sql.streaming.TimeMode;
import org.junit.jupiter.api.Test;

/** TransactionReports in Spark's TwsTester: one report per transaction, whatever the number of buckets that saw it. */
class TransactionReportsTest {
  private static final long T0 = 1_700_000_000_000L;

  private final String instance = "transaction-reports-test-" + UUID.randomUUID();
  private final Tester<String> tester = new Tester<>(new TransactionReports(instance), TimeMode.ProcessingTime());
  private final InputRecord tx = Records.tx(1, 7, T0, Records.transaction("t1", "p1", T0 - 600_000));
  private final String txKey = "transactions:1:7";

  private MetricValues metrics() {
    return new MetricValues(EvaluatorMetrics.of(instance));
  }

  @Test
  void theFirstLatePartOfATransactionIsItsOneDeadLetter() throws JsonValueException {
    OutputRow fromBucket0 = OutputRow.late(tx, "late for group A by 5 ms");
    OutputRow fromBucket1 = OutputRow.late(tx, "late for group B by 9 ms");
    List<OutputRow> reported = tester.test(txKey, fromBucket0.toRow(), fromBucket1.toRow());
    assertEquals(1, reported.size());
    OutputRow dlq = reported.get(0);
    assertEquals(OutputRow.Kind.DLQ, dlq.kind());
    assertEquals("late", dlq.error());
    assertEquals("late for group A by 5 ms", dlq.detail());
    assertArrayEquals(tx.value(), dlq.value(), "the transaction as received");
    assertEquals("transactions:1:7", dlq.coordinates());
    assertEquals(List.of(), tester.test(txKey, fromBucket1.toRow()), "a part that arrives later is dropped");
    assertEquals(Map.of("late", 1.0), metrics().by("fraud_transactions", "outcome"));
  }

  @Test
  void outOfOrderIsCountedOnceAndReportsNothing() throws JsonValueException {
    OutputRow part = OutputRow.outOfOrder(tx);
    assertEquals(List.of(), tester.test(txKey, part.toRow(), part.toRow()));
    assertEquals(List.of(), tester.test(txKey, part.toRow()));
    assertEquals(1.0, metrics().of("fraud_out_of_order"));
  }

  @Test
  void lateAndOutOfOrderAreReportedIndependentlyAndPerTransaction() throws JsonValueException {
    InputRecord other = Records.tx(1, 8, T0, Records.transaction("t2", "p1", T0 - 600_000));
    assertEquals(List.of(), tester.test(txKey, OutputRow.outOfOrder(tx).toRow()));
    assertEquals(1, tester.test(txKey, OutputRow.late(tx, "late").toRow()).size());
    assertEquals(1, tester.test("transactions:1:8", OutputRow.late(other, "late").toRow()).size());
    MetricValues metrics = metrics();
    assertEquals(Map.of("late", 2.0), metrics.by("fraud_transactions", "outcome"));
    assertEquals(1.0, metrics.of("fraud_out_of_order"));
  }

  @Test
  void alertsAndDeadLettersPassStraightThrough() {
    byte[] alert = "{\"alertId\": \"a\"}".getBytes(StandardCharsets.UTF_8);
    OutputRow first = OutputRow.alert(tx, "ns/count", alert);
    InputRecord later = Records.tx(1, 9, T0 + 1, Records.transaction("t3", "p1", T0));
    OutputRow second = OutputRow.alert(later, "ns/count", alert);
    List<OutputRow> alerts = tester.test("ns/count", first.toRow(), second.toRow());
    assertEquals(List.of(7L, 9L), alerts.stream().map(OutputRow::sourceOffset).toList());
    assertEquals(List.of("ns/count", "ns/count"), alerts.stream().map(OutputRow::ruleId).toList());
    OutputRow dlq = OutputRow.dlq(tx, "unparseable", "not JSON");
    assertEquals(2, tester.test(txKey, dlq.toRow(), dlq.toRow()).size());
  }
}
