package io.fraudstream.evaluator.spark;

import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.spark.sql.streaming.MapState;

/**
 * Records a bucket holds across tasks under sequence numbers (0 and up), in one half of the keys of its {@code
 * pending} map ({@link BucketStore}): the non-negative keys, or the negative ones, so that two holders share the map
 * without seeing each other's records.
 */
final class PendingRecords {
  private final MapState<Long, byte[]> pending;
  private final boolean negative;

  PendingRecords(MapState<Long, byte[]> pending, boolean negative) {
    this.pending = pending;
    this.negative = negative;
  }

  /** The records held, by sequence number, in sequence order. */
  SortedMap<Long, InputRecord> readAll() {
    SortedMap<Long, InputRecord> records = new TreeMap<>();
    scala.collection.Iterator<scala.Tuple2<Long, byte[]>> entries = pending.iterator();
    while (entries.hasNext()) {
      scala.Tuple2<Long, byte[]> entry = entries.next();
      long key = entry._1();
      if (key < 0 == negative) {
        records.put(seq(key), InputRecord.fromBytes(entry._2()));
      }
    }
    return records;
  }

  void put(long seq, InputRecord record) {
    pending.updateValue(key(seq), record.toBytes());
  }

  void remove(long seq) {
    pending.removeKey(key(seq));
  }

  private long key(long seq) {
    if (seq < 0) {
      throw new IllegalArgumentException("a sequence number is 0 or more, got " + seq);
    }
    return negative ? -1 - seq : seq;
  }

  private long seq(long key) {
    return negative ? -1 - key : key;
  }
}
