package io.fraudstream.evaluator.core;

import java.math.BigDecimal;

/** How a rule's aggregate is compared with its limit. */
public enum LimitOperator {
  EQUAL,
  NOT_EQUAL,
  GREATER,
  GREATER_EQUAL,
  LESS,
  LESS_EQUAL;

  /** Whether {@code left <op> right}, compared exactly by value. */
  public boolean holds(BigDecimal left, BigDecimal right) {
    int c = left.compareTo(right);
    return switch (this) {
      case EQUAL -> c == 0;
      case NOT_EQUAL -> c != 0;
      case GREATER -> c > 0;
      case GREATER_EQUAL -> c >= 0;
      case LESS -> c < 0;
      case LESS_EQUAL -> c <= 0;
    };
  }
}
