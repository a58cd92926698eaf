package io.fraudstream.evaluator.core;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

/**
 * One rule firing for one transaction (port of alerts.Alert); times are epoch milliseconds.
 *
 * <p>{@link #toMessageValue()} is the CONTRACT section 5 JSON: camelCase keys, {@code aggregateValue} and {@code
 * limit} canonical decimal strings, {@code aggregateFieldName} null for COUNT, {@code transaction} the record value as
 * received, numbers written with the digits they arrived with. {@link #alertId(String, String)} is Python's
 * {@code alert_id}: the same UUIDv5 for the same (rule, transaction).
 */
public final class Alert {
  private static final UUID NAMESPACE_URL = UUID.fromString("6ba7b811-9dad-11d1-80b4-00c04fd430c8");
  private static final UUID ALERT_NAMESPACE = uuid5(NAMESPACE_URL, "https://fraudstream.io/alert");

  private final String alertId;
  private final String ruleId;
  private final BigInteger ruleGeneration;
  private final Map<String, Object> groupingKey;
  private final AggregatorFunction aggregator;
  private final String aggregateFieldName;
  private final BigDecimal aggregateValue;
  private final LimitOperator limitOperator;
  private final BigDecimal limit;
  private final int windowMinutes;
  private final String transactionId;
  private final String transactionJson;
  private final long transactionTimestampMs;
  private final long detectedAtMs;

  Alert(Rule rule, Map<String, Object> groupingKey, BigDecimal aggregateValue, Transaction tx, long detectedAtMs) {
    RuleSpec spec = rule.spec();
    this.ruleId = rule.ruleId();
    this.transactionId = tx.transactionId();
    this.alertId = alertId(ruleId, transactionId);
    this.ruleGeneration = rule.generation();
    this.groupingKey = Collections.unmodifiableMap(new LinkedHashMap<>(groupingKey));
    this.aggregator = spec.aggregator();
    this.aggregateFieldName = spec.aggregateFieldName();
    this.aggregateValue = aggregateValue;
    this.limitOperator = spec.limitOperator();
    this.limit = spec.limit();
    this.windowMinutes = spec.windowMinutes();
    this.transactionJson = tx.rawText().strip();
    this.transactionTimestampMs = tx.ingestTsMs();
    this.detectedAtMs = detectedAtMs;
  }

  /** Deterministic id of the alert rule {@code ruleId} raises for transaction {@code transactionId}. */
  public static String alertId(String ruleId, String transactionId) {
    StringBuilder name = new StringBuilder("[");
    Json.quote(ruleId, true, name);
    name.append(", ");
    Json.quote(transactionId, true, name);
    name.append(']');
    return uuid5(ALERT_NAMESPACE, name.toString()).toString();
  }

  private static UUID uuid5(UUID namespace, String name) {
    MessageDigest sha1;
    try {
      sha1 = MessageDigest.getInstance("SHA-1");
    } catch (NoSuchAlgorithmException exc) {
      throw new IllegalStateException(exc);
    }
    ByteBuffer ns = ByteBuffer.allocate(16);
    ns.putLong(namespace.getMostSignificantBits()).putLong(namespace.getLeastSignificantBits());
    sha1.update(ns.array());
    byte[] hash = sha1.digest(name.getBytes(StandardCharsets.UTF_8));
    hash[6] = (byte) ((hash[6] & 0x0f) | 0x50);
    hash[8] = (byte) ((hash[8] & 0x3f) | 0x80);
    ByteBuffer bytes = ByteBuffer.wrap(hash, 0, 16);
    return new UUID(bytes.getLong(), bytes.getLong());
  }

  public String alertId() {
    return alertId;
  }

  public String ruleId() {
    return ruleId;
  }

  public BigInteger ruleGeneration() {
    return ruleGeneration;
  }

  /** Grouping field name to the transaction's value, in key-group order. */
  public Map<String, Object> groupingKey() {
    return groupingKey;
  }

  public AggregatorFunction aggregator() {
    return aggregator;
  }

  public String aggregateFieldName() {
    return aggregateFieldName;
  }

  public BigDecimal aggregateValue() {
    return aggregateValue;
  }

  public LimitOperator limitOperator() {
    return limitOperator;
  }

  public BigDecimal limit() {
    return limit;
  }

  public int windowMinutes() {
    return windowMinutes;
  }

  public String transactionId() {
    return transactionId;
  }

  public long transactionTimestampMs() {
    return transactionTimestampMs;
  }

  public long detectedAtMs() {
    return detectedAtMs;
  }

  /** The alert JSON as text (see the class comment). */
  public String toJsonText() {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("alertId", alertId);
    json.put("ruleId", ruleId);
    json.put("ruleGeneration", ruleGeneration);
    json.put("groupingKey", groupingKey);
    json.put("aggregatorFunctionType", aggregator.name());
    json.put("aggregateFieldName", aggregateFieldName);
    json.put("aggregateValue", Decimals.canonical(aggregateValue));
    json.put("limitOperatorType", limitOperator.name());
    json.put("limit", Decimals.canonical(limit));
    json.put("windowMinutes", windowMinutes);
    json.put("transactionId", transactionId);
    json.put("transaction", new Json.RawJson(transactionJson));
    json.put("transactionTimestamp", transactionTimestampMs);
    json.put("detectedAt", detectedAtMs);
    return Json.write(json);
  }

  /** Compact UTF-8 JSON for the alerts topic. */
  public byte[] toMessageValue() {
    return toJsonText().getBytes(StandardCharsets.UTF_8);
  }
}
