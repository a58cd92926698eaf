package io.fraudstream.evaluator.core;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetEncoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.IntPredicate;

/**
 * The byte form of one stored event and of one bucket slot (state rows), and of a group window's head.
 *
 * <p>Compact binary (varints); values round-trip exactly: decimals keep their digits and scale, integers of any
 * size, strings any UTF-16 content, {@link Missing#MISSING} distinct from JSON null, lists and objects in order.
 * {@code decode(encode(e)).equals(e)} for every event the engine stores. Malformed bytes raise {@link
 * CorruptStateException}.
 */
public final class EventCodec {
  private static final int EVENT_FORMAT = 1;
  private static final int BUCKET_FORMAT = 1;
  private static final int SLOT_FORMAT = 2;
  private static final int SNAPSHOT_FORMAT = 1;
  private static final int SUM_COUNT_STATE = 0;
  private static final int EXTREME_STATE = 1;
  private static final int HEAD_FORMAT = 4;
  private static final int HEAD_FORMAT_WITH_WINDOW_BUCKETS = 3;
  private static final int HEAD_FORMAT_WITHOUT_BUCKETS = 2;
  private static final int HEAD_FORMAT_WITHOUT_INGEST = 1;
  private static final int MISSING = 0;
  private static final int NULL = 1;
  private static final int TRUE = 2;
  private static final int FALSE = 3;
  private static final int UTF8 = 4;
  private static final int UTF16 = 5;
  private static final int INTEGER = 6;
  private static final int DECIMAL = 7;
  private static final int LIST = 8;
  private static final int OBJECT = 9;

  /**
   * A group window's head: projection, maxima, floor, id counter, smallest live id (nextEventId if none) and, per
   * precision, the span of its bucket slots' indices ({@link GroupWindow#bucketSpans}). Heads of the previous formats
   * read with a null maxIngestTsMs (format 1), no buckets (formats 1 and 2), and, for format 3, whose buckets were
   * kept one row per rule window and index, the spans of those rows in {@code windowBuckets} (empty otherwise).
   */
  public record Head(
      List<String> fieldNames,
      Long maxEventTimeMs,
      Long floorMs,
      long nextEventId,
      long minLiveId,
      Long maxIngestTsMs,
      List<GroupWindow.BucketSpan> buckets,
      List<WindowBuckets> windowBuckets) {}

  /** A window's {@link GroupWindow.Snapshot} and the bytes of the head it goes with ({@link #encodeHead}). */
  public record SavedWindow(byte[] head, GroupWindow.Snapshot snapshot) {}

  /** The index span of one rule window's bucket rows, as heads of format 3 recorded them. */
  public record WindowBuckets(GroupWindow.BucketsOf window, long first, long last) {}

  private EventCodec() {}

  public static byte[] encode(StoredEvent event) {
    Writer out = new Writer();
    out.varint(EVENT_FORMAT);
    out.varlong(event.id());
    out.varlong(event.eventTimeMs());
    out.varlong(event.ingestTsMs());
    out.varlong(event.partition());
    out.varlong(event.offset());
    out.varlong(event.ruleSeq());
    out.varint(event.size());
    for (int i = 0; i < event.size(); i++) {
      out.value(event.value(i));
    }
    return out.toByteArray();
  }

  public static StoredEvent decode(byte[] data) {
    return read(
        data,
        "stored event",
        format -> format == EVENT_FORMAT,
        (in, format) -> {
          long id = in.varlong();
          long eventTimeMs = in.varlong();
          long ingestTsMs = in.varlong();
          int partition = Math.toIntExact(in.varlong());
          long offset = in.varlong();
          long ruleSeq = in.varlong();
          Object[] values = new Object[in.count()];
          for (int i = 0; i < values.length; i++) {
            values[i] = in.value();
          }
          return StoredEvent.owning(id, eventTimeMs, ingestTsMs, partition, offset, ruleSeq, values);
        });
  }

