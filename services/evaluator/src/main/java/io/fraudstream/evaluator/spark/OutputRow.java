package io.fraudstream.evaluator.spark;

import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * One output of the evaluator: an alert for the alerts topic, or a record for the DLQ with its reason and origin.
 *
 * @param key the Kafka key to write (the rule id of an alert, the original key of a DLQ record)
 * @param transactionTsMs the Kafka timestamp of the transaction the output is about
 */
record OutputRow(
    boolean isAlert,
    byte[] key,
    byte[] value,
    String ruleId,
    long transactionTsMs,
    String error,
    String sourceTopic,
    int sourcePartition,
    long sourceOffset) {

  static final StructType SCHEMA =
      new StructType()
          .add("alert", DataTypes.BooleanType, false)
          .add("key", DataTypes.BinaryType)
          .add("value", DataTypes.BinaryType)
          .add("rule_id", DataTypes.StringType)
          .add("transaction_ts_ms", DataTypes.LongType, false)
          .add("error", DataTypes.StringType)
          .add("source_topic", DataTypes.StringType)
          .add("source_partition", DataTypes.IntegerType, false)
          .add("source_offset", DataTypes.LongType, false);

  static OutputRow alert(byte[] ruleIdKey, byte[] value, String ruleId, long transactionTsMs) {
    return new OutputRow(true, ruleIdKey, value, ruleId, transactionTsMs, null, null, 0, 0);
  }

  static OutputRow dlq(InputRecord record, String error) {
    return new OutputRow(
        false, record.key(), record.value(), null, record.timestampMs(), error, record.topic(), record.partition(),
        record.offset());
  }

  Row toRow() {
    return RowFactory.create(
        isAlert, key, value, ruleId, transactionTsMs, error, sourceTopic, sourcePartition, sourceOffset);
  }

  static OutputRow of(Row row) {
    return new OutputRow(
        row.getBoolean(0),
        (byte[]) row.get(1),
        (byte[]) row.get(2),
        row.getString(3),
        row.getLong(4),
        row.getString(5),
        row.getString(6),
        row.getInt(7),
        row.getLong(8));
  }
}
