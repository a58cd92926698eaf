package io.fraudstream.evaluator.core;

/** A filter's operator; IN/NOT_IN take a list of values, the ordering ones a number. */
public enum FilterOperator {
  EQUAL,
  NOT_EQUAL,
  GREATER,
  GREATER_EQUAL,
  LESS,
  LESS_EQUAL,
  IN,
  NOT_IN;

  public boolean takesList() {
    return this == IN || this == NOT_IN;
  }

  public boolean isOrdering() {
    return this == GREATER || this == GREATER_EQUAL || this == LESS || this == LESS_EQUAL;
  }
}
