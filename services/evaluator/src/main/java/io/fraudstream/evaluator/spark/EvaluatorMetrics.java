package io.fraudstream.evaluator.spark;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the JVM evaluator of one detector instance observed since the driver last asked.
 *
 * <p>Contract: every acknowledged alert is reported exactly once by {@link #drain()}, with its rule id and its
 * latency (acknowledgement time minus the transaction's Kafka timestamp); counters are reported as deltas. The
 * Python driver turns these into the detector's Prometheus metrics, so there is one definition of every metric.
 * Instances live in the JVM that runs the evaluator's tasks (the driver, in local mode).
 */
public final class EvaluatorMetrics {
  private static final Map<String, EvaluatorMetrics> INSTANCES = new ConcurrentHashMap<>();

  private record Acknowledged(String ruleId, long latencyMs) {}

  private final ConcurrentLinkedQueue<Acknowledged> alerts = new ConcurrentLinkedQueue<>();
  private final LongAdder evaluated = new LongAdder();
  private final LongAdder invalid = new LongAdder();
  private final LongAdder late = new LongAdder();
  private final Map<String, LongAdder> dlqByError = new ConcurrentHashMap<>();
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

  void transactions(long evaluatedCount, long invalidCount, long lateCount) {
    evaluated.add(evaluatedCount);
    invalid.add(invalidCount);
    late.add(lateCount);
  }

  void dlq(String error) {
    int colon = error.indexOf(':');
    dlqByError.computeIfAbsent(colon < 0 ? error : error.substring(0, colon), key -> new LongAdder()).increment();
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
   * "evaluated": n, "invalid": n, "late": n, "dlq": {error: n}, "records": n, "activeRules": n or -1 if unknown}}.
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
      json.append('[').append(JsonText.quote(alert.ruleId())).append(',').append(alert.latencyMs()).append(']');
    }
    json.append("],\"evaluated\":").append(evaluated.sumThenReset());
    json.append(",\"invalid\":").append(invalid.sumThenReset());
    json.append(",\"late\":").append(late.sumThenReset());
    json.append(",\"dlq\":{");
    boolean first = true;
    for (Map.Entry<String, LongAdder> entry : dlqByError.entrySet()) {
      long count = entry.getValue().sumThenReset();
      if (count == 0) {
        continue;
      }
      if (!first) {
        json.append(',');
      }
      first = false;
      json.append(JsonText.quote(entry.getKey())).append(':').append(count);
    }
    long records = recordsProcessed.sum();
    json.append("},\"records\":").append(records - recordsDrained);
    recordsDrained = records;
    json.append(",\"activeRules\":").append(activeRules.get()).append('}');
    return json.toString();
  }
}
