package io.fraudstream.evaluator.spark;

import static io.fraudstream.evaluator.spark.Records.countRule;
import static io.fraudstream.evaluator.spark.Records.transaction;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fraudstream.evaluator.core.GroupKeys;
import io.fraudstream.evaluator.core.Routes;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.spark.TaskContext$;
import org.apache.spark.TaskContextImpl;
import org.junit.jupiter.api.Test;

class RouterTest {
  private static final long T0 = 1_700_000_000_000L;
  private static final List<String> PAYER = List.of("payerId");
  private static final List<String> BENEFICIARY = List.of("beneficiaryId");

  private final String instance = "router-test-" + UUID.randomUUID();

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  /** A transaction of payer {@code payer} and beneficiary {@code beneficiary}. */
  private static byte[] tx(String payer, String beneficiary) {
    return utf8("{\"eventTime\": " + T0 + ", \"payerId\": \"" + payer + "\", \"beneficiaryId\": \"" + beneficiary
        + "\"}");
  }

  /** The buckets among 4 of the reporter of offset {@code offset} and of the given groups. */
  private static int[] buckets(long offset, String... groupKeys) {
    TreeSet<Integer> reached = new TreeSet<>(List.of(Routes.reporterOf(0, offset, 4)));
    for (String groupKey : groupKeys) {
      reached.add(GroupKeys.bucketOf(groupKey, 4));
    }
    return reached.stream().mapToInt(Integer::intValue).toArray();
  }

  private static String payerKey(String payer) {
    return GroupKeys.groupKey(PAYER, Map.of("payerId", payer));
  }

  private static String beneficiaryKey(String beneficiary) {
    return GroupKeys.groupKey(BENEFICIARY, Map.of("beneficiaryId", beneficiary));
  }

  @Test
  void transactionsGoToEveryBucketUntilEveryBucketCaughtUp() {
    Router router = new Router(instance, 4, true);
    int[] all = {0, 1, 2, 3};
    for (int bucket = 0; bucket < 3; bucket++) {
      Router.caughtUp(instance, 4, bucket, List.of(PAYER));
      assertArrayEquals(all, router.call(false, tx("p1", "b1"), 0, 7L), "after bucket " + bucket);
    }
    assertEquals(0.0, new MetricValues(EvaluatorMetrics.of(instance)).of("fraud_routing_active"));
    Router.caughtUp(instance, 4, 3, List.of());
    for (long offset = 0; offset < 20; offset++) {
      assertArrayEquals(buckets(offset, payerKey("p" + offset)), router.call(false, tx("p" + offset, "b1"), 0, offset));
    }
    assertEquals(1.0, new MetricValues(EvaluatorMetrics.of(instance)).of("fraud_routing_active"));
  }

  @Test
  void aRuleMessageGoesToEveryBucketAndItsKeyGroupRoutesLaterTransactions() {
    Router router = new Router(instance, 4, true);
    for (int bucket = 0; bucket < 4; bucket++) {
      Router.caughtUp(instance, 4, bucket, List.of(PAYER));
    }
    assertArrayEquals(buckets(3, payerKey("p9")), router.call(false, tx("p9", "b2"), 0, 3L));
    byte[] rule = utf8(countRule("ns/by-beneficiary", "beneficiaryId", 5, 4));
    assertArrayEquals(new int[] {0, 1, 2, 3}, router.call(true, rule, 0, 0L));
    assertArrayEquals(buckets(3, payerKey("p9"), beneficiaryKey("b2")), router.call(false, tx("p9", "b2"), 0, 3L));
    assertArrayEquals(new int[] {0, 1, 2, 3}, router.call(true, utf8("not a rule"), 0, 1L), "refused, not learned");
    assertArrayEquals(new int[] {0, 1, 2, 3}, router.call(true, null, 0, 2L), "a tombstone");
    assertArrayEquals(buckets(3, payerKey("p9"), beneficiaryKey("b2")), router.call(false, tx("p9", "b2"), 0, 3L));
  }

  @Test
  void aBucketThatAppliedRulesTeachesTheirKeyGroups() {
    Router router = new Router(instance, 4, true);
    for (int bucket = 0; bucket < 4; bucket++) {
      Router.caughtUp(instance, 4, bucket, List.of());
    }
    Router.learn(instance, 4, List.of(BENEFICIARY));
    assertArrayEquals(buckets(5, beneficiaryKey("b7")), router.call(false, tx("p1", "b7"), 0, 5L));
  }

