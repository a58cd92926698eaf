package io.fraudstream.evaluator.spark;

import org.apache.spark.sql.Row;

/**
 * One Kafka record from the transactions or the rules topic, as the evaluator's stateful step receives it.
 *
 * <p>The input rows carry the columns {@code rule, key, value, topic, partition, offset, timestamp_ms, bucket} in
 * that order (see {@link RealTimeDetector}).
 */
record InputRecord(
    boolean isRule, byte[] key, byte[] value, String topic, int partition, long offset, long timestampMs) {

  static InputRecord of(Row row) {
    return new InputRecord(
        row.getBoolean(0),
        (byte[]) row.get(1),
        (byte[]) row.get(2),
        row.getString(3),
        row.getInt(4),
        row.getLong(5),
        row.getLong(6));
  }

  /** Processing order within one call: Kafka timestamp, rules before transactions, then topic, partition, offset. */
  static int compare(InputRecord a, InputRecord b) {
    int order = Long.compare(a.timestampMs, b.timestampMs);
    if (order == 0) {
      order = Boolean.compare(b.isRule, a.isRule);
    }
    if (order == 0) {
      order = a.topic.compareTo(b.topic);
    }
    if (order == 0) {
      order = Integer.compare(a.partition, b.partition);
    }
    return order != 0 ? order : Long.compare(a.offset, b.offset);
  }
}
