package io.fraudstream.evaluator.core;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * A group window kept as rows in three key-value tables, so that a transaction costs O(1) row writes per group
 * whatever its window's size: {@code heads} maps the group key to its head ({@link EventCodec#encodeHead}); {@code
 * events} holds one row per live event, key {@code group U+0001 event id}; {@code buckets} one row per bucket of a
 * bucketed rule, key {@code group U+0001 window start seq U+0001 bucket index} (a window start seq names one rule
 * window of the engine).
 *
 * <p>Contract: after {@link #write} of every window changed since its last load, {@link #load} returns a window
 * equal in events, maxima, floor and buckets, and the tables hold no row of an evicted event, a dropped bucket or a
 * deleted group. Each event is written once when it arrives and removed once when it leaves (a projection change,
 * which only a rule change causes, rewrites the group's events).
 */
public final class GroupRows {
  /** One key-value table (a Spark MapState, or a map in tests). */
  public interface Table {
    byte[] get(String key);

    void put(String key, byte[] value);

    void remove(String key);

    /** A table of these three operations. */
    static Table of(
        Function<String, byte[]> get, BiConsumer<String, byte[]> put, Consumer<String> remove) {
      return new Table() {
        @Override
        public byte[] get(String key) {
          return get.apply(key);
        }

        @Override
        public void put(String key, byte[] value) {
          put.accept(key, value);
        }

        @Override
        public void remove(String key) {
          remove.accept(key);
        }
      };
    }
  }

  private static final char SEPARATOR = '\u0001';

  private final Table heads;
  private final Table events;
  private final Table buckets;

  public GroupRows(Table heads, Table events, Table buckets) {
    this.heads = heads;
    this.events = events;
    this.buckets = buckets;
  }

  /** Reads the group's events back from their rows, for a window that paged them out ({@link GroupWindow#pageOut}). */
  public EventPager pager(String groupKey) {
    return id -> {
      byte[] event = events.get(eventKey(groupKey, id));
      return event == null ? null : EventCodec.decode(event);
    };
  }

  /** The group's window as last written, with this table's {@link #pager}; null if the group has no head. */
  public GroupWindow load(String groupKey) {
    byte[] head = heads.get(groupKey);
    if (head == null) {
      return null;
    }
    EventCodec.Head decoded = EventCodec.decodeHead(head);
    EventPager pager = pager(groupKey);
    List<StoredEvent> stored = new ArrayList<>();
    for (long id = decoded.minLiveId(); id < decoded.nextEventId(); id++) {
      StoredEvent event = pager.load(id);
      if (event != null) {
        stored.add(event);
      }
    }
    Map<WindowSpec.Key, Map<Long, Bucket>> held = new HashMap<>();
    for (GroupWindow.BucketRange range : decoded.buckets()) {
      Map<Long, Bucket> byIndex = new TreeMap<>();
      for (long index = range.first(); index <= range.last(); index++) {
        byte[] bucket = buckets.get(bucketKey(groupKey, range.key(), index));
        if (bucket != null) {
          byIndex.put(index, EventCodec.decodeBucket(bucket));
        }
      }
      held.put(range.key(), byIndex);
    }
    GroupWindow window =
        GroupWindow.restore(
            decoded.fieldNames(),
            stored,
            decoded.maxEventTimeMs(),
            decoded.floorMs(),
            decoded.nextEventId(),
            decoded.maxIngestTsMs(),
            held);
    window.attachPager(pager);
    return window;
  }

  /** Writes what changed in the group's window since its previous write: new events, evictions, buckets, head. */
  public void write(String groupKey, GroupWindow window) {
    List<StoredEvent> journal = window.takeJournal();
    Iterable<StoredEvent> writes = window.takeReprojected() ? window.events() : journal;
    for (StoredEvent event : writes) {
      events.put(eventKey(groupKey, event.id()), EventCodec.encode(event));
    }
    for (long id : window.takeEvicted()) {
      events.remove(eventKey(groupKey, id));
    }
    for (GroupWindow.BucketRow row : window.takeBucketChanges()) {
      String key = bucketKey(groupKey, row.key(), row.index());
      if (row.bucket() == null) {
        buckets.remove(key);
      } else {
        buckets.put(key, EventCodec.encodeBucket(row.bucket()));
      }
    }
    heads.put(groupKey, EventCodec.encodeHead(window));
  }

  /** Removes every row of the group. */
  public void delete(String groupKey) {
    byte[] head = heads.get(groupKey);
    if (head == null) {
      return;
    }
    EventCodec.Head decoded = EventCodec.decodeHead(head);
    for (long id = decoded.minLiveId(); id < decoded.nextEventId(); id++) {
      events.remove(eventKey(groupKey, id));
    }
    for (GroupWindow.BucketRange range : decoded.buckets()) {
      for (long index = range.first(); index <= range.last(); index++) {
        buckets.remove(bucketKey(groupKey, range.key(), index));
      }
    }
    heads.remove(groupKey);
  }

  /** The largest event time a group head records (null before the first event). */
  public static Long maxEventTimeMs(byte[] head) {
    return EventCodec.decodeHead(head).maxEventTimeMs();
  }

  /** Whether {@code rowKey} is a row of the group {@code groupKey} (in the events or buckets table). */
  public static boolean belongsTo(String rowKey, String groupKey) {
    return rowKey.length() > groupKey.length()
        && rowKey.startsWith(groupKey)
        && rowKey.charAt(groupKey.length()) == SEPARATOR;
  }

  private static String eventKey(String groupKey, long id) {
    return groupKey + SEPARATOR + id;
  }

  private static String bucketKey(String groupKey, WindowSpec.Key key, long index) {
    return groupKey + SEPARATOR + key.windowStartSeq() + SEPARATOR + index;
  }
}
