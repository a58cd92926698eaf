package io.fraudstream.evaluator.core;

import java.math.BigDecimal;
import java.util.Arrays;
import java.util.Objects;

/**
 * What a non-empty exact aggregator holds besides the events, its cursor counted from the window's first live event:
 * enough to resume it over the same events without reading any ({@link GroupWindow#snapshot}). Resumed over those
 * events, it answers and moves on exactly as the aggregator it was taken from.
 */
sealed interface AggregatorSnapshot {
  /** A {@link SumCountWindow}: its newest member time, running total and count, and its front. */
  record SumCount(long maxMs, BigDecimal total, long count, long front) implements AggregatorSnapshot {}

  /** An {@link ExtremeWindow}: its newest member time, its first unsettled event, its two deques. */
  record Extreme(long maxMs, long settledEnd, Candidates settled, Candidates tail) implements AggregatorSnapshot {}

  /** A deque's candidates, first to last. */
  record Candidates(long[] times, BigDecimal[] values) {
    public Candidates {
      if (times.length != values.length) {
        throw new IllegalArgumentException(times.length + " times for " + values.length + " values");
      }
    }

    @Override
    public boolean equals(Object other) {
      return other instanceof Candidates that
          && Arrays.equals(times, that.times)
          && Arrays.equals(values, that.values);
    }

    @Override
    public int hashCode() {
      return Objects.hash(Arrays.hashCode(times), Arrays.hashCode(values));
    }

    @Override
    public String toString() {
      return "Candidates" + Arrays.toString(times) + Arrays.toString(values);
    }
  }
}
