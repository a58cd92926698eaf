package io.fraudstream.evaluator.spark;

import io.fraudstream.evaluator.core.Alert;
import io.fraudstream.evaluator.core.DeadLetters;
import io.fraudstream.evaluator.core.Engine;
import io.fraudstream.evaluator.core.GroupKeys;
import io.fraudstream.evaluator.core.Outcome;
import io.fraudstream.evaluator.core.RejectedRuleMessageException;
import io.fraudstream.evaluator.core.Routes;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.ExpiredTimerInfo;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.StatefulProcessor;
import org.apache.spark.sql.streaming.TimeMode;
import org.apache.spark.sql.streaming.TimerValues;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.collection.Iterator;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Evaluates one bucket's records against its copy of the rule set (every bucket receives every rule message, and
 * every transaction that has a group it owns or that it reports: {@link Router}).
 *
 * <p>Contract: rule messages change every bucket's rule set (one the engine refuses changes nothing, and is counted
 * and logged once, by bucket 0); a transaction updates and is evaluated in the groups the bucket owns ({@link
 * GroupKeys#bucketOf}). What concerns the whole transaction (evaluated, rejected with its DLQ record) is reported by
 * its reporter alone ({@link Routes#reporterOf}), so each transaction is counted once; a late verdict or an
 * out-of-order evaluation is emitted as a part by each bucket that observed it and reported once by {@link
 * TransactionReports}. Each task holds a bucket's records until it has read the rules topic up to where it ended when
 * the task started ({@link RulesCatchUp}); then it tells the {@link Router} its key groups. With a reorder wait,
 * records are then held up to that long and evaluated in ingestion order ({@link HeldRecords}), released as later
 * records arrive and by processing-time timers. Groups idle past their horizon are swept every {@code
 * sweepIntervalMs} of processing time, a slice of them a call.
 */
public final class BucketProcessor extends StatefulProcessor<String, Row, Row> {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(BucketProcessor.class);
  /**
   * The pace of a sweep's walk ({@link BucketState.Groups#sweep}): at least this many groups a call, and more while
   * the walk has taken no more than {@link #SWEEP_TIME_SHARE} of the time since its last step. A whole walk in one
   * call held up every record behind it for as long as it took: seconds, with hundreds of thousands of groups. A
   * count per call (256, plus 20 for every millisecond since the last step) then took most of the evaluating core
   * while it lasted, raising latency to 1-3 s for several seconds of every walk at 1 000 tx/s.
   */
  static final int SWEEP_SLICE = 4;

  static final double SWEEP_TIME_SHARE = 0.2;

  /**
   * A call whose newest transaction reached Kafka longer ago than this is draining a backlog (after a batch
   * transition, say): its walk step is {@link #SWEEP_SLICE} groups only, so that the walk does not slow the drain.
   * At 250 ms the walk's share kept the detector at its margin while a backlog built up to that age: alerts during
   * the walks of a 600 s soak had a median of 70 ms (12 ms outside them); at 100 ms, 19 ms.
   */
  static final long SWEEP_BACKLOG_MS = 100;

  /**
   * The engine's settings, as configured (they override what a restored state holds); {@code stateCacheBytes} bounds
   * the heap this JVM's cache of group windows holds for the detector (0: a quarter of the heap).
   */
  record Settings(
      int buckets, long latenessMs, long futureSkewMs, long reorderWaitMs, long sweepIntervalMs, long stateCacheBytes)
      implements java.io.Serializable {}

  private final Settings settings;
  private final String instance;
  private final RulesTopic rulesTopic;
  private final Clock clock;
  private transient BucketStore store;
  private transient EvaluatorMetrics metrics;
  private transient Map<Integer, BucketState> claimed;
  private transient Map<Integer, RulesCatchUp> catchUps;
  private transient Map<Integer, HeldRecords> reorders;
  private transient Map<Integer, Long> timers;
  private transient Set<Integer> routed;
  private transient TaskTimeline timeline;

  /**
   * {@code instance} names the detector (its checkpoint location): caches and metrics are kept per instance;
   * {@code rulesTopic} is where the rule messages come from.
   */
  BucketProcessor(Settings settings, String instance, RulesTopic rulesTopic) {
    this(settings, instance, rulesTopic, Clock.systemUTC());
  }

  /** As above, with {@code clock} as the processing time the reorder wait and the catch-up are measured in. */
  BucketProcessor(Settings settings, String instance, RulesTopic rulesTopic, Clock clock) {
    this.settings = settings;
    this.instance = instance;
    this.rulesTopic = rulesTopic;
    this.clock = clock;
  }

  /** The time mode the processor needs: processing time (its timers) only when it holds records to reorder. */
  TimeMode timeMode() {
    return settings.reorderWaitMs() > 0 ? TimeMode.ProcessingTime() : TimeMode.None();
  }

  @Override
  public void init(OutputMode outputMode, TimeMode timeMode) {
    store = BucketStore.declare(getHandle());
    RocksDbCompaction.apply(getHandle());
    metrics = EvaluatorMetrics.of(instance);
    claimed = new HashMap<>();
    catchUps = new HashMap<>();
    reorders = new HashMap<>();
    timers = new HashMap<>();
    routed = new HashSet<>();
    timeline = new TaskTimeline("evaluate", true, clock.millis());
  }

  @Override
  public void close() {
    timeline.close(clock.millis());
  }

  /** This task's timeline so far. */
  TaskTimeline timeline() {
    return timeline;
  }

  @Override
  public Iterator<Row> handleInputRows(String key, Iterator<Row> rows, TimerValues timerValues) {
    int bucket = BucketKeys.bucketOf(key, settings.buckets());
    List<InputRecord> received = new ArrayList<>();
    while (rows.hasNext()) {
      received.add(InputRecord.of(rows.next()));
    }
    if (received.size() > 1) {
      received.sort(InputRecord::compare);
    }
    long nowMs = clock.millis();
    timeline.received(received.size(), nowMs);
    HeldRecords reordering = settings.reorderWaitMs() > 0 ? reordering(bucket, nowMs) : null;
    RulesCatchUp catchUp =
        catchUps.computeIfAbsent(
            bucket,
            b ->
                new RulesCatchUp(
                    rulesTopic.endOffsets(),
                    partition -> inHand(partition, reordering),
                    store.awaitingRules(),
                    nowMs,
                    rulesTopic.catchUpTimeoutMs()));
    List<InputRecord> admitted = catchUp.admit(received, nowMs);
    if (!catchUp.holding()) {
      timeline.caughtUp(nowMs);
    }
    if (reordering != null) {
      admitted = reordering.offer(admitted, nowMs);
    }
    return evaluate(bucket, admitted, nowMs);
  }

  @Override
  public Iterator<Row> handleExpiredTimer(String key, TimerValues timerValues, ExpiredTimerInfo expiredTimerInfo) {
    int bucket = BucketKeys.bucketOf(key, settings.buckets());
    long nowMs = clock.millis();
    timers.remove(bucket);
    return evaluate(bucket, reordering(bucket, nowMs).release(nowMs), nowMs);
  }

  /** The last rules offset of {@code partition} the bucket applied, or holds for the reorder wait from a past task. */
  private Long inHand(int partition, HeldRecords reordering) {
    return RulesCatchUp.later(
        store.rulesOffset(partition), reordering == null ? null : reordering.loadedRuleOffset(partition));
  }

  private HeldRecords reordering(Integer bucket, long nowMs) {
    return reorders.computeIfAbsent(bucket, b -> HeldRecords.load(settings.reorderWaitMs(), store.held(), nowMs));
  }

  private Iterator<Row> evaluate(Integer bucket, List<InputRecord> records, long nowMs) {
    List<Row> out = new ArrayList<>();
    if (!records.isEmpty()) {
      evaluate(bucket, records, nowMs, out);
    }
    HeldRecords reordering = reorders.get(bucket);
    Long dueMs = reordering == null ? null : reordering.nextDueMs();
    if (dueMs != null && !dueMs.equals(timers.get(bucket))) {
      getHandle().registerTimer(dueMs);
      timers.put(bucket, dueMs);
    }
    return CollectionConverters.asScala(out.iterator());
  }

  private void evaluate(Integer bucket, List<InputRecord> records, long nowMs, List<Row> out) {
    // One task (of one micro-batch, or of one Real-time Mode batch) claims its buckets once.
    BucketState state =
        claimed.computeIfAbsent(
            bucket,
            b ->
                BucketState.claim(
                    instance + "#" + b,
                    store,
                    settings.latenessMs(),
                    settings.futureSkewMs(),
                    settings.stateCacheBytes(),
                    nowMs));
    BucketState.Groups groups = state.new Groups(store);
    Engine engine = state.engine();
    boolean rulesReporter = bucket == 0;
    int buckets = settings.buckets();
    Predicate<String> owns = groupKey -> GroupKeys.bucketOf(groupKey, buckets) == bucket;
    long evaluated = 0;
    long invalid = 0;
    long future = 0;
    long processed = 0;
    long transactions = 0;
    boolean rulesChanged = false;
    long newestTransactionMs = Long.MIN_VALUE;
    for (InputRecord record : records) {
      if (record.isRule()) {
        rulesChanged |= applyRule(engine, record, rulesReporter);
        processed += rulesReporter ? 1 : 0;
        continue;
      }
      transactions++;
      boolean reporter = Routes.reporterOf(record.partition(), record.offset(), buckets) == bucket;
      processed += reporter ? 1 : 0;
      newestTransactionMs = Math.max(newestTransactionMs, record.timestampMs());
      Outcome outcome =
          engine.onRecord(record.value(), record.timestampMs(), record.partition(), record.offset(), groups, nowMs, owns);
      DeadLetters.Rejection rejection = outcome.rejection();
      if (rejection != null) {
        if (reporter) {
          future += rejection.error() == DeadLetters.Error.FUTURE ? 1 : 0;
          invalid += rejection.error() == DeadLetters.Error.FUTURE ? 0 : 1;
          out.add(OutputRow.dlq(record, rejection.error().label(), rejection.detail()).toRow());
        }
        continue;
      }
      if (reporter) {
        evaluated++;
        metrics.evaluatedAt(record.partition(), record.offset(), record.timestampMs());
      }
      if (!outcome.late().isEmpty()) {
        out.add(OutputRow.late(record, outcome.late().get(0).detail()).toRow());
      }
      if (outcome.outOfOrder()) {
        out.add(OutputRow.outOfOrder(record).toRow());
      }
      outcome.applied().forEach(metrics::ruleApplied);
      outcome.skipped().forEach(skip -> metrics.ruleSkipped(skip.ruleId(), skip.reason().label()));
      for (Alert alert : outcome.alerts()) {
        out.add(OutputRow.alert(record, alert.ruleId(), alert.toMessageValue()).toRow());
      }
    }
    boolean draining = newestTransactionMs != Long.MIN_VALUE && nowMs - newestTransactionMs > SWEEP_BACKLOG_MS;
    groups.end(
        rulesChanged, nowMs, settings.sweepIntervalMs(), SWEEP_SLICE, draining ? 0.0 : SWEEP_TIME_SHARE);
    if (rulesChanged) {
      Router.learn(instance, buckets, engine.knownKeyGroups());
    }
    RulesCatchUp catchUp = catchUps.get(bucket);
    if (catchUp != null && !catchUp.holding() && routed.add(bucket)) {
      Router.caughtUp(instance, buckets, bucket, engine.knownKeyGroups());
    }
    metrics.transactions("evaluated", evaluated);
    metrics.transactions("invalid", invalid);
    metrics.transactions("future", future);
    metrics.recordsProcessed(processed);
    metrics.bucketTransactions(bucket, transactions);
    metrics.windowCache(
        bucket, groups.activity(), state.cachedBytes(), state.budgetBytes(), state.droppingKeyGroups());
    if (rulesReporter) {
      metrics.activeRules(engine.activeRuleCount());
    }
  }

  /** Applies one rules-topic record; false, with the refusal counted and logged by bucket 0, if the engine refused it. */
  private boolean applyRule(Engine engine, InputRecord record, boolean reporter) {
    String ruleId = record.key() == null ? "" : new String(record.key(), StandardCharsets.UTF_8);
    boolean applied = true;
    try {
      engine.onRule(ruleId, record.value(), record.timestampMs());
    } catch (RejectedRuleMessageException e) {
      applied = false;
      if (reporter) {
        metrics.ruleMessageRejected(e.reason().label());
        LOG.warn(
            "rules-topic record with key {} at {}:{}:{} not applied ({}): {}",
            DeadLetters.bounded(ruleId, 256),
            record.topic(),
            record.partition(),
            record.offset(),
            e.reason().label(),
            DeadLetters.bounded(e.getMessage()));
      }
    }
    store.setRulesOffset(record.partition(), record.offset());
    return applied;
  }
}
