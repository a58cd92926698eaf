package io.fraudstream.evaluator.core;

/** A transaction cannot be evaluated: its DLQ error (one word) and bounded detail, as Python's twin says them. */
public final class InvalidTransactionException extends FraudstreamException {
  private static final long serialVersionUID = 1L;
  private final DeadLetters.Error error;
  private final String detail;

  public InvalidTransactionException(DeadLetters.Error error, String detail) {
    super(error.label() + ": " + detail);
    this.error = error;
    this.detail = detail;
  }

  public DeadLetters.Error error() {
    return error;
  }

  public String detail() {
    return detail;
  }
}
