package io.fraudstream.evaluator.spark;

import io.fraudstream.evaluator.core.Alert;
import io.fraudstream.evaluator.core.Engine;
import io.fraudstream.evaluator.core.GroupKeys;
import io.fraudstream.evaluator.core.InvalidRuleException;
import io.fraudstream.evaluator.core.InvalidTransactionException;
import io.fraudstream.evaluator.core.Outcome;
import io.fraudstream.evaluator.core.Transaction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.MapState;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.StatefulProcessor;
import org.apache.spark.sql.streaming.TTLConfig;
import org.apache.spark.sql.streaming.TimeMode;
import org.apache.spark.sql.streaming.TimerValues;
import org.apache.spark.sql.streaming.ValueState;
import scala.collection.Iterator;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Evaluates one bucket's records against its copy of the rule set (every bucket receives every record).
 *
 * <p>Contract: rule messages change every bucket's rule set; a transaction updates and is evaluated in the groups
 * the bucket owns ({@link GroupKeys#bucketOf}). Whole-transaction outcomes (evaluated, invalid, with its DLQ
 * record) are reported by bucket 0 alone, so each transaction is counted once; a late verdict is reported by the
 * owner of the group it was late for. Records of one call are processed in {@link InputRecord#compare} order; under
 * Real-time Mode a call holds one record, in arrival order. Groups idle past their retention are swept every
 * {@code sweepIntervalMs} of processing time. Each task holds a bucket's records until it has read the rules topic
 * up to where it ended when the task started ({@link RulesCatchUp}), so a restart's backlog is never evaluated
 * without the rules that preceded it.
 */
public final class BucketProcessor extends StatefulProcessor<Integer, Row, Row> {
  private static final long serialVersionUID = 1L;

  private final int buckets;
  private final long latenessMs;
  private final long sweepIntervalMs;
  private final String instance;
  private final RulesTopic rulesTopic;
  private transient ValueState<Long> generation;
  private transient ValueState<byte[]> engineState;
  private transient MapState<String, byte[]> heads;
  private transient MapState<String, byte[]> events;
  private transient MapState<Integer, Long> rulesOffsets;
  private transient EvaluatorMetrics metrics;
  private transient Map<Integer, BucketState> claimed;
  private transient Map<Integer, RulesCatchUp> catchUps;

  /**
   * {@code instance} names the detector (its checkpoint location): caches and metrics are kept per instance;
   * {@code rulesTopic} is where the rule messages come from.
   */
  BucketProcessor(int buckets, long latenessMs, long sweepIntervalMs, String instance, RulesTopic rulesTopic) {
    this.buckets = buckets;
    this.latenessMs = latenessMs;
    this.sweepIntervalMs = sweepIntervalMs;
    this.instance = instance;
    this.rulesTopic = rulesTopic;
  }

  @Override
  public void init(OutputMode outputMode, TimeMode timeMode) {
    generation = getHandle().getValueState("generation", Encoders.LONG(), TTLConfig.NONE());
    engineState = getHandle().getValueState("engine", Encoders.BINARY(), TTLConfig.NONE());
    heads = getHandle().getMapState("heads", Encoders.STRING(), Encoders.BINARY(), TTLConfig.NONE());
    events = getHandle().getMapState("events", Encoders.STRING(), Encoders.BINARY(), TTLConfig.NONE());
    rulesOffsets = getHandle().getMapState("rulesOffsets", Encoders.INT(), Encoders.LONG(), TTLConfig.NONE());
    metrics = EvaluatorMetrics.of(instance);
    claimed = new HashMap<>();
    catchUps = new HashMap<>();
  }

  @Override
  public Iterator<Row> handleInputRows(Integer bucket, Iterator<Row> rows, TimerValues timerValues) {
    List<InputRecord> received = new ArrayList<>();
    while (rows.hasNext()) {
      received.add(InputRecord.of(rows.next()));
    }
    if (received.size() > 1) {
      received.sort(InputRecord::compare);
    }
    long nowMs = System.currentTimeMillis();
    RulesCatchUp catchUp =
        catchUps.computeIfAbsent(
            bucket,
            b -> new RulesCatchUp(rulesTopic.endOffsets(), rulesOffsets::getValue, nowMs, rulesTopic.catchUpTimeoutMs()));
    List<InputRecord> records = catchUp.admit(received, nowMs);
    if (records.isEmpty()) {
      return CollectionConverters.asScala(List.<Row>of().iterator());
    }
    // One task (of one micro-batch, or of one Real-time Mode batch) claims its buckets once.
    BucketState state =
        claimed.computeIfAbsent(
            bucket, b -> BucketState.claim(instance + "#" + b, generation, engineState, latenessMs, nowMs));
    BucketState.Groups groups = state.new Groups(heads, events);
    Engine engine = state.engine();
    boolean reporter = bucket == 0;
    Predicate<String> owns = groupKey -> GroupKeys.bucketOf(groupKey, buckets) == bucket;
    List<Row> out = new ArrayList<>();
    long evaluated = 0;
    long invalid = 0;
    long late = 0;
    boolean rulesChanged = false;
    for (InputRecord record : records) {
      if (record.isRule()) {
        String ruleId = record.key() == null ? "" : new String(record.key(), StandardCharsets.UTF_8);
        try {
          engine.onRule(ruleId, record.value(), record.timestampMs());
          rulesChanged = true;
        } catch (InvalidRuleException e) {
          // The operator publishes only validated rules; a foreign message changes nothing.
        }
        rulesOffsets.updateValue(record.partition(), record.offset());
        continue;
      }
      Transaction tx;
      try {
        tx = Transaction.parse(record.value(), record.timestampMs(), record.partition(), record.offset());
      } catch (InvalidTransactionException e) {
        if (reporter) {
          invalid++;
          out.add(OutputRow.dlq(record, e.getReason()).toRow());
        }
        continue;
      }
      Outcome outcome = engine.onTransaction(tx, groups, nowMs, owns);
      if (outcome.invalidReason() != null) {
        if (reporter) {
          invalid++;
          out.add(OutputRow.dlq(record, outcome.invalidReason()).toRow());
        }
        continue;
      }
      for (int i = 0; i < outcome.lateGroups().size(); i++) {
        late++;
        out.add(OutputRow.dlq(record, "late").toRow());
      }
      if (reporter) {
        evaluated++;
      }
      for (Alert alert : outcome.alerts()) {
        out.add(
            OutputRow.alert(
                    alert.ruleId().getBytes(StandardCharsets.UTF_8),
                    alert.toMessageValue(),
                    alert.ruleId(),
                    alert.transactionTimestampMs())
                .toRow());
      }
    }
    boolean swept = state.sweepDue(nowMs, sweepIntervalMs);
    if (swept) {
      groups.sweep();
    }
    groups.flush();
    if (rulesChanged || swept) {
      // The rule set (and the engine's clock) is written when rules change and at each sweep; a restore with an
      // older clock only postpones the sweep of a few groups.
      engineState.update(engine.toBytes());
    }
    metrics.transactions(evaluated, invalid, late);
    if (reporter) {
      metrics.activeRules(engine.activeRuleCount());
      metrics.recordsProcessed(records.size());
    }
    return CollectionConverters.asScala(out.iterator());
  }
}
