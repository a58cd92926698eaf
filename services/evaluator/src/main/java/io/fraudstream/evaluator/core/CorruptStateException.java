package io.fraudstream.evaluator.core;

/** Serialized engine or group state cannot be read back (unchecked: state is written by this code only). */
public final class CorruptStateException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public CorruptStateException(String message) {
    super(message);
  }

  public CorruptStateException(String message, Throwable cause) {
    super(message, cause);
  }
}
