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
    assertEquals(event.amounts(), decoded.amounts(), "derived numbers follow the values");
  }

  @Test
  void extremeCoordinatesRoundTrip() {
    StoredEvent event = new StoredEvent(Long.MAX_VALUE, 0, Long.MIN_VALUE, Integer.MAX_VALUE, -1, 0, List.of());
    assertEquals(event, EventCodec.decode(EventCodec.encode(event)));
  }

  @Test
  void aHeadRoundTrips() {
    StoredEvent stored = event(List.of("x"));
    WindowSpec.Key key = new WindowSpec.Key("u\u00e9", 3, -7, null, 3_600_000L);
    Bucket bucket = new Bucket(new BigDecimal("-1.50"), 2, new BigDecimal("-2"), BigDecimal.ONE);
    GroupWindow window =
        GroupWindow.restore(
            List.of("f\u00e9"),
            List.of(stored),
            1_700_000_000_000L,
            null,
            8,
            5L,
            Map.of(key, Map.of(-4L, bucket, 472_222L, bucket)));
    EventCodec.Head head = EventCodec.decodeHead(EventCodec.encodeHead(window));
    List<GroupWindow.BucketRange> ranges = List.of(new GroupWindow.BucketRange(key, -4L, 472_222L));
    assertEquals(new EventCodec.Head(List.of("f\u00e9"), 1_700_000_000_000L, null, 8, 7, 5L, ranges), head);
    GroupWindow empty = new GroupWindow(List.of());
    assertEquals(
        new EventCodec.Head(List.of(), null, null, 0, 0, null, List.of()),
        EventCodec.decodeHead(EventCodec.encodeHead(empty)));
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
        new EventCodec.Head(List.of("payerId"), 100L, null, 5, 3, null, List.of()),
        EventCodec.decodeHead(previousFormatHead()));
  }

  @Test
  void theCurrentFormatIsWhatTheEncoderWrites() {
    GroupWindow window = GroupWindow.restore(List.of("payerId"), List.of(), 100L, null, 5, null, Map.of());
    byte[] current = EventCodec.encodeHead(window);
    byte[] previous = previousFormatHead();
    assertEquals(6, current[0], "format 3");
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

  private static byte[] hexBytes(String hex) {
    byte[] data = new byte[hex.length() / 2];
    for (int i = 0; i < data.length; i++) {
      data[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
    }
    return data;
  }
}