  public static byte[] encodeHead(GroupWindow window) {
    Writer out = new Writer();
    out.varint(HEAD_FORMAT);
    out.varint(window.fieldNames().size());
    for (String name : window.fieldNames()) {
      out.string(name);
    }
    out.optionalLong(window.maxEventTimeMs());
    out.optionalLong(window.floorMs());
    out.varlong(window.nextEventId());
    out.varlong(window.minLiveId());
    out.optionalLong(window.maxIngestTsMs());
    List<GroupWindow.BucketSpan> spans = window.bucketSpans();
    out.varint(spans.size());
    for (GroupWindow.BucketSpan span : spans) {
      out.varlong(span.precisionMs());
      out.varlong(span.first());
      out.varlong(span.last());
    }
    return out.toByteArray();
  }

  /**
   * One bucket slot's row ({@link GroupWindow.BucketSlot}): the bucket of each rule window holding one there, by
   * window start seq. {@link #decodeSlot} reads it back equal.
   */
  public static byte[] encodeSlot(SortedMap<Long, Bucket> buckets) {
    Writer out = new Writer();
    out.varint(SLOT_FORMAT);
    out.varint(buckets.size());
    buckets.forEach((seq, bucket) -> {
      out.varlong(seq);
      out.bucket(bucket);
    });
    return out.toByteArray();
  }

  public static SortedMap<Long, Bucket> decodeSlot(byte[] data) {
    return read(
        data,
        "bucket slot",
        format -> format == SLOT_FORMAT,
        (in, format) -> {
          SortedMap<Long, Bucket> buckets = new TreeMap<>();
          for (int i = in.count(); i > 0; i--) {
            long seq = in.varlong();
            if (buckets.put(seq, in.bucket()) != null) {
              throw new CorruptStateException("window " + seq + " twice in a bucket slot");
            }
          }
          if (buckets.isEmpty()) {
            throw new CorruptStateException("empty bucket slot");
          }
          return buckets;
        });
  }

  public static byte[] encodeBucket(Bucket bucket) {
    Writer out = new Writer();
    out.varint(BUCKET_FORMAT);
    out.bucket(bucket);
    return out.toByteArray();
  }

  public static Bucket decodeBucket(byte[] data) {
    return read(data, "bucket", format -> format == BUCKET_FORMAT, (in, format) -> in.bucket());
  }

  /**
   * A snapshot row: {@code head}, then the snapshot, event times and ids as differences from the previous one.
   * {@link #decodeSnapshot} reads back an equal snapshot and head.
   */
  public static byte[] encodeSnapshot(byte[] head, GroupWindow.Snapshot snapshot) {
    Writer out = new Writer();
    out.varint(SNAPSHOT_FORMAT);
    out.blob(head);
    long[] times = snapshot.times();
    long[] ids = snapshot.ids();
    out.varint(times.length);
    for (int i = 0; i < times.length; i++) {
      out.varlong(i == 0 ? times[i] : times[i] - times[i - 1]);
      out.varlong(i == 0 ? ids[i] : ids[i] - ids[i - 1]);
    }
    out.varint(snapshot.aggregators().size());
    snapshot.aggregators().forEach((slot, saved) -> {
      out.string(slot);
      WindowSpec.Identity spec = saved.spec();
      out.value(spec.key().uid());
      out.varlong(spec.key().windowStartSeq());
      out.varlong(spec.key().windowStartTsMs());
      out.value(spec.key().fieldNames());
      out.optionalLong(spec.key().precisionMs());
      out.varint(spec.kind().ordinal());
      out.varlong(spec.windowMs());
      out.varlong(spec.latenessMs());
      if (saved.state() instanceof AggregatorSnapshot.SumCount sumCount) {
        out.varint(SUM_COUNT_STATE);
        out.varlong(sumCount.maxMs());
        out.value(sumCount.total());
        out.varlong(sumCount.count());
        out.varlong(sumCount.front());
      } else {
        AggregatorSnapshot.Extreme extreme = (AggregatorSnapshot.Extreme) saved.state();
        out.varint(EXTREME_STATE);
        out.varlong(extreme.maxMs());
        out.varlong(extreme.settledEnd());
        out.candidates(extreme.settled());
        out.candidates(extreme.tail());
      }
    });
    return out.toByteArray();
  }

