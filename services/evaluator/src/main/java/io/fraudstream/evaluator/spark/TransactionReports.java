package io.fraudstream.evaluator.spark;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.StatefulProcessor;
import org.apache.spark.sql.streaming.TTLConfig;
import org.apache.spark.sql.streaming.TimeMode;
import org.apache.spark.sql.streaming.TimerValues;
import org.apache.spark.sql.streaming.ValueState;
import scala.collection.Iterator;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The report step: one report per transaction for what several buckets can each observe of it.
 *
 * <p>Keyed by the transaction's coordinates for its parts, and by rule id for alerts. Contract: alerts and DLQ
 * records pass straight through; the first {@code LATE} part of a transaction becomes its one DLQ record (error
 * {@code late}) and its one count in {@code fraud_transactions_total{outcome="late"}}, and the first {@code
 * OUT_OF_ORDER} part its one count in {@code fraud_out_of_order_total}; later parts of the same transaction are
 * dropped. What was reported is remembered for {@link #MEMORY} (processing time), far longer than the buckets of one
 * transaction take to see it, except after a restart that replays older input: then a transaction may be reported
 * again, as any output may (at-least-once).
 */
final class TransactionReports extends StatefulProcessor<String, Row, Row> {
  private static final long serialVersionUID = 1L;
  static final Duration MEMORY = Duration.ofMinutes(10);
  private static final int LATE_REPORTED = 1;
  private static final int OUT_OF_ORDER_COUNTED = 2;

  private final String instance;
  private transient ValueState<Integer> reported;
  private transient EvaluatorMetrics metrics;
  private transient TaskTimeline timeline;

  /** {@code instance} names the detector whose metrics the counts go to. */
  TransactionReports(String instance) {
    this.instance = instance;
  }

  @Override
  public void init(OutputMode outputMode, TimeMode timeMode) {
    reported = getHandle().getValueState("reported", Encoders.INT(), new TTLConfig(MEMORY));
    metrics = EvaluatorMetrics.of(instance);
    timeline = new TaskTimeline("report", false, System.currentTimeMillis());
  }

  @Override
  public void close() {
    timeline.close(System.currentTimeMillis());
  }

  @Override
  public Iterator<Row> handleInputRows(String key, Iterator<Row> rows, TimerValues timerValues) {
    List<Row> out = new ArrayList<>();
    int received = 0;
    while (rows.hasNext()) {
      Row row = rows.next();
      received++;
      OutputRow part = OutputRow.of(row);
      switch (part.kind()) {
        case ALERT, DLQ -> out.add(part.toRow());
        case LATE -> {
          if (firstTime(LATE_REPORTED)) {
            metrics.late();
            out.add(part.asDeadLetter().toRow());
          }
        }
        case OUT_OF_ORDER -> {
          if (firstTime(OUT_OF_ORDER_COUNTED)) {
            metrics.outOfOrder();
          }
        }
      }
    }
    timeline.received(received, System.currentTimeMillis());
    return CollectionConverters.asScala(out.iterator());
  }

  /** Whether {@code flag} was not yet reported for this transaction; marks it reported. */
  private boolean firstTime(int flag) {
    int flags = reported.exists() ? reported.get() : 0;
    if ((flags & flag) != 0) {
      return false;
    }
    reported.update(flags | flag);
    return true;
  }
}