  @Test
  void withRoutingOffEveryTransactionGoesToEveryBucket() {
    Router router = new Router(instance, 4, false);
    for (int bucket = 0; bucket < 4; bucket++) {
      Router.caughtUp(instance, 4, bucket, List.of(PAYER));
    }
    assertArrayEquals(new int[] {0, 1, 2, 3}, router.call(false, tx("p1", "b1"), 0, 7L));
    assertEquals(0.0, new MetricValues(EvaluatorMetrics.of(instance)).of("fraud_routing_active"));
  }

  @Test
  void eachInstanceAndBucketCountHasItsOwnRoutes() {
    for (int bucket = 0; bucket < 4; bucket++) {
      Router.caughtUp(instance, 4, bucket, List.of(PAYER));
    }
    assertArrayEquals(new int[] {0, 1}, new Router(instance, 2, true).call(false, tx("p1", "b1"), 0, 7L));
    assertArrayEquals(
        new int[] {0, 1, 2, 3}, new Router(instance + "-other", 4, true).call(false, tx("p1", "b1"), 0, 7L));
  }

  /** A directory of {@code run} with routing on, every one of its 4 buckets caught up with {@code keyGroups}. */
  private Router.Directory caughtUp(Router.Run run, List<String> keyGroup) {
    Router.Directory directory = Router.directory(instance, 4, run);
    directory.enable();
    for (int bucket = 0; bucket < 4; bucket++) {
      directory.caughtUp(bucket, List.of(keyGroup));
    }
    return directory;
  }

  private double routingActive() {
    return new MetricValues(EvaluatorMetrics.of(instance)).of("fraud_routing_active");
  }

  @Test
  void aLaterRunOfTheQueryRoutesNothingUntilItsOwnBucketsCaughtUp() {
    Router.Run first = new Router.Run("app", "run-1", 3);
    Router.Run second = new Router.Run("app", "run-2", 9);
    caughtUp(first, PAYER);
    assertEquals(1.0, routingActive());

    // A restart: a rule with a new key group may be in the rules backlog, so what the first run knew routes nothing.
    Router.Directory restarted = Router.directory(instance, 4, new Router.Run("app", "run-2", 8));
    assertEquals(0.0, routingActive());
    restarted.enable();
    for (int bucket = 0; bucket < 3; bucket++) {
      restarted.caughtUp(bucket, List.of(BENEFICIARY));
    }
    assertArrayEquals(new int[] {0, 1, 2, 3}, Router.directory(instance, 4, second).route(tx("p1", "b1"), 0, 7L));
    Router.directory(instance, 4, second).caughtUp(3, List.of(BENEFICIARY));
    assertEquals(1.0, routingActive());
    assertArrayEquals(
        buckets(7, beneficiaryKey("b1")),
        Router.directory(instance, 4, second).route(tx("p1", "b1"), 0, 7L),
        "the second run's key groups only");
  }

  @Test
  void aTaskOfAnEarlierRunNeitherRoutesNorDisturbsTheLaterRun() {
    Router.Run first = new Router.Run("app", "run-1", 3);
    Router.Run second = new Router.Run("app", "run-2", 9);
    caughtUp(second, PAYER);

    Router.Directory stale = caughtUp(first, BENEFICIARY);
    assertArrayEquals(new int[] {0, 1, 2, 3}, stale.route(tx("p1", "b1"), 0, 7L), "a stale task routes to all");
    assertArrayEquals(buckets(7, payerKey("p1")), Router.directory(instance, 4, second).route(tx("p1", "b1"), 0, 7L));
    assertEquals(1.0, routingActive());
  }

  @Test
  void theSameRunKeepsItsDirectoryAcrossStages() {
    caughtUp(new Router.Run("app", "run-1", 3), PAYER);
    assertArrayEquals(
        buckets(7, payerKey("p1")),
        Router.directory(instance, 4, new Router.Run("app", "run-1", 40)).route(tx("p1", "b1"), 0, 7L),
        "a later batch of the same run");
  }

  @Test
  void aTaskRunsInItsQuerysJobGroupAndATaskWithoutOneRoutesNothing() {
    TaskContextImpl task = TaskContext$.MODULE$.empty();
    TaskContext$.MODULE$.setTaskContext(task);
    try {
      assertNull(Router.Run.current(), "no job group: the run is unknown");
      assertArrayEquals(new int[] {0, 1, 2, 3}, Router.directory(instance, 4, null).route(tx("p1", "b1"), 0, 7L));
      task.getLocalProperties().setProperty(Router.RUN_PROPERTY, "run-7");
      Router.Run run = Router.Run.current();
      assertEquals("run-7", run.id());
      caughtUp(run, PAYER);
      assertArrayEquals(buckets(7, payerKey("p1")), new Router(instance, 4, true).call(false, tx("p1", "b1"), 0, 7L));
    } finally {
      TaskContext$.MODULE$.unset();
    }
  }

