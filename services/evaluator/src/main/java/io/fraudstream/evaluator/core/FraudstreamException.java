package io.fraudstream.evaluator.core;

/** Root of the checked errors the evaluation core raises on purpose (port of exceptions.FraudstreamError). */
public class FraudstreamException extends Exception {
  private static final long serialVersionUID = 1L;

  public FraudstreamException(String message) {
    super(message);
  }

  public FraudstreamException(String message, Throwable cause) {
    super(message, cause);
  }
}
