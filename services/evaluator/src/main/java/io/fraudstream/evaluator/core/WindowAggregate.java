package io.fraudstream.evaluator.core;

import java.math.BigDecimal;

/**
 * Partial aggregate over a window: exact sum and count of values, and the extreme value for MIN/MAX (port of
 * aggregates.WindowAggregate and its functions). AVG is compared with its limit exactly as {@code sum <op> limit *
 * count}; AVG, MIN and MAX of an empty window are undefined and hold no limit.
 */
record WindowAggregate(BigDecimal total, long count, BigDecimal extreme) {
  static final WindowAggregate EMPTY = new WindowAggregate(BigDecimal.ZERO, 0, null);

  /** This aggregate with one more value counted. */
  WindowAggregate include(BigDecimal value, AggregatorFunction function) {
    BigDecimal best = extreme;
    if (function == AggregatorFunction.MIN) {
      best = best == null || value.compareTo(best) < 0 ? value : best;
    } else if (function == AggregatorFunction.MAX) {
      best = best == null || value.compareTo(best) > 0 ? value : best;
    }
    return new WindowAggregate(total.add(value), count + 1, best);
  }

  /** The value the rule reports; null when undefined. */
  BigDecimal value(AggregatorFunction function) {
    return switch (function) {
      case COUNT -> BigDecimal.valueOf(count);
      case SUM -> total;
      case AVG -> count == 0 ? null : Decimals.average(total, count);
      case MIN, MAX -> extreme;
    };
  }

  /** Whether {@code aggregate <op> limit} holds, exactly. */
  boolean limitHolds(AggregatorFunction function, LimitOperator operator, BigDecimal limit) {
    if (function == AggregatorFunction.AVG) {
      return count != 0 && operator.holds(total, limit.multiply(BigDecimal.valueOf(count)));
    }
    BigDecimal value = value(function);
    return value != null && operator.holds(value, limit);
  }
}
