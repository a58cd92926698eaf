package io.fraudstream.evaluator.core;

/** A rules-topic record the detector cannot apply; {@link #reason()} is the metric label (Python's twin agrees). */
public final class RejectedRuleMessageException extends FraudstreamException {
  private static final long serialVersionUID = 1L;

  /** Why (the fraud_rule_messages_rejected_total reason label). */
  public enum Reason {
    UNPARSEABLE("unparseable"),
    INVALID("invalid"),
    KEY_MISMATCH("key-mismatch"),
    UNSUPPORTED_VERSION("unsupported-version");

    private final String label;

    Reason(String label) {
      this.label = label;
    }

    public String label() {
      return label;
    }
  }

  private final Reason reason;

  public RejectedRuleMessageException(Reason reason, String detail) {
    super(detail);
    this.reason = reason;
  }

  public Reason reason() {
    return reason;
  }
}
