package io.fraudstream.evaluator.spark;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.spark.sql.Row;

/**
 * One Kafka record from the transactions or the rules topic, as the evaluator's stateful step receives it.
 *
 * <p>The input rows carry the columns {@code rule, key, value, topic, partition, offset, timestamp_ms, bucket} in
 * that order ({@link Evaluation#INPUT_COLUMNS}).
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

  /**
   * Evaluation order (CONTRACT section 6): Kafka timestamp (ingestion time), rules before transactions, then topic,
   * partition, offset.
   */
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

  /** The record as bytes, for state ({@link #fromBytes} reads it back). */
  byte[] toBytes() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeBoolean(isRule);
      writeBlob(out, key);
      writeBlob(out, value);
      out.writeUTF(topic);
      out.writeInt(partition);
      out.writeLong(offset);
      out.writeLong(timestampMs);
    } catch (IOException exc) {
      throw new UncheckedIOException(exc);
    }
    return bytes.toByteArray();
  }

  static InputRecord fromBytes(byte[] data) {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(data))) {
      return new InputRecord(
          in.readBoolean(), readBlob(in), readBlob(in), in.readUTF(), in.readInt(), in.readLong(), in.readLong());
    } catch (IOException exc) {
      throw new UncheckedIOException(exc);
    }
  }

  private static void writeBlob(DataOutputStream out, byte[] blob) throws IOException {
    out.writeInt(blob == null ? -1 : blob.length);
    if (blob != null) {
      out.write(blob);
    }
  }

  private static byte[] readBlob(DataInputStream in) throws IOException {
    int length = in.readInt();
    return length < 0 ? null : in.readNBytes(length);
  }
}