  public static SavedWindow decodeSnapshot(byte[] data) {
    return read(
        data,
        "window snapshot",
        format -> format == SNAPSHOT_FORMAT,
        (in, format) -> {
          byte[] head = in.blob();
          int size = in.count();
          long[] times = new long[size];
          long[] ids = new long[size];
          for (int i = 0; i < size; i++) {
            times[i] = in.varlong() + (i == 0 ? 0 : times[i - 1]);
            ids[i] = in.varlong() + (i == 0 ? 0 : ids[i - 1]);
          }
          Map<String, GroupWindow.SavedAggregator> aggregators = new LinkedHashMap<>();
          for (int i = in.count(); i > 0; i--) {
            String slot = (String) in.value();
            String uid = (String) in.value();
            long windowStartSeq = in.varlong();
            long windowStartTsMs = in.varlong();
            List<String> fieldNames = in.strings();
            Long precisionMs = in.optionalLong();
            WindowSpec.Kind kind = WindowSpec.Kind.values()[in.varint()];
            WindowSpec.Key key = new WindowSpec.Key(uid, windowStartSeq, windowStartTsMs, fieldNames, precisionMs);
            WindowSpec.Identity spec = new WindowSpec.Identity(key, kind, in.varlong(), in.varlong());
            int tag = in.varint();
            AggregatorSnapshot state =
                switch (tag) {
                  case SUM_COUNT_STATE ->
                      new AggregatorSnapshot.SumCount(in.varlong(), in.decimal(), in.varlong(), in.varlong());
                  case EXTREME_STATE ->
                      new AggregatorSnapshot.Extreme(in.varlong(), in.varlong(), in.candidates(), in.candidates());
                  default -> throw new CorruptStateException("unknown aggregator state " + tag);
                };
            if (aggregators.put(slot, new GroupWindow.SavedAggregator(spec, state)) != null) {
              throw new CorruptStateException("slot " + slot + " twice in a window snapshot");
            }
          }
          return new SavedWindow(head, new GroupWindow.Snapshot(times, ids, aggregators));
        });
  }

  public static Head decodeHead(byte[] data) {
    return read(
        data,
        "group head",
        format -> format >= HEAD_FORMAT_WITHOUT_INGEST && format <= HEAD_FORMAT,
        (in, format) -> {
          List<String> names = new ArrayList<>();
          for (int i = in.count(); i > 0; i--) {
            names.add((String) in.value());
          }
          Long maxMs = in.optionalLong();
          Long floorMs = in.optionalLong();
          long nextEventId = in.varlong();
          long minLiveId = in.varlong();
          Long maxIngestMs = format >= HEAD_FORMAT_WITHOUT_BUCKETS ? in.optionalLong() : null;
          List<GroupWindow.BucketSpan> spans = new ArrayList<>();
          List<WindowBuckets> windowBuckets = new ArrayList<>();
          for (int i = format >= HEAD_FORMAT_WITH_WINDOW_BUCKETS ? in.count() : 0; i > 0; i--) {
            if (format == HEAD_FORMAT) {
              spans.add(new GroupWindow.BucketSpan(in.varlong(), in.varlong(), in.varlong()));
              continue;
            }
            in.value(); // the rule's uid
            long seq = in.varlong();
            in.varlong(); // its window start time
            GroupWindow.BucketsOf window = new GroupWindow.BucketsOf(seq, in.varlong());
            windowBuckets.add(new WindowBuckets(window, in.varlong(), in.varlong()));
          }
          return new Head(
              List.copyOf(names),
              maxMs,
              floorMs,
              nextEventId,
              minLiveId,
              maxIngestMs,
              List.copyOf(spans),
              List.copyOf(windowBuckets));
        });
  }

  /** What a decoder reads after the row's format number. */
  private interface Body<T> {
    T read(Reader in, int format);
  }

