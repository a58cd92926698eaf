package io.fraudstream.evaluator.spark;

import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.core.metrics.Info;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The detector's evaluation metrics (CONTRACT section 7), kept and served by every JVM that runs the evaluator's tasks:
 * each Spark executor, or the driver with a {@code local[N]} master.
 *
 * <p>Contract: one instance per detector (named by its checkpoint location) and JVM, with its own Prometheus
 * registry. The first instance a task asks for serves its registry with Prometheus' Java client on the port that the
 * Spark configuration {@value #PORT_CONF} gives, on every interface (as Spark's own executor ports), when that port is
 * above zero; a detector runs one query per JVM, so that instance is the detector's. Counters only grow, so Prometheus
 * sums them across executors ({@code sum by (le)} for the latency histogram). Besides the contract's metrics it
 * serves the detector's progress, which the driver reads from every executor for its liveness: the last offset
 * evaluated per transactions partition ({@code fraud_evaluated_offset}) and the Kafka timestamp of the newest
 * transaction evaluated ({@code fraud_newest_evaluated_timestamp_seconds}).
 */
public final class EvaluatorMetrics {
  /** The Spark configuration key of the port the evaluator's metrics are served on (0 or absent: not served). */
  public static final String PORT_CONF = "spark.fraudstream.evaluatorMetrics.port";

  /** Fine up to 500 ms, where the budget is, so that quantiles interpolated from the buckets are close to the truth. */
  static final double[] LATENCY_BUCKETS_S = {
    0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1, 0.125, 0.15, 0.175, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45,
    0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0, 60.0, 120.0,
  };

  private static final Logger LOG = LoggerFactory.getLogger(EvaluatorMetrics.class);
  private static final Map<String, EvaluatorMetrics> INSTANCES = new ConcurrentHashMap<>();
  private static volatile boolean serveTried;

  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final Histogram alertLatency =
      Histogram.builder()
          .name("fraud_alert_latency_seconds")
          .help("Alert acknowledged by the alerts topic minus the transaction's Kafka timestamp")
          .classicOnly()
          .classicUpperBounds(LATENCY_BUCKETS_S)
          .register(registry);
  private final Counter alerts =
      counter("fraud_alerts", "Alerts written to the alerts topic", "rule_id");
  private final Counter transactions =
      counter(
          "fraud_transactions",
          "Transactions by outcome: evaluated, invalid (dead-lettered as unparseable or invalid), future; late counts"
              + " those late for at least one key group (other key groups may still have evaluated them)",
          "outcome");
  private final Counter dlq =
      counter(
          "fraud_dlq_records",
          "Records written to the DLQ by error; unwritable: outputs Kafka refused for good",
          "error");
  private final Counter applied =
      counter("fraud_rule_applied", "Transactions each ACTIVE rule applied to (evaluated or skipped)", "rule_id");
  // Each rule's data point of `applied`, looked up once: ruleApplied runs per rule per group of every transaction,
  // and labelValues builds its label arrays on every call.
  private final Map<String, CounterDataPoint> appliedByRule = new ConcurrentHashMap<>();
  private final Counter skipped =
      counter(
          "fraud_rule_skipped",
          "Transactions a rule applied to but skipped: its aggregate field missing, non-numeric or out of range",
          "rule_id",
          "reason");
  private final Counter ruleMessagesRejected =
      counter("fraud_rule_messages_rejected", "Rules-topic records the detector could not apply, by reason", "reason");
  private final Counter outOfOrder =
      counter(
          "fraud_out_of_order",
          "Transactions evaluated after one of their group's transactions with a later ingestion time");
  private final Counter bucketTransactions =
      counter(
          "fraud_bucket_transactions",
          "Transactions each bucket received: with routing, those with a group it owns or that it reports",
          "bucket");
  private final Counter cacheReads =
      counter(
          "fraud_window_cache_reads",
          "Group windows the evaluator read, by where it found them: its cache (cached), the state store (loaded from"
              + " its events, or resumed from its snapshot without reading them), or neither (absent: a new group)",
          "result");
  // The data points of `cacheReads`, looked up once: windowCache runs once per task call.
  private final CounterDataPoint cachedReads = cacheReads.labelValues("cached");
  private final CounterDataPoint loadedReads = cacheReads.labelValues("loaded");
  private final CounterDataPoint resumedReads = cacheReads.labelValues("resumed");
  private final CounterDataPoint absentReads = cacheReads.labelValues("absent");
  private final Counter cacheEvictions =
      counter(
          "fraud_window_cache_evictions",
          "Group windows dropped from the cache to keep it within its budget (the state store keeps them)");
  private final Gauge cacheBytes =
      gauge("fraud_window_cache_bytes", "The estimated heap of the windows each bucket caches in this JVM", "bucket");
  private final Gauge cacheBudget =
      gauge("fraud_window_cache_budget_bytes", "Each bucket's share of this JVM's window cache budget", "bucket");
  private final Gauge cacheDroppingKeyGroups =
      gauge(
          "fraud_window_cache_dropping_key_groups",
          "Key groups whose new groups each bucket drops from its cache after their call, because under 1 in 64 of"
              + " their reads found an existing group (cache admission)",
          "bucket");
  private final Counter inputRows = counter("fraud_input_rows", "Kafka records read (transactions and rule messages)");
  private final Gauge activeRules = gauge("fraud_active_rules", "ACTIVE rules in the detector's rule set");
  private final Gauge routing =
      gauge(
          "fraud_routing_active",
          "1 once this JVM sends each transaction only to the buckets of its groups and its reporter; 0 while it"
              + " sends it to every bucket (routing off, or not every bucket caught up with the rules yet in the query's"
              + " current run) and while the query is down");
  private final Gauge evaluatedOffset =
      gauge("fraud_evaluated_offset", "The last offset evaluated in each transactions partition", "partition");
  private final Gauge newestEvaluated =
      gauge("fraud_newest_evaluated_timestamp_seconds", "The Kafka timestamp of the newest transaction evaluated");
  private final Map<Integer, Long> positions = new ConcurrentHashMap<>();
  private long newestEvaluatedTsMs = -1;

  private EvaluatorMetrics() {
    routing.set(0);
    for (String outcome : new String[] {"evaluated", "invalid", "late", "future"}) {
      transactions.labelValues(outcome);
    }
    for (String error : new String[] {"unparseable", "invalid", "late", "future", "unwritable"}) {
      dlq.labelValues(error);
    }
    for (String reason : new String[] {"unparseable", "invalid", "key-mismatch", "unsupported-version"}) {
      ruleMessagesRejected.labelValues(reason);
    }
    Info.builder()
        .name("fraud_evaluator_info")
        .help("The Spark executor whose JVM serves these metrics (\"driver\" with a local[N] master)")
        .labelNames("executor_id")
        .register(registry)
        .setLabelValues(executorId());
  }

  private Counter counter(String name, String help, String... labels) {
    return Counter.builder().name(name).help(help).labelNames(labels).register(registry);
  }

  private Gauge gauge(String name, String help, String... labels) {
    return Gauge.builder().name(name).help(help).labelNames(labels).register(registry);
  }

  /**
   * The metrics of the detector instance named {@code instance} (its checkpoint location) in this JVM; the first
   * instance also starts serving them when the Spark configuration asks for it (see the class comment).
   */
  public static EvaluatorMetrics of(String instance) {
    EvaluatorMetrics metrics = INSTANCES.computeIfAbsent(instance, name -> new EvaluatorMetrics());
    // Only a task's JVM serves: the driver also initializes the processors (for their state schema), and with
    // executors it must leave the port to them.
    if (!serveTried && TaskContext.get() != null) {
      serve(instance, metrics);
    }
    return metrics;
  }

  private static synchronized void serve(String instance, EvaluatorMetrics metrics) {
    if (serveTried) {
      return;
    }
    serveTried = true;
    SparkConf conf = SparkEnv.get() == null ? null : SparkEnv.get().conf();
    int port = conf == null ? 0 : conf.getInt(PORT_CONF, 0);
    if (port <= 0) {
      return;
    }
    try {
      HTTPServer.builder().port(port).registry(metrics.registry).buildAndStart();
      LOG.info("serving the evaluator's metrics of {} on port {}", instance, port);
    } catch (IOException e) {
      // The driver's liveness then sees no progress from this JVM, and says so.
      LOG.error("cannot serve the evaluator's metrics on port {}: {}", port, e.toString());
    }
  }

  private static String executorId() {
    return SparkEnv.get() == null ? "none" : SparkEnv.get().executorId();
  }

  void alertAcknowledged(String ruleId, long latencyMs) {
    alertLatency.observe(latencyMs / 1000.0);
    alerts.labelValues(ruleId).inc();
  }

  /** Transactions by outcome: evaluated, invalid, future (late is {@link #late}). */
  void transactions(String outcome, long count) {
    if (count > 0) {
      transactions.labelValues(outcome).inc(count);
    }
  }

  void late() {
    transactions("late", 1);
  }

  void outOfOrder() {
    outOfOrder.inc();
  }

  /** One DLQ record written (or, for error "unwritable", one output Kafka refused for good). */
  void dlq(String error) {
    dlq.labelValues(error).inc();
  }

  /** Bucket {@code bucket} evaluated {@code count} more transactions. */
  void bucketTransactions(int bucket, long count) {
    bucketTransactions.labelValues(Integer.toString(bucket)).inc(count);
  }

  void ruleApplied(String ruleId) {
    CounterDataPoint point = appliedByRule.get(ruleId);
    if (point == null) {
      point = applied.labelValues(ruleId);
      appliedByRule.putIfAbsent(ruleId, point);
    }
    point.inc();
  }

  void ruleSkipped(String ruleId, String reason) {
    skipped.labelValues(ruleId, reason).inc();
  }

  void ruleMessageRejected(String reason) {
    ruleMessagesRejected.labelValues(reason).inc();
  }

  /** A transaction was evaluated: the last offset evaluated in its partition, and its Kafka timestamp. */
  synchronized void evaluatedAt(int partition, long offset, long timestampMs) {
    long position = positions.merge(partition, offset, Math::max);
    evaluatedOffset.labelValues(Integer.toString(partition)).set(position);
    if (timestampMs > newestEvaluatedTsMs) {
      newestEvaluatedTsMs = timestampMs;
      newestEvaluated.set(timestampMs / 1000.0);
    }
  }

  /** Whether this JVM routes transactions now, in the query's current run (see {@link Router}). */
  void routing(boolean active) {
    routing.set(active ? 1 : 0);
  }

  void activeRules(int count) {
    activeRules.set(count);
  }

  /**
   * After one call of bucket {@code bucket}: what its reads found and its flush evicted, the cache's size, and how
   * many key groups its cache admission drops new groups of.
   */
  void windowCache(
      int bucket, BucketState.CacheActivity activity, long bytes, long budgetBytes, int droppingKeyGroups) {
    cachedReads.inc(activity.cached());
    loadedReads.inc(activity.loaded());
    resumedReads.inc(activity.resumed());
    absentReads.inc(activity.absent());
    cacheEvictions.inc(activity.evicted());
    String label = Integer.toString(bucket);
    cacheBytes.labelValues(label).set(bytes);
    cacheBudget.labelValues(label).set(budgetBytes);
    cacheDroppingKeyGroups.labelValues(label).set(droppingKeyGroups);
  }

  void recordsProcessed(long count) {
    inputRows.inc(count);
  }

  /** Input records (rule messages and transactions) bucket 0 has processed in this JVM so far; never reset. */
  public long recordsProcessed() {
    return (long) inputRows.get();
  }

  /** The registry this instance's metrics are in (what its JVM serves, when it serves them). */
  PrometheusRegistry registry() {
    return registry;
  }

  /** What this instance serves, in Prometheus' text format (for a driver that runs the tasks itself: tests). */
  public String exposition() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try {
      PrometheusTextFormatWriter.create().write(out, registry.scrape());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toString(StandardCharsets.UTF_8);
  }
}
