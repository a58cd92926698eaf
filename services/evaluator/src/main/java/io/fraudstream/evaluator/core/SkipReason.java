package io.fraudstream.evaluator.core;

/** Why a rule could not aggregate a transaction it applies to (the fraud_rule_skipped_total reason label). */
public enum SkipReason {
  MISSING("missing"),
  NON_NUMERIC("non-numeric"),
  OUT_OF_RANGE("out-of-range");

  private final String label;

  SkipReason(String label) {
    this.label = label;
  }

  public String label() {
    return label;
  }
}
