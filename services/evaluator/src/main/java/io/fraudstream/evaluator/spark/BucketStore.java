package io.fraudstream.evaluator.spark;

import io.fraudstream.evaluator.core.GroupRows;
import java.nio.ByteBuffer;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.streaming.MapState;
import org.apache.spark.sql.streaming.StatefulProcessorHandle;
import org.apache.spark.sql.streaming.TTLConfig;

/**
 * One bucket's state in Spark's state store: three state variables, and the views the evaluator reads and writes
 * them through.
 *
 * <p>Why three: a task declares every state variable when it starts, and on the evaluating JVM each declaration
 * costs tens of milliseconds (Spark builds its encoders and projections; measured 17-171 ms each, 258-428 ms for the
 * eight variables of the previous layout), which every batch transition waited for. So what is only ever read by key
 * shares one map, and the variables are:
 *
 * <ul>
 *   <li>MapState {@value #HEADS}: group key to the group's window head ({@link GroupRows}); the only one the
 *       sweep walks, so it holds nothing else;
 *   <li>MapState {@value #ROWS}, by tagged keys: the generation ({@value #GENERATION_ROW}), the rule set ({@value
 *       #ENGINE_ROW}), the last rules offset applied per partition ({@value #OFFSET_TAG} + partition), and the
 *       groups' event and bucket rows ({@value #EVENT_TAG} or {@value #BUCKET_TAG} + the row's {@link GroupRows} key);
 *   <li>MapState {@value #PENDING}: records held across tasks under sequence numbers, the reorder wait's ({@link
 *       #held}) and the rules catch-up's ({@link #awaitingRules}) in two halves of its keys.
 * </ul>
 */
final class BucketStore {
  static final String HEADS = "heads";
  static final String ROWS = "rows";
  static final String PENDING = "pending";
  static final String GENERATION_ROW = "g";
  static final String ENGINE_ROW = "r";
  static final char OFFSET_TAG = 'o';
  static final char EVENT_TAG = 'e';
  static final char BUCKET_TAG = 'b';

  private final MapState<String, byte[]> heads;
  private final MapState<String, byte[]> rows;
  private final MapState<Long, byte[]> pending;
  private final GroupRows groupRows;

  BucketStore(MapState<String, byte[]> heads, MapState<String, byte[]> rows, MapState<Long, byte[]> pending) {
    this.heads = heads;
    this.rows = rows;
    this.pending = pending;
    this.groupRows =
        new GroupRows(
            GroupRows.Table.of(heads::getValue, heads::updateValue, heads::removeKey),
            tagged(EVENT_TAG),
            tagged(BUCKET_TAG));
  }

  /** Declares the bucket's state variables; call it from the processor's {@code init}. */
  static BucketStore declare(StatefulProcessorHandle handle) {
    return new BucketStore(
        handle.getMapState(HEADS, Encoders.STRING(), Encoders.BINARY(), TTLConfig.NONE()),
        handle.getMapState(ROWS, Encoders.STRING(), Encoders.BINARY(), TTLConfig.NONE()),
        handle.getMapState(PENDING, Encoders.LONG(), Encoders.BINARY(), TTLConfig.NONE()));
  }

  /** The generation the bucket's last committed task claimed ({@link BucketState#claim}); 0 if none. */
  long generation() {
    Long stored = longOf(rows.getValue(GENERATION_ROW));
    return stored == null ? 0L : stored;
  }

  void setGeneration(long generation) {
    rows.updateValue(GENERATION_ROW, longBytes(generation));
  }

  /** The rule set as last written ({@link io.fraudstream.evaluator.core.Engine#toBytes}); null if none was. */
  byte[] engine() {
    return rows.getValue(ENGINE_ROW);
  }

  void setEngine(byte[] engine) {
    rows.updateValue(ENGINE_ROW, engine);
  }

  /** The offset of the last rules record of {@code partition} the bucket applied; null if none. */
  Long rulesOffset(int partition) {
    return longOf(rows.getValue(offsetRow(partition)));
  }

  void setRulesOffset(int partition, long offset) {
    rows.updateValue(offsetRow(partition), longBytes(offset));
  }

  private static String offsetRow(int partition) {
    return OFFSET_TAG + Integer.toString(partition);
  }

  /** The group heads, group key to head. */
  MapState<String, byte[]> heads() {
    return heads;
  }

  /** The groups' windows as rows: the heads, and the event and bucket rows under their tags. */
  GroupRows groupRows() {
    return groupRows;
  }

  /** The records the reorder wait holds ({@link HeldRecords}). */
  PendingRecords held() {
    return new PendingRecords(pending, false);
  }

  /** The records the rules catch-up holds ({@link RulesCatchUp}). */
  PendingRecords awaitingRules() {
    return new PendingRecords(pending, true);
  }

  /** The rows under {@code tag}, by their untagged keys. */
  GroupRows.Table tagged(char tag) {
    return GroupRows.Table.of(
        key -> rows.getValue(tag + key),
        (key, value) -> rows.updateValue(tag + key, value),
        key -> rows.removeKey(tag + key));
  }

  /** A long as a row's value ({@link #longOf} reads it back). */
  static byte[] longBytes(long value) {
    return ByteBuffer.allocate(Long.BYTES).putLong(value).array();
  }

  /** The long a row's value holds; null for no row. */
  static Long longOf(byte[] value) {
    return value == null ? null : ByteBuffer.wrap(value).getLong();
  }
}
