package io.fraudstream.evaluator.core;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * One transactions-topic record: its JSON fields plus where and when Kafka ingested it (port of
 * transactions.Transaction).
 *
 * <p>{@link #parse} either returns a Transaction or throws an {@link InvalidTransactionException} with the DLQ error
 * and the detail Python's twin gives: {@code unparseable} (empty value, invalid UTF-8, not JSON, beyond the JSON
 * limits) or {@code invalid} (not an object; eventTime missing, not an integer or outside [0, 2^63)). {@code
 * eventTime} must be a JSON number with an integral value (strings and booleans are refused).
 */
public final class Transaction {
  private static final BigDecimal MAX_EVENT_TIME_MS = BigDecimal.valueOf(Long.MAX_VALUE);

  private final Map<String, Object> fields;
  private final byte[] raw;
  private final long eventTimeMs;
  private final long ingestTsMs;
  private final int partition;
  private final long offset;

  private Transaction(
      Map<String, Object> fields, byte[] raw, long eventTimeMs, long ingestTsMs, int partition, long offset) {
    this.fields = fields;
    this.raw = raw;
    this.eventTimeMs = eventTimeMs;
    this.ingestTsMs = ingestTsMs;
    this.partition = partition;
    this.offset = offset;
  }

  /** Read a transactions-topic record value. */
  public static Transaction parse(byte[] value, long ingestTsMs, int partition, long offset)
      throws InvalidTransactionException {
    if (value == null || value.length == 0) {
      throw new InvalidTransactionException(DeadLetters.Error.UNPARSEABLE, "empty record value");
    }
    Object parsed;
    try {
      parsed = Json.parse(value);
    } catch (JsonValueException exc) {
      throw new InvalidTransactionException(DeadLetters.Error.UNPARSEABLE, DeadLetters.bounded(exc.getMessage()));
    }
    if (!(parsed instanceof Map<?, ?>)) {
      throw invalid("not a JSON object but " + jsonKind(parsed));
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> fields = Collections.unmodifiableMap((Map<String, Object>) parsed);
    return new Transaction(fields, value.clone(), eventTimeMs(fields), ingestTsMs, partition, offset);
  }

  private static InvalidTransactionException invalid(String detail) {
    return new InvalidTransactionException(DeadLetters.Error.INVALID, DeadLetters.bounded(detail));
  }

  private static String jsonKind(Object value) {
    if (value == null) {
      return "null";
    } else if (value instanceof List<?>) {
      return "an array";
    } else if (value instanceof String) {
      return "a string";
    } else if (value instanceof Boolean) {
      return "a boolean";
    }
    return "a number";
  }

  private static long eventTimeMs(Map<String, Object> fields) throws InvalidTransactionException {
    if (!fields.containsKey("eventTime")) {
      throw invalid("missing eventTime");
    }
    Object value = fields.get("eventTime");
    BigDecimal number = value instanceof String ? null : Decimals.asNumber(value);
    if (number == null || !Decimals.isIntegral(number)) {
      throw invalid("eventTime is not an integer: " + DeadLetters.preview(value));
    }
    if (number.signum() < 0 || number.compareTo(MAX_EVENT_TIME_MS) > 0) {
      throw invalid("eventTime is outside [0, 2^63): " + DeadLetters.preview(value));
    }
    return number.longValueExact();
  }

  /** The amount in field {@code name}, or null when there is none ({@link #skipReason} says why). */
  public static BigDecimal amountOf(Map<String, Object> fields, String name) {
    return fields.containsKey(name) ? Decimals.asAmount(fields.get(name)) : null;
  }

  /** Why field {@code name} holds no amount; null if it does. */
  public static SkipReason skipReason(Map<String, Object> fields, String name) {
    if (!fields.containsKey(name)) {
      return SkipReason.MISSING;
    }
    Object value = fields.get(name);
    if (Decimals.asAmount(value) != null) {
      return null;
    }
    return Decimals.asNumber(value) != null ? SkipReason.OUT_OF_RANGE : SkipReason.NON_NUMERIC;
  }

  /** The parsed fields (unmodifiable; see {@link Json} for the value types). */
  public Map<String, Object> fields() {
    return fields;
  }

  /** {@code transactionId} as text; "partition:offset" when missing, empty or not a string/integer. */
  public String transactionId() {
    Object value = fields.get("transactionId");
    if (value instanceof String s && !s.isEmpty()) {
      return s;
    }
    if (value instanceof BigInteger i) {
      return i.toString();
    }
    return partition + ":" + offset;
  }

  public long eventTimeMs() {
    return eventTimeMs;
  }

  public long ingestTsMs() {
    return ingestTsMs;
  }

  public int partition() {
    return partition;
  }

  public long offset() {
    return offset;
  }

  /** The record value as received (a copy). */
  public byte[] raw() {
    return raw.clone();
  }

  String rawText() {
    return new String(raw, java.nio.charset.StandardCharsets.UTF_8);
  }
}
