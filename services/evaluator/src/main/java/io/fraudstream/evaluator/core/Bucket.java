package io.fraudstream.evaluator.core;

import java.math.BigDecimal;

/**
 * What a bucket of a bucketed rule holds of the member values with event times in it (port of aggregates.Bucket):
 * exact sum and count, minimum and maximum. All four are kept whatever the rule's aggregate, so a change of
 * aggregate (which keeps the window) keeps the buckets too.
 */
public record Bucket(BigDecimal total, long count, BigDecimal low, BigDecimal high) {
  /** A bucket holding just {@code value}. */
  static Bucket of(BigDecimal value) {
    return new Bucket(value, 1, value, value);
  }

  /** This bucket with {@code other}'s values added. */
  Bucket plus(Bucket other) {
    return new Bucket(
        total.add(other.total),
        count + other.count,
        low.compareTo(other.low) <= 0 ? low : other.low,
        high.compareTo(other.high) >= 0 ? high : other.high);
  }
}
