package io.fraudstream.evaluator.spark;

import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * One output of the evaluator about one transaction record (its origin in {@code source*}).
 *
 * <p>The bucket step emits alerts, DLQ records for rejected transactions, and per-transaction parts that the
 * report step ({@link TransactionReports}) turns into at most one report per transaction whatever the number of
 * buckets that saw it: {@code LATE} (the transaction was late for a group of this bucket; the report is its DLQ
 * record) and {@code OUT_OF_ORDER}. The writer receives only alerts and DLQ records.
 *
 * @param key the Kafka key to write (the rule id of an alert, the original key of a DLQ record)
 * @param transactionTsMs the Kafka timestamp of the transaction the output is about
 */
record OutputRow(
    Kind kind,
    byte[] key,
    byte[] value,
    String ruleId,
    long transactionTsMs,
    String error,
    String detail,
    String sourceTopic,
    int sourcePartition,
    long sourceOffset) {

  enum Kind {
    ALERT,
    DLQ,
    LATE,
    OUT_OF_ORDER
  }

  static final StructType SCHEMA =
      new StructType()
          .add("kind", DataTypes.StringType, false)
          .add("key", DataTypes.BinaryType)
          .add("value", DataTypes.BinaryType)
          .add("rule_id", DataTypes.StringType)
          .add("transaction_ts_ms", DataTypes.LongType, false)
          .add("error", DataTypes.StringType)
          .add("detail", DataTypes.StringType)
          .add("source_topic", DataTypes.StringType)
          .add("source_partition", DataTypes.IntegerType, false)
          .add("source_offset", DataTypes.LongType, false);

  static OutputRow alert(InputRecord record, String ruleId, byte[] value) {
    return new OutputRow(
        Kind.ALERT,
        ruleId.getBytes(java.nio.charset.StandardCharsets.UTF_8),
        value,
        ruleId,
        record.timestampMs(),
        null,
        null,
        record.topic(),
        record.partition(),
        record.offset());
  }

  static OutputRow dlq(InputRecord record, String error, String detail) {
    return about(Kind.DLQ, record, error, detail);
  }

  /** The transaction was late for a group of this bucket; {@code detail} says which and by how much. */
  static OutputRow late(InputRecord record, String detail) {
    return about(Kind.LATE, record, "late", detail);
  }

  static OutputRow outOfOrder(InputRecord record) {
    return new OutputRow(
        Kind.OUT_OF_ORDER, null, null, null, record.timestampMs(), null, null, record.topic(), record.partition(),
        record.offset());
  }

  private static OutputRow about(Kind kind, InputRecord record, String error, String detail) {
    return new OutputRow(
        kind, record.key(), record.value(), null, record.timestampMs(), error, detail, record.topic(),
        record.partition(), record.offset());
  }

  /** The DLQ record that reports a late transaction (a LATE part turned into its one report). */
  OutputRow asDeadLetter() {
    return new OutputRow(
        Kind.DLQ, key, value, null, transactionTsMs, error, detail, sourceTopic, sourcePartition, sourceOffset);
  }

  /** This output without its key and value: what to keep of it while it is in flight. */
  OutputRow withoutPayload() {
    return new OutputRow(
        kind, null, null, ruleId, transactionTsMs, error, detail, sourceTopic, sourcePartition, sourceOffset);
  }

  /** Where the transaction came from, for logs: topic:partition:offset. */
  String coordinates() {
    return sourceTopic + ":" + sourcePartition + ":" + sourceOffset;
  }

  Row toRow() {
    return RowFactory.create(
        kind.name(), key, value, ruleId, transactionTsMs, error, detail, sourceTopic, sourcePartition, sourceOffset);
  }

  /** Reads the first columns of {@code row} (those of {@link #SCHEMA}; later ones are ignored). */
  static OutputRow of(Row row) {
    return new OutputRow(
        Kind.valueOf(row.getString(0)),
        (byte[]) row.get(1),
        (byte[]) row.get(2),
        row.getString(3),
        row.getLong(4),
        row.getString(5),
        row.getString(6),
        row.getString(7),
        row.getInt(8),
        row.getLong(9));
  }
}
