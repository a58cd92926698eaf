package io.fraudstream.evaluator.spark;

import io.fraudstream.evaluator.core.Json;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the JVM evaluator of one detector instance observed since the driver last asked.
 *
 * <p>Contract: every acknowledged alert is reported exactly once by {@link #drain()}, with its rule id and its
 * latency (acknowledgement time minus the transaction's Kafka timestamp); counters are reported as deltas; the
 * evaluated positions (the last offset evaluated per transactions partition) and the Kafka timestamp of the newest
 * transaction evaluated as current values. The Python driver turns these into the detector's Prometheus metrics, so
 * there is one definition of every metric. Instances live in the JVM that runs the evaluator's tasks.
 */
public final class EvaluatorMetrics {
  private static final Map<String, EvaluatorMetrics> INSTANCES = new ConcurrentHashMap<>();

  private record Acknowledged(String ruleId, long latencyMs) {}

  private final ConcurrentLinkedQueue<Acknowledged> alerts = new ConcurrentLinkedQueue<>();
  private final Map<String, LongAdder> transactions = new ConcurrentHashMap<>();
  private final LongAdder outOfOrder = new LongAdder();
  private final Map<String, LongAdder> dlqByError = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> appliedByRule = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> skippedByRuleAndReason = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> ruleMessagesRejected = new ConcurrentHashMap<>();
  private final Map<Integer, Long> positions = new ConcurrentHashMap<>();
  private final AtomicLong newestEvaluatedTsMs = new AtomicLong(-1);
  private final AtomicInteger activeRules = new AtomicInteger(-1);
  private final LongAdder recordsProcessed = new LongAdder();
  private long recordsDrained;

  private EvaluatorMetrics() {}

  /** The metrics of the detector instance named {@code instance} (its checkpoint location). */
  public static EvaluatorMetrics of(String instance) {
    return INSTANCES.computeIfAbsent(instance, name -> new EvaluatorMetrics());
  }

  void alertAcknowledged(String ruleId, long latencyMs) {
    alerts.add(new Acknowledged(ruleId, latencyMs));
  }

  /** Transactions by outcome: evaluated, invalid, future (late is {@link #late}). */
  void transactions(String outcome, long count) {
    if (count > 0) {
      transactions.computeIfAbsent(outcome, key -> new LongAdder()).add(count);
    }
  }

  void late() {
    transactions("late", 1);
  }

  void outOfOrder() {
    outOfOrder.increment();
  }

  /** One DLQ record written (or, for error "unwritable", one output Kafka refused for good). */
  void dlq(String error) {
    dlqByError.computeIfAbsent(error, key -> new LongAdder()).increment();
  }

  void ruleApplied(String ruleId) {
    appliedByRule.computeIfAbsent(ruleId, key -> new LongAdder()).increment();
  }

  void ruleSkipped(String ruleId, String reason) {
    skippedByRuleAndReason.computeIfAbsent(ruleId + '\u0000' + reason, key -> new LongAdder()).increment();
  }

  void ruleMessageRejected(String reason) {
    ruleMessagesRejected.computeIfAbsent(reason, key -> new LongAdder()).increment();
  }

  /** A transaction was evaluated: the last offset evaluated in its partition, and its Kafka timestamp. */
  void evaluatedAt(int partition, long offset, long timestampMs) {
    positions.merge(partition, offset, Math::max);
    newestEvaluatedTsMs.accumulateAndGet(timestampMs, Math::max);
  }

  void activeRules(int count) {
    activeRules.set(count);
  }

  void recordsProcessed(long count) {
    recordsProcessed.add(count);
  }

  /** Input records (rule messages and transactions) bucket 0 has processed so far; never reset. */
  public long recordsProcessed() {
    return recordsProcessed.sum();
  }

  /**
   * Everything observed since the previous call, as compact JSON: {@code {"alerts": [[ruleId, latencyMs]...],
   * "transactions": {outcome: n}, "outOfOrder": n, "dlq": {error: n}, "applied": {ruleId: n}, "skipped": [[ruleId,
   * reason, n]...], "ruleMessagesRejected": {reason: n}, "records": n, "activeRules": n or -1 if unknown,
   * "positions": {partition: offset}, "newestEvaluatedTsMs": ms or -1}}.
   */
  public synchronized String drain() {
    StringBuilder json = new StringBuilder("{\"alerts\":[");
    Acknowledged alert;
    boolean firstAlert = true;
    while ((alert = alerts.poll()) != null) {
      if (!firstAlert) {
        json.append(',');
      }
      firstAlert = false;
      json.append('[').append(quote(alert.ruleId())).append(',').append(alert.latencyMs()).append(']');
    }
    json.append("],\"transactions\":");
    appendCounts(transactions, json);
    json.append(",\"outOfOrder\":").append(outOfOrder.sumThenReset());
    json.append(",\"dlq\":");
    appendCounts(dlqByError, json);
    json.append(",\"applied\":");
    appendCounts(appliedByRule, json);
    json.append(",\"skipped\":[");
    boolean first = true;
    for (Map.Entry<String, LongAdder> entry : skippedByRuleAndReason.entrySet()) {
      long count = entry.getValue().sumThenReset();
      if (count == 0) {
        continue;
      }
      int separator = entry.getKey().indexOf('\u0000');
      json.append(first ? "" : ",").append('[').append(quote(entry.getKey().substring(0, separator)));
      json.append(',').append(quote(entry.getKey().substring(separator + 1))).append(',').append(count);
      json.append(']');
      first = false;
    }
    json.append("],\"ruleMessagesRejected\":");
    appendCounts(ruleMessagesRejected, json);
    long records = recordsProcessed.sum();
    json.append(",\"records\":").append(records - recordsDrained);
    recordsDrained = records;
    json.append(",\"activeRules\":").append(activeRules.get());
    json.append(",\"positions\":{");
    first = true;
    for (Map.Entry<Integer, Long> entry : positions.entrySet()) {
      json.append(first ? "" : ",").append('"').append(entry.getKey()).append("\":").append(entry.getValue());
      first = false;
    }
    json.append("},\"newestEvaluatedTsMs\":").append(newestEvaluatedTsMs.get()).append('}');
    return json.toString();
  }

  private static String quote(String text) {
    StringBuilder out = new StringBuilder(text.length() + 2);
    Json.quote(text, false, out);
    return out.toString();
  }

  private static void appendCounts(Map<String, LongAdder> counts, StringBuilder json) {
    json.append('{');
    boolean first = true;
    for (Map.Entry<String, LongAdder> entry : counts.entrySet()) {
      long count = entry.getValue().sumThenReset();
      if (count == 0) {
        continue;
      }
      json.append(first ? "" : ",").append(quote(entry.getKey())).append(':').append(count);
      first = false;
    }
    json.append('}');
  }
}
