package io.fraudstream.evaluator.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayOutputStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class EventCodecTest {
  private static StoredEvent event(List<Object> values) {
    return new StoredEvent(7, 1_700_000_000_000L, -3, 2, Long.MAX_VALUE, 9, values);
  }

  @Test
  void everyValueKindRoundTripsExactly() {
    Map<String, Object> object = new LinkedHashMap<>();
    object.put("z", List.of(BigInteger.ONE));
    object.put("a", null);
    List<Object> values =
        Arrays.asList(
            Missing.MISSING,
            null,
            true,
            false,
            "",
            "caf\u00e9 \ud83d\ude00",
            "lone \ud800 and \udc00",
            new BigInteger("-123456789012345678901234567890"),
            new BigDecimal("0.10"),
            new BigDecimal("-1E+400"),
            new BigDecimal("123.4500"),
            List.of(List.of(), "x"),
            object);
    StoredEvent event = event(values);
    StoredEvent decoded = EventCodec.decode(EventCodec.encode(event));
    assertEquals(event, decoded);
    assertEquals(2, ((BigDecimal) decoded.values().get(8)).scale(), "decimals keep their scale");
    assertEquals(4, ((BigDecimal) decoded.values().get(10)).scale());
    assertEquals(List.of("z", "a"), List.copyOf(((Map<?, ?>) decoded.values().get(12)).keySet()));
    assertEquals(Missing.MISSING, decoded.values().get(0), "MISSING stays distinct from JSON null");
    assertEquals(null, decoded.values().get(1));
    for (int i = 0; i < event.size(); i++) {
      assertEquals(event.number(i), decoded.number(i), "derived numbers follow the values");
      assertEquals(event.amount(i), decoded.amount(i), "derived amounts follow the values");
    }
  }

  @Test
  void rowsLongerThanTheWritersFirstBufferRoundTrip() {
    List<Object> many = new java.util.ArrayList<>();
    for (int i = 0; i < 300; i++) {
      many.add(BigInteger.valueOf(i * 1_000_003L)); // a tag, a length and a short blob each: several doublings
    }
    // ... and then a blob longer than twice the buffer grown so far
    StoredEvent event = event(Arrays.asList(many, "x".repeat(100_000), "tail"));
    byte[] encoded = EventCodec.encode(event);
    assertEquals(event, EventCodec.decode(encoded));
    assertArrayEquals(encoded, EventCodec.encode(EventCodec.decode(encoded)), "re-encoding writes the same bytes");
  }

  @Test
  void extremeCoordinatesRoundTrip() {
    StoredEvent event = new StoredEvent(Long.MAX_VALUE, 0, Long.MIN_VALUE, Integer.MAX_VALUE, -1, 0, List.of());
    assertEquals(event, EventCodec.decode(EventCodec.encode(event)));
  }

  @Test
  void aHeadRoundTrips() {
    StoredEvent stored = event(List.of("x"));
    GroupWindow.BucketsOf hourly = new GroupWindow.BucketsOf(3, 3_600_000L);
    GroupWindow.BucketsOf daily = new GroupWindow.BucketsOf(9, 3_600_000L);
    GroupWindow.BucketsOf minutes = new GroupWindow.BucketsOf(4, 60_000L);
    Bucket bucket = new Bucket(new BigDecimal("-1.50"), 2, new BigDecimal("-2"), BigDecimal.ONE);
    GroupWindow window =
        GroupWindow.restore(
            List.of("f\u00e9"),
            List.of(stored),
            1_700_000_000_000L,
            null,
            8,
            5L,
            Map.of(
                hourly, new TreeMap<>(Map.of(-4L, bucket, 472_222L, bucket)),
                daily, new TreeMap<>(Map.of(472_223L, bucket)),
                minutes, new TreeMap<>(Map.of(7L, bucket))));
    EventCodec.Head head = EventCodec.decodeHead(EventCodec.encodeHead(window));
    List<GroupWindow.BucketSpan> spans =
        List.of(new GroupWindow.BucketSpan(60_000L, 7, 7), new GroupWindow.BucketSpan(3_600_000L, -4L, 472_223L));
    assertEquals(
        new EventCodec.Head(List.of("f\u00e9"), 1_700_000_000_000L, null, 8, 7, 5L, spans, List.of()), head);
    GroupWindow empty = new GroupWindow(List.of());
    assertEquals(
        new EventCodec.Head(List.of(), null, null, 0, 0, null, List.of(), List.of()),
        EventCodec.decodeHead(EventCodec.encodeHead(empty)));
  }

  @Test
  void aBucketSlotRoundTrips() {
    SortedMap<Long, Bucket> slot = new TreeMap<>();
    slot.put(3L, new Bucket(new BigDecimal("1E+3"), Long.MAX_VALUE, new BigDecimal("-0.000"), new BigDecimal("7.10")));
    slot.put(Long.MAX_VALUE, new Bucket(BigDecimal.ONE, 1, BigDecimal.ONE, BigDecimal.ONE));
    assertEquals(slot, EventCodec.decodeSlot(EventCodec.encodeSlot(slot)));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "00", "02", "0400", "0402", "040206", "04020607000201"})
  void malformedBucketSlotsAreCorruptState(String hex) {
    byte[] data = hexBytes(hex);
    assertThrows(CorruptStateException.class, () -> EventCodec.decodeSlot(data));
  }

  @Test
  void aBucketSlotNamingAWindowTwiceIsCorruptState() {
    SortedMap<Long, Bucket> slot = new TreeMap<>();
    slot.put(6L, new Bucket(BigDecimal.ONE, 1, BigDecimal.ONE, BigDecimal.ONE));
    byte[] once = EventCodec.encodeSlot(slot);
    ByteArrayOutputStream twice = new ByteArrayOutputStream();
    twice.write(once[0]);
    twice.write(4); // two windows
    twice.write(once, 2, once.length - 2);
    twice.write(once, 2, once.length - 2);
    assertThrows(CorruptStateException.class, () -> EventCodec.decodeSlot(twice.toByteArray()));
  }

  @Test
  void aBucketRoundTripsWithItsScales() {
    Bucket bucket = new Bucket(new BigDecimal("1E+3"), Long.MAX_VALUE, new BigDecimal("-0.000"), new BigDecimal("7.10"));
    assertEquals(bucket, EventCodec.decodeBucket(EventCodec.encodeBucket(bucket)));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "00", "04", "02", "020e02", "0201000201000201"})
  void malformedBucketsAreCorruptState(String hex) {
    byte[] data = hexBytes(hex);
    assertThrows(CorruptStateException.class, () -> EventCodec.decodeBucket(data));
  }

  @Test
  void anEmptyBucketIsCorruptState() {
    byte[] empty = EventCodec.encodeBucket(new Bucket(BigDecimal.ZERO, 0, BigDecimal.ONE, BigDecimal.ONE));
    assertThrows(CorruptStateException.class, () -> EventCodec.decodeBucket(empty));
  }

  /** The bytes of a head of the previous format (1), which had no maxIngestTsMs: written out field by field. */
  private static byte[] previousFormatHead() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(2); // format 1 (varints are zigzag encoded)
    out.write(2); // one field name
    out.write(4); // a UTF-8 string...
    byte[] name = "payerId".getBytes(StandardCharsets.UTF_8);
    out.write(name.length * 2); // ...of this many bytes
    out.writeBytes(name);
    out.write(1); // maxEventTimeMs present
    out.write(200); // 100, zigzag: two varint bytes
    out.write(1);
    out.write(0); // no floor
    out.write(10); // nextEventId 5
    out.write(6); // minLiveId 3
    return out.toByteArray();
  }

  @Test
  void aHeadOfThePreviousFormatReadsWithoutAnIngestionMaximum() {
    assertEquals(
        new EventCodec.Head(List.of("payerId"), 100L, null, 5, 3, null, List.of(), List.of()),
        EventCodec.decodeHead(previousFormatHead()));
  }

  @Test
  void aHeadOfFormat3ReadsTheSpansOfItsRuleWindowsBucketRows() {
    byte[] previous = previousFormatHead();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(6); // format 3
    out.write(previous, 1, previous.length - 1);
    out.write(0); // no maxIngestTsMs
    out.write(2); // one bucketed rule window:
    out.write(4); // its uid, a UTF-8 string
    out.write(2);
    out.write('u');
    out.write(14); // window start seq 7
    out.write(3); // window start time -2
    out.writeBytes(new byte[] {(byte) 0xc0, (byte) 0xb8, 0x02}); // precision 20 000 ms
    out.write(7); // first index -4
    out.write(20); // last index 10
    EventCodec.Head head = EventCodec.decodeHead(out.toByteArray());
    assertEquals(List.of(), head.buckets());
    assertEquals(
        List.of(new EventCodec.WindowBuckets(new GroupWindow.BucketsOf(7, 20_000L), -4, 10)), head.windowBuckets());
  }

  @Test
  void theCurrentFormatIsWhatTheEncoderWrites() {
    GroupWindow window = GroupWindow.restore(List.of("payerId"), List.of(), 100L, null, 5, null, Map.of());
    byte[] current = EventCodec.encodeHead(window);
    byte[] previous = previousFormatHead();
    assertEquals(8, current[0], "format 4");
    // The same fields (minLiveId is the next id when nothing is live), then an absent maxIngestTsMs, no buckets.
    assertArrayEquals(
        Arrays.copyOfRange(previous, 1, previous.length - 1), Arrays.copyOfRange(current, 1, previous.length - 1));
    assertEquals(10, current[previous.length - 1], "minLiveId = nextEventId = 5");
    assertEquals(0, current[previous.length]);
    assertEquals(0, current[previous.length + 1]);
    assertEquals(previous.length + 2, current.length);
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "00", "06", "02", "0201", "020e0000000000000000000000000000"})
  void malformedEventsAreCorruptState(String hex) {
    byte[] data = hexBytes(hex);
    assertThrows(CorruptStateException.class, () -> EventCodec.decode(data));
  }

  @Test
  void trailingBytesAreCorruptState() {
    byte[] data = EventCodec.encode(event(List.of("x")));
    byte[] longer = Arrays.copyOf(data, data.length + 1);
    assertThrows(CorruptStateException.class, () -> EventCodec.decode(longer));
    byte[] head = previousFormatHead();
    assertThrows(CorruptStateException.class, () -> EventCodec.decodeHead(Arrays.copyOf(head, head.length + 2)));
    assertThrows(CorruptStateException.class, () -> EventCodec.decodeHead(new byte[] {6}));
  }

  private static GroupWindow.Snapshot snapshot() {
    WindowSpec.Key key = new WindowSpec.Key("uid-\u00e9", 12, 1_700_000_000_000L, List.of("amount", "x"), null);
    AggregatorSnapshot.Candidates settled =
        new AggregatorSnapshot.Candidates(
            new long[] {-5, 1_700_000_000_000L}, new BigDecimal[] {new BigDecimal("-1.50"), new BigDecimal("2E+3")});
    AggregatorSnapshot.Candidates none = new AggregatorSnapshot.Candidates(new long[0], new BigDecimal[0]);
    return new GroupWindow.Snapshot(
        new long[] {-10, 0, 0, 1_700_000_000_000L},
        new long[] {3, 0, 7, 1}, // ids in event-time order: out of insertion order
        Map.of(
            "sum",
            new GroupWindow.SavedAggregator(
                new WindowSpec.Identity(key, WindowSpec.Kind.SUM_COUNT, 600_000, 30_000),
                new AggregatorSnapshot.SumCount(1_700_000_000_000L, new BigDecimal("12345678901234567890.01"), 3, 1)),
            "min",
            new GroupWindow.SavedAggregator(
                new WindowSpec.Identity(key, WindowSpec.Kind.MIN, 60_000, 0),
                new AggregatorSnapshot.Extreme(1_700_000_000_000L, 4, settled, none))));
  }

  @Test
  void aWindowSnapshotRoundTripsWithItsHead() {
    byte[] head = previousFormatHead();
    GroupWindow.Snapshot snapshot = snapshot();
    EventCodec.SavedWindow saved = EventCodec.decodeSnapshot(EventCodec.encodeSnapshot(head, snapshot));
    assertArrayEquals(head, saved.head());
    assertEquals(snapshot, saved.snapshot());
    GroupWindow.Snapshot empty = new GroupWindow.Snapshot(new long[0], new long[0], Map.of());
    assertEquals(empty, EventCodec.decodeSnapshot(EventCodec.encodeSnapshot(new byte[0], empty)).snapshot());
  }

  @Test
  void aTruncatedOrLongerSnapshotIsCorruptState() {
    byte[] data = EventCodec.encodeSnapshot(previousFormatHead(), snapshot());
    for (int length : new int[] {0, 1, data.length / 2, data.length - 1, data.length + 1}) {
      byte[] changed = Arrays.copyOf(data, length);
      assertThrows(CorruptStateException.class, () -> EventCodec.decodeSnapshot(changed), "length " + length);
    }
  }

  private static byte[] hexBytes(String hex) {
    byte[] data = new byte[hex.length() / 2];
    for (int i = 0; i < data.length; i++) {
      data[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
    }
    return data;
  }
}
