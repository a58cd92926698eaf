package io.fraudstream.evaluator.core;

/** A transaction cannot be evaluated; {@link #getReason()} is the DLQ {@code error} header, Python's text exactly. */
public final class InvalidTransactionException extends FraudstreamException {
  private static final long serialVersionUID = 1L;
  private final String reason;

  public InvalidTransactionException(String reason) {
    super(reason);
    this.reason = reason;
  }

  public String getReason() {
    return reason;
  }
}