  /**
   * The row {@code data} read by {@code body} after its format number, which {@code known} must accept, to its last
   * byte. Whatever is wrong with the bytes raises {@link CorruptStateException} naming {@code what}.
   */
  private static <T> T read(byte[] data, String what, IntPredicate known, Body<T> body) {
    try {
      Reader in = new Reader(data);
      int format = in.varint();
      if (!known.test(format)) {
        throw new CorruptStateException("unknown " + what + " format " + format);
      }
      T value = body.read(in, format);
      in.end();
      return value;
    } catch (CorruptStateException exc) {
      throw exc;
    } catch (RuntimeException exc) {
      throw new CorruptStateException("unreadable " + what + ": " + exc, exc);
    }
  }

  /**
   * The bytes of one row as they are written, by one thread. Not a ByteArrayOutputStream: its writes are synchronized,
   * a lock for every byte of every varint, which with its growth from 32 bytes was 9% of the detector's CPU samples
   * at 2 500 tx/s (docs/BENCHMARKS.md, "A row writer without locks").
   */
  private static final class Writer {
    private byte[] buffer = new byte[64];
    private int size;

    /** Room for {@code count} more bytes: the buffer at least doubles when it grows. */
    private void reserve(int count) {
      if (buffer.length - size < count) {
        buffer = Arrays.copyOf(buffer, Math.max(2 * buffer.length, size + count));
      }
    }

    private void write(int b) {
      reserve(1);
      buffer[size++] = (byte) b;
    }

    private void writeBytes(byte[] data) {
      reserve(data.length);
      System.arraycopy(data, 0, buffer, size, data.length);
      size += data.length;
    }

    byte[] toByteArray() {
      return Arrays.copyOf(buffer, size);
    }

    void varlong(long value) {
      long zigzag = (value << 1) ^ (value >> 63);
      while ((zigzag & ~0x7FL) != 0) {
        write((int) ((zigzag & 0x7F) | 0x80));
        zigzag >>>= 7;
      }
      write((int) zigzag);
    }

    void varint(int value) {
      varlong(value);
    }

    void optionalLong(Long value) {
      if (value == null) {
        write(0);
      } else {
        write(1);
        varlong(value);
      }
    }

    void bucket(Bucket bucket) {
      value(bucket.total());
      varlong(bucket.count());
      value(bucket.low());
      value(bucket.high());
    }

    void candidates(AggregatorSnapshot.Candidates candidates) {
      varint(candidates.times().length);
      for (int i = 0; i < candidates.times().length; i++) {
        varlong(candidates.times()[i]);
        value(candidates.values()[i]);
      }
    }

    void blob(byte[] data) {
      varint(data.length);
      writeBytes(data);
    }

    void string(String s) {
      if (!Json.hasSurrogate(s)) { // UTF-8 encodes every other string exactly
        write(UTF8);
        blob(s.getBytes(StandardCharsets.UTF_8));
        return;
      }
      CharsetEncoder encoder =
          StandardCharsets.UTF_8
              .newEncoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT);
      try {
        ByteBuffer encoded = encoder.encode(CharBuffer.wrap(s));
        byte[] data = new byte[encoded.remaining()];
        encoded.get(data);
        write(UTF8);
        blob(data);
      } catch (CharacterCodingException exc) { // lone surrogates: keep the UTF-16 code units
        write(UTF16);
        varint(s.length());
        for (int i = 0; i < s.length(); i++) {
          varint(s.charAt(i));
        }
      }
    }

