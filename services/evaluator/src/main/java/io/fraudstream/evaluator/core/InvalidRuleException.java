package io.fraudstream.evaluator.core;

/** A rule spec or rule message is unusable; the message names the offending field, as Python's InvalidRuleError. */
public final class InvalidRuleException extends FraudstreamException {
  private static final long serialVersionUID = 1L;

  public InvalidRuleException(String message) {
    super(message);
  }
}
