package io.fraudstream.evaluator.core;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Collections;
import java.util.Map;

/**
 * One transactions-topic record: its JSON fields plus where and when Kafka ingested it (port of
 * transactions.Transaction).
 *
 * <p>{@link #parse} either returns a Transaction or throws an {@link InvalidTransactionException} whose reason is the
 * DLQ {@code error} header: "empty value", "unparseable: &lt;detail&gt;", "not a JSON object", "missing eventTime",
 * "non-integer eventTime: &lt;repr&gt;", "out-of-range eventTime: &lt;repr&gt;". {@code eventTime} must be a JSON
 * number with an integral value in [0, 2^63) (strings and booleans are refused).
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
      throw new InvalidTransactionException("empty value");
    }
    Object parsed;
    try {
      parsed = Json.parse(value);
    } catch (JsonValueException exc) {
      throw new InvalidTransactionException("unparseable: " + exc.getMessage());
    }
    if (!(parsed instanceof Map<?, ?>)) {
      throw new InvalidTransactionException("not a JSON object");
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> fields = Collections.unmodifiableMap((Map<String, Object>) parsed);
    return new Transaction(fields, value.clone(), eventTimeMs(fields), ingestTsMs, partition, offset);
  }

  private static long eventTimeMs(Map<String, Object> fields) throws InvalidTransactionException {
    if (!fields.containsKey("eventTime")) {
      throw new InvalidTransactionException("missing eventTime");
    }
    Object value = fields.get("eventTime");
    BigDecimal number = value instanceof String ? null : Decimals.asNumber(value);
    if (number == null || !Decimals.isIntegral(number)) {
      throw new InvalidTransactionException("non-integer eventTime: " + PyRepr.repr(value));
    }
    if (number.signum() < 0 || number.compareTo(MAX_EVENT_TIME_MS) > 0) {
      throw new InvalidTransactionException("out-of-range eventTime: " + PyRepr.repr(value));
    }
    return number.longValueExact();
  }

  /** The amount in field {@code name}; else "missing NAME", "out-of-range NAME: repr", "non-numeric NAME: repr". */
  public static BigDecimal numericValue(Map<String, Object> fields, String name)
      throws InvalidTransactionException {
    if (!fields.containsKey(name)) {
      throw new InvalidTransactionException("missing " + name);
    }
    Object value = fields.get(name);
    BigDecimal amount = Decimals.asAmount(value);
    if (amount == null) {
      if (Decimals.asNumber(value) != null) {
        throw new InvalidTransactionException("out-of-range " + name + ": " + PyRepr.repr(value));
      }
      throw new InvalidTransactionException("non-numeric " + name + ": " + PyRepr.repr(value));
    }
    return amount;
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
