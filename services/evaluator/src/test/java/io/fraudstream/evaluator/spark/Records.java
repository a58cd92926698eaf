package io.fraudstream.evaluator.spark;

import java.nio.charset.StandardCharsets;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;

/** Input rows as the detector's query feeds them to the bucket step, and the rule and transaction JSON they carry. */
final class Records {
  static final String RULES = "rules";
  static final String TRANSACTIONS = "transactions";

  private Records() {}

  private static byte[] utf8(String text) {
    return text == null ? null : text.getBytes(StandardCharsets.UTF_8);
  }

  /** A rules-topic record at {@code rules:partition:offset}; a null {@code value} is a tombstone. */
  static InputRecord rule(int partition, long offset, long timestampMs, String ruleId, String value) {
    return new InputRecord(true, utf8(ruleId), utf8(value), RULES, partition, offset, timestampMs);
  }

  /** A transactions-topic record at {@code transactions:partition:offset}. */
  static InputRecord tx(int partition, long offset, long timestampMs, String value) {
    return new InputRecord(false, null, utf8(value), TRANSACTIONS, partition, offset, timestampMs);
  }

  /** The row of {@code record} as the bucket step receives it: its columns and then the bucket's. */
  static Row row(InputRecord record, int bucket) {
    return RowFactory.create(
        record.isRule(),
        record.key(),
        record.value(),
        record.topic(),
        record.partition(),
        record.offset(),
        record.timestampMs(),
        bucket);
  }

  /** Rule JSON of a COUNT rule: alerts when at least {@code limit} transactions of a payer are in the window. */
  static String countRule(String ruleId, int windowMinutes, int limit) {
    return countRule(ruleId, "payerId", windowMinutes, limit);
  }

  /** Rule JSON of a COUNT rule grouped by the one field {@code groupingKeyName}. */
  static String countRule(String ruleId, String groupingKeyName, int windowMinutes, int limit) {
    return "{\"ruleId\": \"" + ruleId + "\", \"generation\": 1, \"uid\": \"uid-" + ruleId + "\", \"spec\": "
        + "{\"groupingKeyNames\": [\"" + groupingKeyName + "\"], \"aggregatorFunctionType\": \"COUNT\", "
        + "\"limitOperatorType\": \"GREATER_EQUAL\", \"limit\": " + limit + ", \"windowMinutes\": " + windowMinutes
        + "}}";
  }

  /** Transaction JSON of payer {@code payerId}; payers p1 and p3 fall into buckets 1 and 0 of 2. */
  static String transaction(String transactionId, String payerId, long eventTimeMs) {
    return "{\"transactionId\": \"" + transactionId + "\", \"eventTime\": " + eventTimeMs + ", \"payerId\": \""
        + payerId + "\", \"paymentAmount\": \"10.00\"}";
  }
}
