package io.fraudstream.evaluator.core;

/** The text is not JSON the core accepts (port of json_values.JsonValueError); the message is the parser's. */
public final class JsonValueException extends FraudstreamException {
  private static final long serialVersionUID = 1L;

  public JsonValueException(String message, Throwable cause) {
    super(message, cause);
  }
}