    void value(Object value) {
      if (value == Missing.MISSING) {
        write(MISSING);
      } else if (value == null) {
        write(NULL);
      } else if (value instanceof Boolean b) {
        write(b ? TRUE : FALSE);
      } else if (value instanceof String s) {
        string(s);
      } else if (value instanceof BigInteger i) {
        write(INTEGER);
        blob(i.toByteArray());
      } else if (value instanceof BigDecimal d) {
        write(DECIMAL);
        varint(d.scale());
        blob(d.unscaledValue().toByteArray());
      } else if (value instanceof List<?> list) {
        write(LIST);
        varint(list.size());
        for (Object item : list) {
          value(item);
        }
      } else if (value instanceof Map<?, ?> map) {
        write(OBJECT);
        varint(map.size());
        for (Map.Entry<?, ?> entry : map.entrySet()) {
          string((String) entry.getKey());
          value(entry.getValue());
        }
      } else {
        throw new IllegalArgumentException("cannot encode " + value.getClass().getName());
      }
    }
  }

  private static final class Reader {
    private final ByteBuffer in;

    Reader(byte[] data) {
      in = ByteBuffer.wrap(data);
    }

    long varlong() {
      long zigzag = 0;
      for (int shift = 0; ; shift += 7) {
        if (shift > 63) {
          throw new CorruptStateException("varint too long");
        }
        byte b = in.get();
        zigzag |= (long) (b & 0x7F) << shift;
        if ((b & 0x80) == 0) {
          break;
        }
      }
      return (zigzag >>> 1) ^ -(zigzag & 1);
    }

    int varint() {
      return Math.toIntExact(varlong());
    }

    int count() {
      int count = varint();
      if (count < 0 || count > in.remaining()) {
        throw new CorruptStateException("bad length " + count);
      }
      return count;
    }

    Long optionalLong() {
      return in.get() == 0 ? null : varlong();
    }

    Bucket bucket() {
      BigDecimal total = (BigDecimal) value();
      long count = varlong();
      BigDecimal low = (BigDecimal) value();
      BigDecimal high = (BigDecimal) value();
      if (total == null || low == null || high == null || count < 1) {
        throw new CorruptStateException("incomplete bucket");
      }
      return new Bucket(total, count, low, high);
    }

    BigDecimal decimal() {
      if (value() instanceof BigDecimal decimal) {
        return decimal;
      }
      throw new CorruptStateException("a decimal expected");
    }

    List<String> strings() {
      List<String> strings = new ArrayList<>();
      if (!(value() instanceof List<?> list)) {
        throw new CorruptStateException("a list of strings expected");
      }
      for (Object item : list) {
        strings.add((String) item);
      }
      return List.copyOf(strings);
    }

    AggregatorSnapshot.Candidates candidates() {
      int size = count();
      long[] times = new long[size];
      BigDecimal[] values = new BigDecimal[size];
      for (int i = 0; i < size; i++) {
        times[i] = varlong();
        values[i] = decimal();
      }
      return new AggregatorSnapshot.Candidates(times, values);
    }

    byte[] blob() {
      byte[] data = new byte[count()];
      in.get(data);
      return data;
    }

    void end() {
      if (in.hasRemaining()) {
        throw new CorruptStateException(in.remaining() + " trailing bytes");
      }
    }

    Object value() {
      int tag = in.get();
      switch (tag) {
        case MISSING:
          return Missing.MISSING;
        case NULL:
          return null;
        case TRUE:
          return Boolean.TRUE;
        case FALSE:
          return Boolean.FALSE;
        case UTF8:
          return new String(blob(), StandardCharsets.UTF_8);
        case UTF16:
          {
            char[] chars = new char[count()];
            for (int i = 0; i < chars.length; i++) {
              chars[i] = (char) varint();
            }
            return new String(chars);
          }
        case INTEGER:
          return new BigInteger(blob());
        case DECIMAL:
          {
            int scale = varint();
            return new BigDecimal(new BigInteger(blob()), scale);
          }
        case LIST:
          {
            List<Object> list = new ArrayList<>();
            for (int i = count(); i > 0; i--) {
              list.add(value());
            }
            return list;
          }
        case OBJECT:
          {
            Map<String, Object> map = new LinkedHashMap<>();
            for (int i = count(); i > 0; i--) {
              String key = (String) value();
              map.put(key, value());
            }
            return map;
          }
        default:
          throw new CorruptStateException("unknown value tag " + tag);
      }
    }
  }
}
