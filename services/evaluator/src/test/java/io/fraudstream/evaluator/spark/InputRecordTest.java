package io.fraudstream.evaluator.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class InputRecordTest {
  @Test
  void recordsAreOrderedByTimestampRulesFirstThenTopicPartitionOffset() {
    InputRecord ruleAt10 = Records.rule(0, 5, 10, "ns/r", "{}");
    InputRecord txAt10 = Records.tx(0, 0, 10, "{}");
    InputRecord txAt10Partition1 = Records.tx(1, 0, 10, "{}");
    InputRecord txAt10Offset1 = Records.tx(1, 1, 10, "{}");
    InputRecord txAt9 = Records.tx(3, 9, 9, "{}");
    List<InputRecord> records = new ArrayList<>(List.of(txAt10Offset1, ruleAt10, txAt10Partition1, txAt10, txAt9));
    records.sort(InputRecord::compare);
    assertEquals(List.of(txAt9, ruleAt10, txAt10, txAt10Partition1, txAt10Offset1), records);
  }

  @Test
  void aRecordRoundTripsThroughItsBytes() {
    InputRecord record = Records.rule(2, 1L << 40, -5, "ns/caf\u00e9", "{\"x\": 1}");
    InputRecord back = InputRecord.fromBytes(record.toBytes());
    assertEquals(record.isRule(), back.isRule());
    assertArrayEquals(record.key(), back.key());
    assertArrayEquals(record.value(), back.value());
    assertEquals(List.of(record.topic(), record.partition(), record.offset(), record.timestampMs()),
        List.of(back.topic(), back.partition(), back.offset(), back.timestampMs()));
    InputRecord tombstone = InputRecord.fromBytes(Records.rule(0, 0, 0, "ns/r", null).toBytes());
    assertNull(tombstone.value());
    InputRecord empty = InputRecord.fromBytes(Records.tx(0, 0, 0, "").toBytes());
    assertNull(empty.key());
    assertEquals("", new String(empty.value(), StandardCharsets.UTF_8), "empty is not null");
  }
}
