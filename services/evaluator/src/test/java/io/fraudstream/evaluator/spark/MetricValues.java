package io.fraudstream.evaluator.spark;

import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.DataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import java.util.Map;
import java.util.TreeMap;

/** What an {@link EvaluatorMetrics} instance would serve, read back for assertions. */
final class MetricValues {
  private final Map<String, MetricSnapshot> snapshots = new TreeMap<>();

  MetricValues(EvaluatorMetrics metrics) {
    for (MetricSnapshot snapshot : metrics.registry().scrape()) {
      snapshots.put(snapshot.getMetadata().getName(), snapshot);
    }
  }

  /** A counter's or gauge's non-zero values by the value of {@code label}. */
  Map<String, Double> by(String metric, String label) {
    Map<String, Double> values = every(metric, label);
    values.values().removeIf(value -> value == 0);
    return values;
  }

  /** Every value a counter or gauge serves, zeros included, by the value of {@code label}. */
  Map<String, Double> every(String metric, String label) {
    Map<String, Double> values = new TreeMap<>();
    for (DataPointSnapshot point : snapshots.get(metric).getDataPoints()) {
      values.put(point.getLabels().get(label), value(point));
    }
    return values;
  }

  /** An unlabelled counter's or gauge's value (a histogram's: its count). */
  double of(String metric) {
    return value(snapshots.get(metric).getDataPoints().get(0));
  }

  private static double value(DataPointSnapshot point) {
    if (point instanceof CounterSnapshot.CounterDataPointSnapshot counter) {
      return counter.getValue();
    }
    if (point instanceof GaugeSnapshot.GaugeDataPointSnapshot gauge) {
      return gauge.getValue();
    }
    return ((HistogramSnapshot.HistogramDataPointSnapshot) point).getCount();
  }
}