  @Test
  void aNewApplicationsRunIsLaterWhateverItsStage() {
    caughtUp(new Router.Run("app-1", "run-1", 30), PAYER);
    Router.Run restarted = new Router.Run("app-2", "run-2", 0);
    assertArrayEquals(new int[] {0, 1, 2, 3}, Router.directory(instance, 4, restarted).route(tx("p1", "b1"), 0, 7L));
    assertEquals(0.0, routingActive());
  }

  @Test
  void routingReadsInactiveFromTheEndOfARunUntilTheNextRunRoutes() {
    String firstId = UUID.randomUUID().toString();
    String secondId = UUID.randomUUID().toString();
    caughtUp(new Router.Run("app", firstId, 3), PAYER);
    assertEquals(1.0, routingActive());

    Router.runEnded(firstId);
    assertEquals(0.0, routingActive(), "the query is down");
    Router.Directory second = Router.directory(instance, 4, new Router.Run("app", secondId, 9));
    assertEquals(0.0, routingActive(), "the next run has not caught up yet");
    second.enable();
    for (int bucket = 0; bucket < 4; bucket++) {
      second.caughtUp(bucket, List.of(PAYER));
    }
    assertEquals(1.0, routingActive());

    Router.runEnded(firstId);
    assertEquals(1.0, routingActive(), "an earlier run's end, heard late, leaves the current run alone");
    Router.runEnded(UUID.randomUUID().toString());
    assertEquals(1.0, routingActive(), "another query's end too");
    assertArrayEquals(buckets(7, payerKey("p1")), second.route(tx("p1", "b1"), 0, 7L));
  }

  @Test
  void aRunThatEndedBeforeItsBucketsCaughtUpNeverReadsActive() {
    String id = UUID.randomUUID().toString();
    Router.runEnded(id);
    caughtUp(new Router.Run("app", id, 3), PAYER);
    assertEquals(0.0, routingActive(), "its lingering tasks caught up after its end");
  }

  @Test
  void routersThatSeeTheDirectoryReadyAlsoSeeEveryKeyGroupItWasReadyWith() throws Exception {
    int payerBucket = GroupKeys.bucketOf(payerKey("p1"), 4);
    int beneficiaryBucket = GroupKeys.bucketOf(beneficiaryKey("b1"), 4);
    long offset = 0;
    while (Routes.reporterOf(0, offset, 4) == payerBucket || Routes.reporterOf(0, offset, 4) == beneficiaryBucket) {
      offset++; // a transaction whose reporter is neither group's bucket, so a missing key group shows
    }
    long unrelated = offset;
    byte[] transaction = tx("p1", "b1");
    for (int round = 0; round < 50; round++) {
      Router.Directory directory = Router.directory(instance, 4, new Router.Run("app", "run-" + round, round));
      AtomicInteger routed = new AtomicInteger();
      AtomicReference<String> wrong = new AtomicReference<>();
      CountDownLatch reading = new CountDownLatch(3);
      Thread[] readers = new Thread[3];
      for (int r = 0; r < readers.length; r++) {
        readers[r] =
            new Thread(
                () -> {
                  reading.countDown();
                  while (routed.get() < 200) {
                    int[] buckets = directory.route(transaction, 0, unrelated);
                    if (buckets.length == 4) {
                      continue; // not ready: every bucket
                    }
                    Set<Integer> reached = new HashSet<>();
                    for (int bucket : buckets) {
                      reached.add(bucket);
                    }
                    if (!reached.contains(payerBucket) || !reached.contains(beneficiaryBucket)) {
                      wrong.compareAndSet(null, Arrays.toString(buckets));
                    }
                    routed.incrementAndGet();
                  }
                });
        readers[r].setDaemon(true);
        readers[r].start();
      }
      reading.await();
      for (int bucket = 0; bucket < 4; bucket++) {
        // The last bucket, which makes the directory ready, brings a key group no other bucket has.
        directory.caughtUp(bucket, List.of(bucket < 3 ? PAYER : BENEFICIARY));
      }
      for (Thread reader : readers) {
        reader.join(30_000);
      }
      assertNull(wrong.get(), "round " + round + ": a ready route without a key group the buckets caught up with");
      assertTrue(routed.get() >= 200, "round " + round + ": the readers saw the directory ready");
    }
  }
}
