package io.fraudstream.evaluator.core;

/** What a rule computes over its window. */
public enum AggregatorFunction {
  SUM,
  COUNT,
  AVG,
  MIN,
  MAX
}
